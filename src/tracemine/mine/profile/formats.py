"""What strings look like: formats mined from values, id shapes turned into patterns, and
the values that look personal and must never be exported as literals.

A *shape* keeps punctuation and maps ``a-z`` to ``a``, ``A-Z`` to ``A`` and digits to ``9``
(``#W0038412`` → ``#A9999999``). Profiles and pattern checks compute shapes once per
distinct string (:func:`register_shapes`, :func:`shapes_sql`); they are turned into a
pattern here.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import groupby

import duckdb
import numpy as np
import pyarrow as pa

from tracemine.ingest.store import sql_string
from tracemine.model.personal import personal_kind


def words(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text`` (long vocabularies read as prose)."""
    return frozenset(text.split())


LOWER = "abcdefghijklmnopqrstuvwxyz"
UPPER = LOWER.upper()
DIGITS = "0123456789"

# ISO 4217 active codes: a currency format is only claimed for real codes, so "ABC"
# status codes do not become currencies
CURRENCIES = words(
    "AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD "
    "BTN BWP BYN BZD CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB "
    "EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK "
    "JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA "
    "MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK "
    "PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN "
    "SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VES VND VUV WST "
    "XAF XCD XOF XPF YER ZAR ZMW ZWL"
)

FORMAT_NAMES = ("date-time", "date", "uuid", "email", "uri", "currency")
"""Formats the miner recognises, in the order they are tried (names as the monitor reads)."""

_SQL_TESTS = {
    "date-time": r"len BETWEEN 16 AND 35 AND regexp_full_match(str, "
    r"'\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}:?\d{2})?')",
    "date": r"len = 10 AND regexp_full_match(str, '\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])')",
    "uuid": r"len = 36 AND regexp_full_match(str, '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-"
    r"[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}')",
    "email": r"regexp_full_match(str, '[^@\s]+@[^@\s.]+(\.[^@\s.]+)+')",
    "uri": r"regexp_full_match(str, '[A-Za-z][A-Za-z0-9+.\-]*://\S+')",
}
_PY_TESTS = {name: re.compile(text.split("'")[1]) for name, text in _SQL_TESTS.items()}


def guess_format(low: str | None, high: str | None) -> str | None:
    """The format both extreme strings of a path have (a cheap first guess, confirmed on
    every value by :func:`format_sql`)."""
    if not low or not high:
        return None
    for name in FORMAT_NAMES:
        if name == "currency":
            if low in CURRENCIES and high in CURRENCIES:
                return name
        elif _PY_TESTS[name].fullmatch(low) and _PY_TESTS[name].fullmatch(high):
            return name
    return None


def format_sql(formats: dict[str, str]) -> str:
    """SQL condition over a ``json_values`` row: its string has the format guessed for its
    path. One test per row at most: the path picks it."""
    # the codes as one alternation: DuckDB compares a value with each item of an IN list
    # in turn (about 160 here), where the regular expression is one automaton
    codes = "|".join(sorted(CURRENCIES))
    tests = {**_SQL_TESTS, "currency": f"len = 3 AND regexp_full_match(str, '(?:{codes})')"}
    whens = []
    for name in FORMAT_NAMES:
        paths = sorted(p for p, f in formats.items() if f == name)
        if paths:
            quoted = ", ".join(sql_string(p) for p in paths)
            whens.append(f"WHEN path IN ({quoted}) THEN coalesce({tests[name]}, FALSE)")
    if not whens:
        return "FALSE"
    return f"(jtype = 'string' AND CASE {' '.join(whens)} ELSE FALSE END)"


def shape_sql(column: str = "str") -> str:
    """SQL expression: the shape of a string column (three replacements: DuckDB's
    ``translate`` is far slower on long alphabets)."""
    inner = f"regexp_replace({column}, '[a-z]', 'a', 'g')"
    return f"regexp_replace(regexp_replace({inner}, '[A-Z]', 'A', 'g'), '[0-9]', '9', 'g')"


def shapes_sql(strings: str) -> str:
    """SQL relation ``(str, shape)``: each distinct non-null ``str`` of the relation
    ``strings`` with its shape. Ids repeat across calls, so shaping the distinct strings
    and joining back costs a fraction of shaping every value. Use it as a
    ``MATERIALIZED`` CTE: inlined, the optimizer moves the replacements after the join."""
    return (
        f"SELECT str, {shape_sql()} AS shape FROM (SELECT DISTINCT str FROM {strings}) d "
        "WHERE str IS NOT NULL"
    )


def shape(text: str) -> str:
    return text.translate(_SHAPE_TABLE)


_SHAPE_TABLE = str.maketrans(LOWER + UPPER + DIGITS, "a" * 26 + "A" * 26 + "9" * 10)
# the same mapping on UTF-8 bytes: the letters and digits are ASCII, and no byte of a
# multi-byte character is below 0x80, so mapping bytes maps characters
_SHAPE_BYTES = np.arange(256, dtype=np.uint8)
for _chars, _to in ((LOWER, "a"), (UPPER, "A"), (DIGITS, "9")):
    _SHAPE_BYTES[[ord(c) for c in _chars]] = ord(_to)


def _shapes(strings: pa.Array) -> pa.Array:
    validity, offsets, data = strings.buffers()
    raw = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    mapped = pa.py_buffer(_SHAPE_BYTES[raw])
    return pa.Array.from_buffers(
        strings.type, len(strings), [validity, offsets, mapped], strings.null_count,
        strings.offset,
    )  # fmt: skip


def register_shapes(con: duckdb.DuckDBPyConnection, strings_sql: str, name: str) -> None:
    """Register as ``name`` the relation ``(str, shape)``: each string the query
    ``strings_sql`` returns (distinct, not null) with its shape. The shapes are mapped in
    memory a byte at a time, where SQL takes three regular-expression replacements a
    string (about a quarter of the value listing's time on wide results)."""
    table = con.sql(strings_sql).to_arrow_table()
    strings = table.column(0) if table is not None else pa.chunked_array([], pa.string())
    if not pa.types.is_string(strings.type) and not pa.types.is_large_string(strings.type):
        strings = strings.cast(pa.large_string())
    shapes = pa.chunked_array([_shapes(chunk) for chunk in strings.chunks], strings.type)
    con.register(name, pa.table({"str": strings, "shape": shapes}))


_CLASS_REGEX = {"9": "0-9", "A": "A-Z", "a": "a-z"}

# -- patterns ------------------------------------------------------------------------------


def _runs(text: str, coarse: bool) -> list[tuple[str, int]]:
    """Runs of one class: fine keeps a, A and 9 apart; coarse merges letters and digits
    into one alphanumeric run whose class is the union of what it holds."""
    if not coarse:
        return [(char, len(list(group))) for char, group in groupby(text)]
    out: list[tuple[str, int]] = []
    for is_alnum, group in groupby(text, key=lambda c: c in "aA9"):
        chars = "".join(group)
        if is_alnum:
            out.append(("".join(sorted(set(chars))), len(chars)))
        else:
            out.extend((char, len(list(same))) for char, same in groupby(chars))
    return out


def pattern_from_shapes(shapes: list[str], prefix: str = "") -> str | None:
    """A regular expression every string of these shapes matches, or None when the shapes
    do not share one structure. ``prefix`` (the common literal start of the values) is kept
    literally up to its first digit: ``#W`` + 7 digits → ``^#W[0-9]{7}$``."""
    if not shapes:
        return None
    for coarse in (False, True):
        runs = [_runs(s, coarse) for s in shapes]
        classes = {tuple(cls for cls, _ in r) for r in runs}
        if len(classes) == 1:
            break
    else:
        return None
    (sequence,) = classes
    lows = [min(r[i][1] for r in runs) for i in range(len(sequence))]
    highs = [max(r[i][1] for r in runs) for i in range(len(sequence))]
    literal = re.split(r"[0-9]", prefix, maxsplit=1)[0]
    parts, position = ["^"], 0
    for cls, low, high in zip(sequence, lows, highs, strict=True):
        remaining = len(literal) - position
        # a literal covers a whole fixed-length run, or the start of a single-class run
        # that is never shorter than what the literal takes of it
        take = 0
        if remaining > 0 and len(cls) == 1:
            take = high if low == high and remaining >= high else min(remaining, low)
        if take:
            parts.append(_escape(literal[position : position + take]))
            position += take
            low, high = low - take, high - take
            if high == 0:
                continue
        literal = literal[:position]  # the literal ends at the first run it does not cover
        if cls not in "aA9" and len(cls) == 1:
            body = _escape(cls)
        else:
            body = "[" + "".join(_CLASS_REGEX[c] for c in sorted(cls, key="9Aa".index)) + "]"
        count = "" if low == high == 1 else f"{{{low}}}" if low == high else f"{{{low},{high}}}"
        parts.append(body + count)
    return "".join(parts) + "$"


def literal_prefix(regex: str) -> str:
    """The literal text a pattern made by :func:`pattern_from_shapes` starts with."""
    out, position = [], 1 if regex.startswith("^") else 0
    while position < len(regex):
        char = regex[position]
        step = 2 if char == "\\" else 1
        if char in "[$" or regex[position + step : position + step + 1] == "{":
            break
        out.append(regex[position + step - 1])
        position += step
    return "".join(out)


def _escape(text: str) -> str:
    """Escape what a regular expression would read as syntax, and nothing else (``#W``
    stays ``#W`` so the pattern reads like the ids it describes)."""
    return "".join("\\" + c if c in _SPECIAL else c for c in text)


_SPECIAL = frozenset("\\.^$*+?{}[]|()")


def common_prefix(low: str | None, high: str | None) -> str:
    """The prefix every string between ``low`` and ``high`` shares (ordering is by code
    point, as DuckDB's min/max of VARCHAR)."""
    if not low or not high:
        return ""
    size = 0
    for a, b in zip(low, high, strict=False):
        if a != b:
            break
        size += 1
    return low[:size]


# -- personal-looking values ---------------------------------------------------------------

PERSONAL_TOKENS = words(
    "name names email mail phone mobile tel address street city zip postal postcode card "
    "pan iban ssn dob birth birthday first last surname customer user username person "
    "contact recipient owner author passport"
)


PERSONAL_NUMBERS = words(
    "phone mobile tel telephone fax zip postal postcode card pan iban ssn passport msisdn"
)
"""Path words under which an integer is a person's number, not a count or an amount (a
bare JSON number is otherwise never read as a phone: :mod:`tracemine.model.personal`)."""


def looks_personal(value: object, tokens: frozenset[str] = frozenset()) -> bool:
    """True for values never to be listed literally: what
    :func:`tracemine.model.personal.personal_kind` names (emails, ``Name <email>``, card,
    phone and IBAN numbers, names in any script and case), and any string under a path
    whose name says it is about a person."""
    if isinstance(value, str) and tokens & PERSONAL_TOKENS:
        return True
    if isinstance(value, int) and not isinstance(value, bool) and tokens & PERSONAL_NUMBERS:
        return True  # a phone or a card stored as a JSON number is as personal as its text
    return personal_kind(value) is not None


@lru_cache(maxsize=1 << 16)  # asked per pair of paths: a wide tool has thousands
def name_tokens(path: str) -> frozenset[str]:
    """Lower-case words of the last named step of a path (``args.orderId`` → order, id),
    with a plural ``s`` dropped, so ``statuses`` and ``status`` meet."""
    steps = re.findall(r"[A-Za-z][A-Za-z0-9_\-]*", path.split("(")[-1])
    if len(steps) < 2:
        return frozenset()
    words = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", steps[-1])
    out = set()
    for word in words:
        word = word.lower()
        if word.endswith("ses") or word.endswith("xes"):
            word = word[:-2]
        elif word.endswith("s") and len(word) > 3 and not word.endswith("ss"):
            word = word[:-1]
        out.add(word)
    return frozenset(out)
