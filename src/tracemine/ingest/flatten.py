"""Flattening arguments and results into ``json_values`` rows: one row per leaf and per
array/object, path generalised over array elements (``result.items[*].price``).

Hot path of ingest: paths are cached, and nothing is allocated per row but the values.
Depth and array fan-out are capped so one pathological payload cannot flood the table;
a capped call records the anomaly ``values_capped``.
"""

from __future__ import annotations

import re
from typing import Any

MAX_DEPTH = 32
MAX_ARRAY_ITEMS = 1000
MAX_STR_CHARS = 256
_FLOAT_LIMIT = 1.7e308

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")
_child_cache: dict[tuple[str, str], str] = {}


def child_path(parent: str, key: str) -> str:
    """``parent.key``, or ``parent["key"]`` when the key is not a plain name."""
    cache_key = (parent, key)
    path = _child_cache.get(cache_key)
    if path is None:
        if _IDENT.match(key):
            path = f"{parent}.{key}"
        else:
            escaped = key.replace("\\", "\\\\").replace('"', '\\"')
            path = f'{parent}["{escaped}"]'
        if len(_child_cache) < 200_000:
            _child_cache[cache_key] = path
    return path


class ValueColumns:
    """Column lists for a batch of ``json_values`` rows."""

    __slots__ = ("bool", "call_key", "idx", "jtype", "len", "num", "path", "side", "str")

    def __init__(self) -> None:
        self.call_key: list[int] = []
        self.side: list[str] = []
        self.path: list[str] = []
        self.jtype: list[str] = []
        self.num: list[float | None] = []
        self.str: list[str | None] = []
        self.bool: list[bool | None] = []
        self.len: list[int | None] = []
        self.idx: list[int | None] = []

    def __len__(self) -> int:
        return len(self.call_key)

    def as_dict(self) -> dict[str, list[Any]]:
        return {name: getattr(self, name) for name in self.__slots__}

    def add(self, call_key: int, side: str, value: Any) -> bool:
        """Flatten ``value`` under root path ``side``; False when a cap was hit."""
        return _walk(self, call_key, side, side, value, 0, None)


def _walk(
    cols: ValueColumns, key: int, side: str, path: str, value: Any, depth: int, idx: int | None
) -> bool:
    complete = True
    kind = type(value)
    num: float | None = None
    text: str | None = None
    flag: bool | None = None
    length: int | None = None
    if kind is dict:
        jtype = "object"
        length = len(value)
    elif kind is list:
        jtype = "array"
        length = len(value)
    elif kind is str:
        jtype = "string"
        length = len(value)
        text = value if length <= MAX_STR_CHARS else value[:MAX_STR_CHARS]
    elif kind is bool:
        jtype = "boolean"
        flag = value
    elif kind is int:
        jtype = "integer"
        num = float(value) if -_FLOAT_LIMIT < value < _FLOAT_LIMIT else None
    elif kind is float:
        jtype = "number"
        num = value if value == value and -_FLOAT_LIMIT < value < _FLOAT_LIMIT else None
    elif value is None:
        jtype = "null"
    else:  # anything a reader should not have produced; keep it visible as text
        jtype = "string"
        text = str(value)[:MAX_STR_CHARS]
    cols.call_key.append(key)
    cols.side.append(side)
    cols.path.append(path)
    cols.jtype.append(jtype)
    cols.num.append(num)
    cols.str.append(text)
    cols.bool.append(flag)
    cols.len.append(length)
    cols.idx.append(idx)
    if length and (kind is dict or kind is list):
        if depth >= MAX_DEPTH:
            return False
        if kind is dict:
            for name, item in value.items():
                name = name if type(name) is str else str(name)
                if not _walk(cols, key, side, child_path(path, name), item, depth + 1, idx):
                    complete = False
        else:
            element_path = path + "[*]"
            for position, item in enumerate(value):
                if position >= MAX_ARRAY_ITEMS:
                    return False
                if not _walk(cols, key, side, element_path, item, depth + 1, position):
                    complete = False
    return complete
