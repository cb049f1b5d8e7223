"""A second, deliberately separate reading of the contract path language, for the reference
checker. Written from the grammar in docs/contract-format.md, sharing no code with
``tracemine.model.paths``, so that a bug there shows up as a disagreement instead of
cancelling out.

    args.order_id  result.items[*].price  result["odd.key"]
    len(result.items)  sum(result.items[*].amount)  keys(result)

A key absent from an object is MISSING (not null); a step into a value that is not an object
(key) or an array (``[*]``) selects nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Absent()


class _Every:
    def __repr__(self) -> str:
        return "[*]"


EVERY: Any = _Every()
"""The ``[*]`` step."""


def _name_start(char: str) -> bool:
    return char == "_" or ("a" <= char <= "z") or ("A" <= char <= "Z")


def _name_char(char: str) -> bool:
    return _name_start(char) or ("0" <= char <= "9") or char == "-"


@dataclass(frozen=True)
class RefPath:
    root: str
    steps: tuple[Any, ...]
    function: str | None = None

    @property
    def parent(self) -> RefPath | None:
        return RefPath(self.root, self.steps[:-1]) if self.steps else None

    @property
    def last(self) -> Any:
        return self.steps[-1]

    @property
    def has_wildcard(self) -> bool:
        return any(step is EVERY for step in self.steps)


def parse(text: str) -> RefPath:
    """Read a path one character at a time; ValueError when it is not one."""
    body = text.strip()
    function = None
    opening = body.find("(")
    if opening > 0 and body.endswith(")"):
        function = body[:opening]
        if function not in ("len", "sum", "keys"):
            raise ValueError(f"unknown function in {text!r}")
        body = body[opening + 1 : -1].strip()
    end = 0
    while end < len(body) and body[end].isalpha():
        end += 1
    root = body[:end]
    if root not in ("args", "result"):
        raise ValueError(f"{text!r} does not start with args or result")
    steps: list[Any] = []
    i = end
    while i < len(body):
        if body[i] == "." and i + 1 < len(body) and _name_start(body[i + 1]):
            j = i + 1
            while j < len(body) and _name_char(body[j]):
                j += 1
            steps.append(body[i + 1 : j])
            i = j
        elif body.startswith("[*]", i):
            steps.append(EVERY)
            i += 3
        elif body.startswith('["', i):
            j, key = i + 2, []
            while j < len(body) and body[j] != '"':
                if body[j] == "\\" and j + 1 < len(body):
                    j += 1
                key.append(body[j])
                j += 1
            if not body.startswith('"]', j):
                raise ValueError(f"unterminated key in {text!r}")
            steps.append("".join(key))
            i = j + 2
        else:
            raise ValueError(f"cannot read {text!r} at {i}")
    return RefPath(root, tuple(steps), function)


def format_path(root: str, steps: list[Any] | tuple[Any, ...]) -> str:
    """The text of a path: plain names dotted, every other key quoted and escaped."""
    out = root
    for step in steps:
        if step is EVERY:
            out += "[*]"
        elif step and _name_start(step[0]) and all(_name_char(c) for c in step):
            out += "." + step
        else:
            escaped = "".join("\\" + c if c in '\\"' else c for c in step)
            out += '["' + escaped + '"]'
    return out


def select(path: RefPath, args: Any, result: Any) -> list[Any]:
    """The values a path addresses, before its function: one per array element under [*]."""
    found = [args] if path.root == "args" else [result]
    for step in path.steps:
        following = []
        for value in found:
            if step is EVERY:
                if type(value) is list:
                    for element in value:
                        following.append(element)
            elif type(value) is dict:
                following.append(value.get(step, MISSING))
        found = following
    return found


def _is_number(value: Any) -> bool:
    return type(value) in (int, float)


def evaluate(path: RefPath, args: Any, result: Any) -> list[Any]:
    """``select`` with the function applied: len of arrays, objects and strings; keys of an
    object (sorted); sum of the numbers under a wildcard, or of each array selected
    (nothing when one is not a number)."""
    found = select(path, args, result)
    if path.function is None:
        return found
    if path.function == "len":
        return [len(v) for v in found if type(v) in (list, dict, str)]
    if path.function == "keys":
        return [sorted(v) for v in found if type(v) is dict]
    if path.has_wildcard:
        if not all(_is_number(v) for v in found):
            return []
        total: Any = 0
        for v in found:
            total += v
        return [total]
    sums = []
    for value in found:
        if type(value) is list and all(_is_number(v) for v in value):
            total = 0
            for v in value:
                total += v
            sums.append(total)
    return sums
