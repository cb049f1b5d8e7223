"""The typed context templates read: one fold's profiles, summed from task profiles.

A context is named ``all`` (every task), ``train:K`` (every task outside fold K) or
``test:K`` (fold K). All contexts are summed in one query per layer by joining the
profiles' units (tasks or folds, :mod:`tracemine.mine.profile.aggregates`) with a membership table
(unit, context).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import duckdb
import pyarrow as pa

from tracemine.mine.profile.aggregates import MAX_COLUMNS, MIN_COLUMNS, PROFILE_COLUMNS, Survey
from tracemine.mine.profile.listing import VALUES_PER_TASK
from tracemine.model.paths import selects_many

MAX_LISTED_VALUES = 64
"""A context lists a path's values (or shapes) only when it has at most this many."""
_EXTREMES = MIN_COLUMNS | MAX_COLUMNS


class Stats(Mapping[str, Any]):
    """A profile row's columns by name: its values in a tuple, the names' positions shared
    by every row of one query. A dict a row cost a few kilobytes, and a wide store has a
    row per context and path (hundreds of thousands)."""

    __slots__ = ("_index", "_values")

    def __init__(self, index: dict[str, int], values: tuple[Any, ...]) -> None:
        self._index = index
        self._values = values

    def __getitem__(self, column: str) -> Any:
        return self._values[self._index[column]]

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)


@dataclass(frozen=True)
class PathProfile:
    """One tool·side·path summed over a context's tasks (columns of ``tm_profiles``)."""

    tool: str
    side: str
    path: str
    tasks: int
    stats: Mapping[str, Any]
    format: str | None = None  # the format guessed for the path's strings (survey)

    def __getitem__(self, column: str) -> Any:
        value = self.stats[column]
        return 0 if value is None and column not in _EXTREMES else value

    @cached_property
    def has_wildcard(self) -> bool:
        # asked per pair of a tool's paths and by every template: parsed once
        return selects_many(self.path)

    @property
    def json_type(self) -> str | None:
        """The one JSON type of every value here (integer+number → number), else None."""
        calls = self["calls"]
        for name in ("boolean", "integer", "string", "array", "object", "null"):
            if self[f"c_all_{name}"] == calls:
                return name
        return "number" if self["c_all_numeric"] == calls else None

    @property
    def nullable_type(self) -> str | None:
        """The one JSON type of every value here that is not null, where some are null
        and some are not (integer+number → number), else None."""
        calls = self["calls"]
        if not self["c_null"] or self["c_all_null"] == calls:
            return None
        for name in ("boolean", "integer", "string", "array", "object"):
            if self[f"c_opt_{name}"] == calls:
                return name
        return "number" if self["c_opt_numeric"] == calls else None


@dataclass(frozen=True)
class Listing:
    """Values (or shapes) of a path in a context: value → (calls, tasks). ``complete`` is
    False when some task had more than the profile keeps."""

    counts: dict[Any, tuple[int, int]]
    complete: bool


@dataclass
class MineContext:
    """What templates see: one context's profiles, and what every context shares."""

    name: str
    tasks: frozenset[str]
    tool_calls: dict[str, int]
    paths: dict[tuple[str, str, str], PathProfile]
    values: dict[tuple[str, str, str], Listing]
    shapes: dict[tuple[str, str, str], Listing]
    min_support: int = 2
    relations: dict[int, dict[str, int]] = field(default_factory=dict)
    shared: Any = None  # pairs and conditional data (crossfit.Shared), the same for all

    def tools(self) -> list[str]:
        return sorted(self.tool_calls)

    def profiles(self, tool: str | None = None) -> Iterator[PathProfile]:
        for key in sorted(self.paths):
            if tool is None or key[0] == tool:
                yield self.paths[key]

    def parent(self, profile: PathProfile, parent_path: str) -> PathProfile | None:
        return self.paths.get((profile.tool, profile.side, parent_path))


STABLE_FOLD_TASKS = 200
"""Folds of at least this many tasks each are dealt by a hash of the task, and fewer by
balancing calls (:func:`assign_folds`)."""


def assign_folds(task_calls: dict[str, int], folds: int, seed: int) -> dict[str, int]:
    """Seeded task → fold.

    With fewer than ``STABLE_FOLD_TASKS`` tasks a fold, tasks in a seeded order, each to
    the fold with the fewest calls so far (GroupKFold's balancing, with the seed deciding
    ties and order): few tasks dealt at random could leave a fold nearly empty. From that
    many on, a task's fold is a seeded hash of its name alone (:func:`hashed_fold`). A
    fold's share of the tasks then strays from 1/K by about sqrt((K-1)/n), under 6.3 % of
    it at 200 a fold; and what a task's fold is no longer depends on the other tasks, so
    traces of new tasks leave the old ones in their folds, and a mine after them counts
    the held-out contracts on the new tasks only (:mod:`~tracemine.mine.evidence.kept_counts`)."""
    if folds_dealt(len(task_calls), folds) == "hash":
        return {task: hashed_fold(task, folds, seed) for task in sorted(task_calls)}
    tasks = sorted(task_calls)
    random.Random(seed).shuffle(tasks)
    tasks.sort(key=lambda t: -task_calls[t])  # stable: seeded order among equal sizes
    load = [0] * folds
    assignment = {}
    for task in tasks:
        fold = min(range(folds), key=lambda k: (load[k], k))
        assignment[task] = fold
        load[fold] += task_calls[task]
    return assignment


def hashed_fold(task: str, folds: int, seed: int) -> int:
    """The fold of ``task`` by a seeded hash of its name (the same in every process)."""
    digest = hashlib.blake2b(f"{seed}\x1f{task}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % folds


def folds_dealt(tasks: int, folds: int) -> str:
    """How :func:`assign_folds` deals this many tasks: ``hash`` or ``balanced``."""
    return "hash" if folds > 0 and tasks >= STABLE_FOLD_TASKS * folds else "balanced"


def register_membership(
    con: duckdb.DuckDBPyConnection, assignment: dict[str, int], folds: int
) -> list[str]:
    """Register ``_tm_membership(task, ctx)``, ``_tm_folds(task, fold)`` and
    ``_tm_fold_membership(fold, ctx)``; return the context names."""
    tasks, ctxs = [], []
    for task, fold in assignment.items():
        tasks.append(task)
        ctxs.append("all")
        for k in range(folds):
            tasks.append(task)
            ctxs.append(f"test:{k}" if k == fold else f"train:{k}")
    con.register("_tm_membership", pa.table({"task": tasks, "ctx": ctxs}))
    con.register("_tm_folds", pa.table({"task": list(assignment),
                                        "fold": list(assignment.values())}))  # fmt: skip
    names = ["all"] + [f"{kind}:{k}" for k in range(folds) for kind in ("train", "test")]
    con.register("_tm_fold_membership", pa.table(fold_membership(folds)))
    return names if folds else ["all"]


def fold_membership(folds: int) -> dict[str, list]:
    """Columns ``fold`` and ``ctx``: the contexts each fold is part of (no folds: fold 0,
    every task, is ``all``)."""
    pairs = [(k, name) for k in range(max(folds, 1)) for name in ("all", *(
        f"test:{j}" if j == k else f"train:{j}" for j in range(folds)))]  # fmt: skip
    return {"fold": [k for k, _ in pairs], "ctx": [name for _, name in pairs]}


def units_sql(per_fold: bool) -> str:
    """SQL relation ``(unit, ctx)``: the contexts of each profile unit, a task or a fold."""
    if per_fold:
        return "(SELECT CAST(fold AS VARCHAR) AS unit, ctx FROM _tm_fold_membership)"
    return "(SELECT task AS unit, ctx FROM _tm_membership)"


_DOUBLE_SUMS = frozenset({"nsum", "nsq", "lsum", "lsq"})


def _context_columns_sql(table: str) -> str:
    """The profile columns summed (min, max) over rows of ``table``, the counts as
    BIGINT: a sum of BIGINT is a HUGEINT, which reaches Python twice as slowly, and a
    context sum of a wide store has a row per context and path."""
    aggs = []
    for name in PROFILE_COLUMNS:
        column = f"{table}.{name}"
        if name in MIN_COLUMNS or name in MAX_COLUMNS:
            fn = "min" if name in MIN_COLUMNS else "max"
            aggs.append(f"{fn}({column}) AS {name}")
        elif name in _DOUBLE_SUMS:
            aggs.append(f"sum({column}) AS {name}")
        else:
            aggs.append(f"CAST(sum({column}) AS BIGINT) AS {name}")
    return ", ".join(aggs)


def context_sums_sql(per_fold: bool = False) -> str:
    """SQL summing the profiles' units per context (needs the membership tables)."""
    return f"""
    SELECT m.ctx, p.tool, p.side, p.path, CAST(sum(p.tasks) AS BIGINT) AS tasks,
           {_context_columns_sql("p")}
    FROM tm_profiles p JOIN {units_sql(per_fold)} m ON m.unit = p.unit
    GROUP BY ALL
    """


def context_values_sql(per_fold: bool = False, limit: int = MAX_LISTED_VALUES) -> str:
    """SQL summing listed values and shapes per context, for paths with few of them."""
    return f"""
    WITH g AS (
        SELECT m.ctx, v.tool, v.side, v.path, v.kind, v.value,
               CAST(sum(v.calls) AS BIGINT) AS calls, CAST(sum(v.tasks) AS BIGINT) AS tasks,
               max(v.distinct_n) AS task_distinct
        FROM tm_profile_values v JOIN {units_sql(per_fold)} m ON m.unit = v.unit
        GROUP BY ALL
    ), w AS (
        SELECT *, count(*) OVER p AS listed, max(task_distinct) OVER p AS most
        FROM g WINDOW p AS (PARTITION BY ctx, tool, side, path, kind)
    )
    SELECT ctx, tool, side, path, kind, value, calls, tasks, most
    FROM w WHERE listed <= {limit}
    ORDER BY ALL
    """


def load_contexts(
    con: duckdb.DuckDBPyConnection,
    names: list[str],
    min_support: int,
    survey: Survey,
    assignment: dict[str, int],
    per_fold: bool = False,
    tool_tasks: list[tuple[str, str, int]] | None = None,
) -> dict[str, MineContext]:
    """Every context's profiles, values and shapes, in one pass per layer; the calls of
    each tool in a context from ``tool_tasks``, (tool, task, calls)."""
    by_fold: dict[int, list[str]] = {}
    for task, fold in assignment.items():
        by_fold.setdefault(fold, []).append(task)
    contexts = {}
    for name in names:
        kind, _, number = name.partition(":")
        tasks = frozenset(
            task
            for fold, members in by_fold.items()
            if kind == "all" or (fold == int(number)) == (kind == "test")
            for task in members
        )
        contexts[name] = MineContext(name, tasks, {}, {}, {}, {}, min_support)
    per_fold_calls: dict[tuple[int, str], int] = {}
    for tool, task, n in tool_tasks or ():
        if task in assignment:
            at = (assignment[task], tool)
            per_fold_calls[at] = per_fold_calls.get(at, 0) + int(n)
    members = fold_membership((len(names) - 1) // 2)
    for fold, name in zip(members["fold"], members["ctx"], strict=True):
        for (where, tool), n in per_fold_calls.items():
            if where == fold:
                contexts[name].tool_calls[tool] = contexts[name].tool_calls.get(tool, 0) + n
    cursor = con.execute(context_sums_sql(per_fold))
    index = {d[0]: i for i, d in enumerate(cursor.description[5:])}
    for row in cursor.fetchall():
        ctx, tool, side, path, tasks = row[:5]
        contexts[ctx].paths[(tool, side, path)] = PathProfile(
            tool, side, path, tasks, Stats(index, row[5:]), survey.formats.get(path)
        )
    listings: dict[tuple[str, str, str, str, str], dict[Any, tuple[int, int]]] = {}
    complete: dict[tuple[str, str, str, str, str], bool] = {}
    # a value is listed in every context that saw it: each text is decoded once (listed
    # values are keys, so JSON scalars, which no one changes)
    decoded_texts: dict[str, Any] = {}
    for ctx, tool, side, path, kind, value, calls, tasks, most in con.execute(
        context_values_sql(per_fold)
    ).fetchall():
        key = (ctx, tool, side, path, kind)
        if kind == "v":
            decoded = decoded_texts.get(value, decoded_texts)
            if decoded is decoded_texts:
                decoded = decoded_texts[value] = json.loads(value)
        else:
            decoded = value
        listings.setdefault(key, {})[decoded] = (int(calls), int(tasks))
        complete[key] = int(most) <= VALUES_PER_TASK
    for (ctx, tool, side, path, kind), counts in listings.items():
        target = contexts[ctx].values if kind == "v" else contexts[ctx].shapes
        target[(tool, side, path)] = Listing(counts, complete[(ctx, tool, side, path, kind)])
    return contexts
