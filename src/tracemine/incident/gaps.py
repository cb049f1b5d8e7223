"""Relations across calls that separate a failing run and no fitted contract says.

When no contract separates a failing run, the report says which vocabulary is missing,
the way a receipt says what it could not evaluate (or which contract mining did not
propose where the vocabulary has one). Three relations between a call's
argument and an earlier call of another tool are looked for, each holding on every
known-good run that has both calls (in ``min_tasks`` tasks or more) and broken by the
failing run:

    bound    a number at most a number of the earlier call      refund ≤ the order total
    count    an array argument no longer than an earlier array  recipients ≤ the selection
    subset   every element of an array argument among the      recipients ⊆ the selected
             earlier call's array elements                     customers' emails

Like provenance, a relation holds for a call when some earlier call of the source tool
that ended ok satisfies it; a call with the argument and no such source breaks it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Calls = Sequence[Mapping[str, Any]]

MISSING = {
    "bound": "not mined: bounded_by says it, but mining proposed no such contract here: it "
    "pairs an argument only with earlier numbers outside arrays whose names share a word or both "
    "name an amount, with 3 distinct values or more",
    "count": "missing: a run-level count against an earlier call's array (len of an argument <= "
    "len of an earlier result): the vocabulary has no such kind; provenance over the "
    "elements (args.x[*]) says the stronger relation when they are the selected values",
    "subset": "not mined: provenance over args.x[*] says it, but mining proposed no such contract "
    "here: it traces the elements of arrays of scalars, with 3 distinct values or more",
}
_OPS = {"bound": "<=", "count": "<=", "subset": "⊆"}


@dataclass(frozen=True)
class Gap:
    """A relation that separates the failing run and that no contract kind expresses."""

    relation: str
    tool: str
    path: str
    source_tool: str
    source_path: str
    runs: int
    tasks: int
    observed: str

    def message(self) -> str:
        return (
            f"{_named(self.tool, self.path)} {_OPS[self.relation]} "
            f"{_named(self.source_tool, self.source_path)} of an earlier call: held on "
            f"{self.runs} known-good runs "
            f"({self.tasks} tasks), broken here ({self.observed}); {MISSING[self.relation]}"
        )


def _named(tool: str, path: str) -> str:
    """``get_order.result.total`` and ``len(send.args.to)``."""
    if path.startswith("len(") and path.endswith(")"):
        return f"len({tool}.{path[4:-1]})"
    return f"{tool}.{path}"


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def leaves(value: Any, path: str, out: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """Scalar values by path (``[*]`` for array elements) and ``len(path)`` of arrays."""
    if isinstance(value, dict):
        for key, item in value.items():
            leaves(item, f"{path}.{key}", out)
    elif isinstance(value, list):
        out.setdefault(f"len({path})", []).append(len(value))
        for item in value:
            leaves(item, f"{path}[*]", out)
    else:
        out.setdefault(path, []).append(value)
    return out


def _sides(call: Mapping[str, Any]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    leaves(call.get("arguments"), "args", out)
    leaves(call.get("result"), "result", out)
    return out


def _holds(relation: str, mine: list[Any], source: list[Any]) -> bool:
    if relation == "subset":
        return all(v in source for v in mine)
    return len(source) == 1 and all(_number(v) and v <= source[0] for v in mine)


Key = tuple[str, str, str, str, str]  # relation, tool, path, source tool, source path


def _relations(call: Mapping[str, Any]) -> list[tuple[str, str, list[Any]]]:
    """(relation, argument path, values) an argument of ``call`` can take part in."""
    out = []
    for path, values in leaves(call.get("arguments"), "args", {}).items():
        if path.startswith("len("):
            out.append(("count", path, values))
        elif "[*]" in path:
            if all(isinstance(v, str) or _number(v) for v in values):
                out.append(("subset", path, values))
        elif len(values) == 1 and _number(values[0]):
            out.append(("bound", path, values))
    return out


def _sources(relation: str, earlier: dict[str, list[Any]]) -> Iterable[tuple[str, list[Any]]]:
    for path, values in earlier.items():
        if relation == "subset":
            if "[*]" in path and not path.startswith("len("):
                yield path, values
        elif len(values) == 1 and _number(values[0]) and "[*]" not in path:
            yield path, values


def _judge(run: Calls, key: Key) -> tuple[bool, str] | None:
    """Whether ``run`` keeps the relation (None: it has no such call), and what broke it."""
    relation, tool, path, source_tool, source_path = key
    seen = False
    for position, call in enumerate(run):
        if call.get("tool") != tool:
            continue
        mine = leaves(call.get("arguments"), "args", {}).get(path)
        if mine is None:
            continue
        seen = True
        sources = [_sides(e).get(source_path) for e in run[:position]
                   if e.get("tool") == source_tool and e.get("status") == "ok"]  # fmt: skip
        found = [s for s in sources if s is not None]
        if not any(_holds(relation, mine, s) for s in found):
            shown = ", ".join(map(str, mine[:3])) + ("…" if len(mine) > 3 else "")
            against = ", ".join(map(str, found[-1][:3])) if found else "no earlier value"
            return False, f"{shown} vs {against}"
    return (True, "") if seen else None


def find_gaps(
    failing: Calls, nominal: Mapping[str, tuple[str | None, Calls]], min_tasks: int
) -> list[Gap]:
    """Relations the failing run breaks and every known-good run (``run id → (task,
    calls in order)``) that has them keeps, in ``min_tasks`` tasks or more."""
    keys: dict[Key, str] = {}
    for position, call in enumerate(failing):
        for relation, path, _ in _relations(call):
            for source in failing[:position]:
                if source.get("tool") == call.get("tool") or source.get("status") != "ok":
                    continue
                for source_path, _ in _sources(relation, _sides(source)):
                    key = (relation, str(call["tool"]), path, str(source["tool"]), source_path)
                    if key not in keys:
                        verdict = _judge(failing, key)
                        if verdict is not None and not verdict[0]:
                            keys[key] = verdict[1]
    gaps = []
    for key, observed in keys.items():
        runs, tasks, broken = 0, set(), False
        for task, calls in nominal.values():
            verdict = _judge(calls, key)
            if verdict is None:
                continue
            if not verdict[0]:
                broken = True
                break
            runs += 1
            tasks.add(task)
        if not broken and len(tasks) >= min_tasks:
            gaps.append(Gap(*key, runs=runs, tasks=len(tasks), observed=observed))
    return sorted(gaps, key=lambda g: (-g.tasks, g.relation, g.tool, g.path, g.source_path))
