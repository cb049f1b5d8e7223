"""Canonical arguments and the replay key.

Two calls hit the same recording when their tool is the same and their arguments are the
same *as JSON*: object keys sorted, numbers compared by value (``1 == 1.0``), strings in
Unicode NFC, and the arguments a tool says to ignore (request ids, timestamps) removed.
The key shown to people is ``tool#`` and the first 16 hex digits of the SHA-256 of that
canonical text; lookups use the text itself, which is cheaper than hashing every call.
"""

from __future__ import annotations

import hashlib
import json
import math
import operator
import unicodedata
from collections.abc import Hashable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from tracemine.monitor.hooks import as_json

Ignore = Mapping[str, Sequence[str]]
"""Per tool, the argument names (or dotted paths) left out of the key; ``"*"`` is every tool."""

_NFC = unicodedata.normalize
_is_nfc = unicodedata.is_normalized


def _text(value: str) -> str:
    return value if value.isascii() or _is_nfc("NFC", value) else _NFC("NFC", value)


def _key(key: Any) -> str:
    if type(key) is str:
        return key if key.isascii() else _text(key)
    return _text(str.__str__(key) if isinstance(key, str) else str(key))


def canonical(value: Any) -> Any:
    """``value`` as canonical JSON data: integral floats as ints, strings in NFC, tuples as
    lists, mapping keys as NFC strings; other objects by their JSON view, else ``str``."""
    # replay canonicalizes every call: the common exact types are tested first, by identity
    kind = type(value)
    if kind is str:
        return value if value.isascii() else _text(value)
    if kind is int or kind is bool or value is None:
        return value
    if kind is dict:
        return {_key(k): canonical(v) for k, v in value.items()}
    if kind is list:
        return [canonical(v) for v in value]
    if kind is float or isinstance(value, float | Decimal):
        number = float(value)
        if math.isfinite(number) and number == int(number):
            return int(number)
        return number if math.isfinite(number) else str(number)
    if isinstance(value, Mapping):
        return {_key(k): canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    if isinstance(value, int):  # int subclasses (enums) other than bool
        return int(value)
    if isinstance(value, str):  # str subclasses (enums): their value, as JSON writes it
        return _text(str.__str__(value))
    viewed = as_json(value)
    return canonical(viewed) if viewed is not value else str(value)


def _without(arguments: Any, paths: Sequence[str]) -> Any:
    if not paths or not isinstance(arguments, dict):
        return arguments
    out = dict(arguments)
    for path in paths:
        head, _, rest = path.partition(".")
        if head in out:
            if rest:
                out[head] = _without(out[head], [rest])
            else:
                del out[head]
    return out


def ignored_for(ignore: Ignore, tool: str) -> list[str]:
    return [*ignore.get("*", ()), *ignore.get(tool, ())]


_encode = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode


def canonical_text(tool: str, arguments: Any, ignore: Ignore | None = None) -> str:
    """The canonical JSON text of ``arguments`` for ``tool`` (ignored arguments left out)."""
    data = canonical(arguments if arguments is not None else {})
    return _encode(without_ignored(tool, data, ignore))


_OBJECT, _ARRAY, _TRUE, _FALSE = ("{",), ("[",), ("true",), ("false",)
_first = operator.itemgetter(0)


def frozen(value: Any) -> Hashable:
    """A hashable value equal for two arguments exactly when their canonical texts are
    equal: what replay looks calls up by (cheaper than writing the text every call)."""
    kind = type(value)
    if kind is str:
        return value if value.isascii() else _text(value)
    if kind is int or value is None:
        return value
    # ASCII strings and ints are their own frozen form: tested inline, saving a call a leaf
    if kind is dict:
        pairs = [
            (
                k if type(k) is str and k.isascii() else _key(k),
                v if (type(v) is str and v.isascii()) or type(v) is int else frozen(v),
            )
            for k, v in value.items()
        ]
        pairs.sort(key=_first)
        return (_OBJECT, tuple(pairs))
    if kind is list:
        return (
            _ARRAY,
            tuple(
                v if (type(v) is str and v.isascii()) or type(v) is int else frozen(v)
                for v in value
            ),
        )
    if kind is bool:  # True == 1 in Python, not in JSON
        return _TRUE if value else _FALSE
    data = canonical(value)
    return data if type(data) in (int, float, str) or data is None else frozen(data)


def without_ignored(tool: str, arguments: Any, ignore: Ignore | None) -> Any:
    paths = ignored_for(ignore, tool) if ignore else None
    return _without(arguments, paths) if paths else arguments


def key_of(tool: str, text: str) -> str:
    """The replay key of a tool and its canonical argument text."""
    return f"{tool}#{hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]}"


def call_key(tool: str, arguments: Any, ignore: Ignore | None = None) -> str:
    """``tool#<hash>`` for a call: what a cassette is keyed by.

    >>> call_key("get_order", {"order_id": "#W1", "n": 1}) == call_key(
    ...     "get_order", {"n": 1.0, "order_id": "#W1"})
    True
    """
    return key_of(tool, canonical_text(tool, arguments, ignore))


def leaves(text: str) -> dict[str, str]:
    """Canonical argument text as ``{path: JSON text of the leaf}``, for diffs."""
    out: dict[str, str] = {}

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict) and value:
            for k in sorted(value):
                walk(value[k], f"{path}.{k}" if path else k)
        elif isinstance(value, list) and value:
            for i, item in enumerate(value):
                walk(item, f"{path}[{i}]")
        else:
            out[path or "(arguments)"] = json.dumps(value, ensure_ascii=False, sort_keys=True)

    walk(json.loads(text), "")
    return out


def diff(recorded: str, actual: str) -> list[tuple[str, str | None, str | None]]:
    """``(path, recorded leaf, this call's leaf)`` for every leaf that differs; ``None``
    where one side lacks the path."""
    old, new = leaves(recorded), leaves(actual)
    return [
        (path, old.get(path), new.get(path))
        for path in sorted(old.keys() | new.keys())
        if old.get(path) != new.get(path)
    ]
