"""The path language contracts use to address arguments and results. Standard library
only: the runtime monitor imports it.

    args.order_id                   a field of the arguments
    result.items[*].price           every element's field (one value per element)
    result.variants{*}.price        every entry's field, in an object keyed by ids (a map)
    result["odd.key"]               a key that is not a plain name
    len(result.items)               derived: length of an array, object or string
    sum(result.items[*].amount)     derived: sum of the numbers selected
    keys(result)                    derived: the keys of an object

``json_values.path`` in the store uses exactly the same syntax for plain paths.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

ROOTS = ("args", "result")
FUNCTIONS = ("len", "sum", "keys")
WILDCARD = object()
ANY_KEY = object()
"""The step ``{*}``: every value of an object used as a map (keys are ids, not fields)."""
MANY_STEPS = ("[*]", "{*}")
"""The steps that select many values, as they are written in path text."""


def selects_many(text: str) -> bool:
    """Whether path text has a step selecting many values (``[*]`` or ``{*}``): for code
    that holds paths as text (profiles, candidates) and would not parse them."""
    return any(step in text for step in MANY_STEPS)


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()
"""Stands for a key absent from an object (as opposed to a JSON null)."""

_TOKEN = re.compile(r'\.([A-Za-z_][A-Za-z0-9_\-]*)|\["((?:[^"\\]|\\.)*)"\]|(\[\*\])|(\{\*\})')


class PathError(ValueError):
    """A path that does not parse."""


@dataclass(frozen=True, slots=True)
class Path:
    """A parsed path: a root, steps (key strings, WILDCARD or ANY_KEY) and an optional
    function."""

    text: str
    root: str
    steps: tuple[Any, ...]
    function: str | None = None

    @property
    def side(self) -> str:
        return self.root

    @property
    def plain(self) -> str:
        """The path without its function (what ``json_values.path`` holds)."""
        return format_path(self.root, self.steps)

    @property
    def parent(self) -> Path | None:
        if not self.steps:
            return None
        return Path(format_path(self.root, self.steps[:-1]), self.root, self.steps[:-1])

    @property
    def has_wildcard(self) -> bool:
        """Whether the path selects many values (array elements or map entries)."""
        return WILDCARD in self.steps or ANY_KEY in self.steps


_cache: dict[str, Path] = {}


def parse(text: str) -> Path:
    """Parse a path; :class:`PathError` names what is wrong."""
    cached = _cache.get(text)
    if cached is not None:
        return cached
    body = text.strip()
    function = None
    for name in FUNCTIONS:
        if body.startswith(name + "(") and body.endswith(")"):
            function, body = name, body[len(name) + 1 : -1].strip()
            break
    root = next(
        (r for r in ROOTS if body == r or body.startswith((r + ".", r + "[", r + "{"))), None
    )
    if root is None:
        raise PathError(f"path {text!r} must start with args or result")
    steps: list[Any] = []
    position = len(root)
    while position < len(body):
        match = _TOKEN.match(body, position)
        if match is None:
            raise PathError(f"path {text!r}: cannot read from {body[position:]!r}")
        if match.group(1) is not None:
            steps.append(match.group(1))
        elif match.group(2) is not None:
            steps.append(re.sub(r"\\(.)", r"\1", match.group(2)))
        elif match.group(3) is not None:
            steps.append(WILDCARD)
        else:
            steps.append(ANY_KEY)
        position = match.end()
    path = Path(text, root, tuple(steps), function)
    if len(_cache) < 10_000:
        _cache[text] = path
    return path


def element_steps(paths: tuple[Path, ...]) -> tuple[tuple[Any, ...], list[str]] | None:
    """For paths that each name one key of the elements of one list (``P[*].key``, P
    under no other wildcard, no function): P's steps and the keys; otherwise None."""
    if not paths or any(p.function is not None or len(p.steps) < 2 for p in paths):
        return None
    prefix = paths[0].steps[:-1]
    if prefix[-1] is not WILDCARD or WILDCARD in prefix[:-1] or ANY_KEY in prefix:
        return None
    if any(p.root != paths[0].root or p.steps[:-1] != prefix or not isinstance(p.steps[-1], str)
           for p in paths):  # fmt: skip
        return None
    return prefix[:-1], [str(p.steps[-1]) for p in paths]


def format_path(root: str, steps: tuple[Any, ...] | list[Any]) -> str:
    parts = [root]
    for step in steps:
        if step is WILDCARD:
            parts.append("[*]")
        elif step is ANY_KEY:
            parts.append("{*}")
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]*", step):
            parts.append("." + step)
        else:
            parts.append('["' + step.replace("\\", "\\\\").replace('"', '\\"') + '"]')
    return "".join(parts)


def select(path: Path, args: Any, result: Any) -> list[Any]:
    """The values ``path`` addresses (without its function): one per array element under a
    wildcard, one per entry under ``{*}`` (in the object's order). A key absent from an
    object yields MISSING; a step into something that is not an object or array yields
    nothing (the contract on the parent covers that)."""
    current = [args if path.root == "args" else result]
    for step in path.steps:
        following: list[Any] = []
        for value in current:
            if step is WILDCARD:
                if isinstance(value, list):
                    following.extend(value)
            elif step is ANY_KEY:
                if isinstance(value, dict):
                    following.extend(value.values())
            elif isinstance(value, dict):
                following.append(value.get(step, MISSING))
        current = following
    return current


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def evaluate(path: Path, args: Any, result: Any) -> list[Any]:
    """Like :func:`select`, with the path's function applied (a single value then)."""
    values = select(path, args, result)
    if path.function is None:
        return values
    if path.function == "sum":
        # a sum is over numbers only: a boolean, a string or a null among them leaves no
        # value (the contract does not apply), with or without the wildcard
        lists = [values] if path.has_wildcard else [v for v in values if isinstance(v, list)]
        return [sum(v) for v in lists if all(map(_is_number, v))]
    out: list[Any] = []
    for value in values:
        if path.function == "len" and isinstance(value, list | dict | str):
            out.append(len(value))
        elif path.function == "keys" and isinstance(value, dict):
            out.append(sorted(value))
    return out
