"""Conditional contracts: a property that fails overall but holds under a predicate on the
arguments or on a result status field (``non_empty result.orders when args.status ==
"open"``).

For each such *target* (a parameter-free unary property broken on some, not most, calls)
the calls' argument and status features are read once; per fold a shallow scikit-learn
decision tree predicting the violation is grown on the training tasks, and a node without
violations whose conditions all test one feature becomes the predicate.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

from tracemine.mine.context import MineContext, PathProfile
from tracemine.mine.formats import looks_personal, name_tokens, words
from tracemine.mine.measure import Measure, parent_path, unary
from tracemine.mine.profile import Survey, call_paths_sql
from tracemine.mine.shards import Shards
from tracemine.model.contract import Contract, Kind, Predicate

TARGET_KINDS = (Kind.NON_EMPTY, Kind.PRESENT, Kind.NOT_NULL, Kind.NON_NEGATIVE, Kind.POSITIVE)
MAX_TARGETS = 40
MIN_CHECKED = 20
MAX_VIOLATION_SHARE = 0.8
MAX_CATEGORIES = 12
STATUS_WORDS = words(
    "status state found success ok error code type kind outcome available exists mode"
)


@dataclass
class Feature:
    """One feature path's value on each of a target's rows."""

    path: str
    present: np.ndarray  # bool
    values: np.ndarray  # object (categorical) or float64 (numeric)
    categories: list[Any] = field(default_factory=list)  # empty for numeric

    @property
    def numeric(self) -> bool:
        return not self.categories


@dataclass
class Target:
    tool: str
    side: str
    path: str
    kind: Kind
    keys: np.ndarray
    folds: np.ndarray
    tasks: np.ndarray
    violated: np.ndarray
    features: list[Feature] = field(default_factory=list)


def holds(predicate: Predicate, feature: Feature) -> np.ndarray:
    """Rows where ``predicate`` holds (a missing value satisfies only ``absent``)."""
    op, value, present = predicate.op, predicate.value, feature.present
    if op == "present":
        return present.copy()
    if op == "absent":
        return ~present
    if op in ("==", "in"):
        allowed = [value] if op == "==" else list(value)
        return present & np.isin(feature.values, np.array(allowed, dtype=object))
    numbers = feature.values.astype(float)
    with np.errstate(invalid="ignore"):
        compare = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}
        return present & compare[op](numbers, float(value))


def _is_feature(profile: PathProfile, ctx: MineContext) -> bool:
    if profile.has_wildcard or profile.path in ("args", "result"):
        return False
    json_type = profile.json_type
    tokens = name_tokens(profile.path)
    if profile.side == "result" and not tokens & STATUS_WORDS:
        return False
    if json_type in ("integer", "number") and profile.side == "args":
        return True
    listing = ctx.values.get((profile.tool, profile.side, profile.path))
    if json_type not in ("string", "boolean") or listing is None or not listing.complete:
        return False
    values = list(listing.counts)
    return len(values) <= MAX_CATEGORIES and not any(looks_personal(v, tokens) for v in values)


class Conditional:
    """Targets and features of one mine; fits and counts conditional candidates."""

    def __init__(self, targets: list[Target]) -> None:
        self.targets = {(t.tool, t.side, t.path, t.kind): t for t in targets}
        # per target, its features as a design matrix: the same in every context, which
        # only picks its rows
        self.designs: dict[tuple[str, str, str, Kind], Any] = {}

    @classmethod
    def build(
        cls,
        shards: Shards,
        ctx: MineContext,
        folds: dict[str, int],
        survey: Survey,
    ) -> Conditional:
        """Pick targets from the every-task context and read their rows and features from
        every shard."""
        specs = []
        for profile in ctx.profiles():
            for kind in TARGET_KINDS:
                found = unary(kind, {}, profile.tool, profile.side, profile.path, ctx)
                if kind in (Kind.NON_NEGATIVE, Kind.POSITIVE) and profile.json_type not in (
                        "integer", "number"):  # fmt: skip
                    continue
                share = found.violations / found.checked if found.checked else 1.0
                if found.checked >= MIN_CHECKED and 0 < share <= MAX_VIOLATION_SHARE:
                    specs.append((profile.tool, profile.side, profile.path, kind))
        specs = sorted(set(specs))[:MAX_TARGETS]
        if not specs:
            return cls([])
        features = {
            tool: [p for p in ctx.profiles(tool) if _is_feature(p, ctx)]
            for tool in {s[0] for s in specs}
        }
        wanted = [(p.tool, p.side, p.path) for ps in features.values() for p in ps]
        rows, values = _merge(shards.map(read_rows, specs, wanted, survey, label="conditional"),
                              wanted)  # fmt: skip
        targets = []
        for tid, (tool, side, path, kind) in enumerate(specs):
            keys, tasks, violated = rows.get(tid, ([], [], []))
            if not len(keys):
                continue
            keys = np.asarray(keys, dtype=np.int64)
            task_array = np.asarray(tasks, dtype=object)
            fold_of = np.asarray([folds.get(t, -1) for t in tasks], dtype=np.int64)
            target = Target(tool, side, path, kind, keys, fold_of, task_array,
                            np.asarray(violated, dtype=bool))  # fmt: skip
            for profile in features[tool]:
                if profile.side == side and profile.path == path:
                    continue
                listing = ctx.values.get((tool, profile.side, profile.path))
                categories = sorted(listing.counts, key=str) if listing else []
                if profile.json_type in ("integer", "number") and profile.side == "args":
                    categories = []
                fkeys, fvals = values[(tool, profile.side, profile.path)]
                target.features.append(_align(profile.path, keys, fkeys, fvals, categories))
            targets.append(target)
        return cls(targets)

    def mask(self, target: Target, ctx: MineContext) -> np.ndarray:
        kind, _, fold = ctx.name.partition(":")
        if kind == "all":
            return np.ones(len(target.keys), dtype=bool)
        return target.folds == int(fold) if kind == "test" else target.folds != int(fold)

    def measure(self, contract: Contract, ctx: MineContext) -> Measure:
        key = (contract.tool, contract.side.value, contract.paths[0], contract.kind)
        target = self.targets.get(key)
        if target is None or contract.when is None:
            return Measure()
        feature = next((f for f in target.features if f.path == contract.when.path), None)
        if feature is None:
            return Measure()
        rows = self.mask(target, ctx) & holds(contract.when, feature)
        bad = rows & target.violated
        examples = [(int(k), f"{contract.kind.value} broken") for k in target.keys[bad][:3]]
        return Measure(int(rows.sum()), int(bad.sum()), examples)


def read_rows(
    con: duckdb.DuckDBPyConnection, specs: list[tuple], wanted: list[tuple[str, str, str]],
    survey: Survey,
) -> tuple[dict[int, tuple], list[tuple]]:  # fmt: skip
    """Shard step: the targets' rows (:func:`target_rows_sql`) and the feature values of
    the (tool, side, path) in ``wanted``, each list in call key order."""
    return _target_rows(con, specs, survey), _feature_values(con, wanted)


def _merge(
    shards: list[tuple[dict[int, tuple], list[tuple]]], wanted: list[tuple[str, str, str]]
) -> tuple[dict[int, tuple], dict]:
    """The shards' target rows per target, and feature values per path, each in call key
    order across shards (a shard's keys need not all follow another's)."""
    pieces: dict[int, list[tuple]] = {}
    for found, _ in shards:
        for tid, columns in found.items():
            pieces.setdefault(tid, []).append(columns)
    rows: dict[int, tuple] = {}
    for tid, parts in pieces.items():
        if len(parts) == 1:
            rows[tid] = parts[0]
            continue
        keys = np.concatenate([p[0] for p in parts])
        tasks = [t for p in parts for t in p[1]]
        flags = np.concatenate([p[2] for p in parts])
        order = np.argsort(keys, kind="stable")
        rows[tid] = (keys[order], [tasks[i] for i in order], flags[order])
    values: dict[tuple[str, str, str], tuple[np.ndarray, list]] = {
        key: (np.zeros(0, dtype=np.int64), []) for key in wanted
    }
    found_values: dict[tuple[str, str, str], list[tuple[np.ndarray, list]]] = {}
    for _, features in shards:
        for tool, side, path, at_keys, decoded in features:
            found_values.setdefault((tool, side, path), []).append((at_keys, decoded))
    for where, shown_in in found_values.items():
        if len(shown_in) == 1:
            values[where] = shown_in[0]
            continue
        at = np.concatenate([ks for ks, _ in shown_in])
        shown = [v for _, vs in shown_in for v in vs]
        order = np.argsort(at, kind="stable")
        values[where] = (at[order], [shown[i] for i in order])
    return rows, values


def _slices(ids: np.ndarray) -> list[tuple[int, int]]:
    """The (start, end) of each run of equal ids in ``ids`` (sorted by id)."""
    starts = [0, *(np.flatnonzero(np.diff(ids)) + 1).tolist(), len(ids)]
    return list(itertools.pairwise(starts))


def _target_rows(
    con: duckdb.DuckDBPyConnection, specs: list[tuple], survey: Survey
) -> dict[int, tuple]:
    """Per target number: its calls' keys (numpy, in key order), tasks and whether each
    broke the property (numpy booleans)."""
    table = pa.table({
        "tid": list(range(len(specs))), "tool": [s[0] for s in specs],
        "side": [s[1] for s in specs], "path": [s[2] for s in specs],
        "kind": [s[3].value for s in specs],
        "parent": [parent_path(s[2]) if s[3] == Kind.PRESENT else None for s in specs],
    })  # fmt: skip
    con.register("_tm_targets", table)
    paths = {s[2] for s in specs} | {p for p in table.column("parent").to_pylist() if p}
    con.register("_tm_only", pa.table({"path": sorted(paths)}))
    try:
        found = con.sql(target_rows_sql(survey)).to_arrow_table()
    finally:
        con.unregister("_tm_targets")
        con.unregister("_tm_only")
    if found is None or not found.num_rows:
        return {}
    # sorted by target: each target's rows are one slice of the columns
    tids = found.column(0).to_numpy()
    keys = found.column(1).to_numpy().astype(np.int64)
    tasks = found.column(2).to_pylist()
    flags = found.column(3).fill_null(False).to_numpy(zero_copy_only=False).astype(bool)
    return {
        int(tids[start]): (keys[start:end], tasks[start:end], flags[start:end])
        for start, end in _slices(tids)
    }


def target_rows_sql(survey: Survey) -> str:
    """SQL: per target, each applicable call with its task and whether it broke the
    property (needs ``_tm_targets`` and ``_tm_only``, their paths and parents)."""
    numeric = "p.n_integer + p.n_number < p.n"
    return f"""
    WITH tm_call_paths AS MATERIALIZED ({call_paths_sql(survey, "_tm_only", dups=False)})
    SELECT t.tid, p.call_key, c.task, CASE t.kind
        WHEN 'non_empty' THEN p.n_empty > 0 OR p.n_len < p.n
        WHEN 'not_null' THEN p.n_null > 0
        WHEN 'non_negative' THEN p.n_neg > 0 OR {numeric}
        ELSE p.n_neg + p.n_zero > 0 OR {numeric} END AS violated
    FROM _tm_targets t JOIN tm_calls c ON c.tool = t.tool
    JOIN tm_call_paths p ON p.call_key = c.call_key AND p.side = t.side AND p.path = t.path
    WHERE t.kind <> 'present'
    UNION ALL
    SELECT t.tid, up.call_key, c.task, coalesce(NOT ch.present_ok, TRUE)
    FROM _tm_targets t JOIN tm_calls c ON c.tool = t.tool
    JOIN tm_call_paths up ON up.call_key = c.call_key AND up.side = t.side
                         AND up.path = t.parent AND up.n_object > 0
    LEFT JOIN tm_call_paths ch ON ch.call_key = up.call_key AND ch.side = t.side
                              AND ch.path = t.path
    WHERE t.kind = 'present'
    ORDER BY 1, 2
    """


def _feature_values(
    con: duckdb.DuckDBPyConnection, wanted: list[tuple[str, str, str]]
) -> list[tuple[str, str, str, np.ndarray, list]]:
    """Per (tool, side, path) of ``wanted`` found here: the call keys (numpy) and values
    there, in key order."""
    if not wanted:
        return []
    con.register("_tm_features", pa.table({
        "fid": list(range(len(wanted))), "tool": [w[0] for w in wanted],
        "side": [w[1] for w in wanted], "path": [w[2] for w in wanted]}))  # fmt: skip
    # one sort of all the rows, read back as columns: an ordered list per feature and
    # column sorted each list again, and a feature's lists on one thread
    try:
        table = con.sql("""
            SELECT f.fid, v.call_key, v.jtype, v.str, v.num, v.bool
            FROM _tm_features f JOIN tm_calls c ON c.tool = f.tool
            JOIN tm_values v ON v.call_key = c.call_key AND v.side = f.side AND v.path = f.path
            ORDER BY f.fid, v.call_key, v.jtype, v.str, v.num, v.bool
        """).to_arrow_table()
    finally:
        con.unregister("_tm_features")
    if table is None or not table.num_rows:
        return []
    fids = table.column("fid").to_numpy()
    keys = table.column("call_key").to_numpy().astype(np.int64)
    jtypes, texts, numbers, flags = (
        table.column(name).to_pylist() for name in ("jtype", "str", "num", "bool")
    )
    out = []
    for start, end in _slices(fids):
        tool, side, path = wanted[int(fids[start])]
        values = zip(jtypes[start:end], texts[start:end], numbers[start:end], flags[start:end],
                     strict=True)  # fmt: skip
        out.append((tool, side, path, keys[start:end], [_value(*v) for v in values]))
    return out


def _value(jtype: str, text: str | None, number: float | None, flag: bool | None) -> Any:
    """A stored value as Python reads its JSON (a number as a float, as DuckDB's
    ``to_json`` of the DOUBLE column would give it), without encoding and decoding it."""
    if jtype == "string":
        return text
    if jtype == "boolean":
        return flag
    if jtype == "null":
        return None
    return number


def _align(
    path: str, keys: np.ndarray, fkeys: np.ndarray, fvals: list, categories: list
) -> Feature:
    position = np.clip(np.searchsorted(fkeys, keys), 0, max(len(fkeys) - 1, 0))
    present = (fkeys[position] == keys) if len(fkeys) else np.zeros(len(keys), dtype=bool)
    if categories:
        values = np.empty(len(keys), dtype=object)
        for row in np.flatnonzero(present):
            values[row] = fvals[position[row]]
    else:
        values = np.full(len(keys), math.nan)
        for row in np.flatnonzero(present):
            value = fvals[position[row]]
            values[row] = float(value) if isinstance(value, int | float) else math.nan
    return Feature(path, present & _not_none(values, categories), values, categories)


def _not_none(values: np.ndarray, categories: list) -> np.ndarray:
    if categories:
        return np.array([v is not None for v in values], dtype=bool)
    return ~np.isnan(values)
