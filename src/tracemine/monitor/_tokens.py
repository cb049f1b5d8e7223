"""Words of a string, as ``shares_token`` compares them: lower case, split at anything
that is not a letter or a digit (spaces, punctuation, ``-``, ``_``, ``/``), words of one
character dropped. ``Gare de Lyon`` and ``Paris-Gare-de-Lyon`` share ``gare``, ``de`` and
``lyon``; ``LISBON`` and ``cityName: Lisbon`` share ``lisbon``.

Mining counts the same words in SQL (:data:`TOKENS_SQL`), so a contract mined there is the
one this module checks.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[^\W_]+")
MIN_LENGTH = 2


def tokens(text: str) -> frozenset[str]:
    """The words of ``text`` (see the module)."""
    return frozenset(w for w in _WORD.findall(text.lower()) if len(w) >= MIN_LENGTH)


def tokens_sql(expr: str) -> str:
    """DuckDB expression: the list of words of the string ``expr``, as :func:`tokens`."""
    return (
        f"list_filter(regexp_extract_all(lower({expr}), '[\\p{{L}}\\p{{N}}]+'), "
        f"lambda w: length(w) >= {MIN_LENGTH})"
    )
