"""Conditional contracts: a property that fails overall but holds under a predicate on the
arguments or on a result status field (``non_empty result.orders when args.status ==
"open"``).

For each such *target* (a parameter-free unary property broken on some, not most, calls)
the calls' argument and status features are read once; per fold a shallow scikit-learn
decision tree predicting the violation is grown on the training tasks, and a node without
violations whose conditions all test one feature becomes the predicate.

A target checked on more than :data:`SAMPLE_CALLS` calls is read on a sample of its tasks,
of about that many calls: a task is in it when its hash falls below the target's share,
a rule each shard applies to its own tasks, so the sample (and every fit) is the same
whether the corpus is one store or many, and what the client holds does not grow with
the corpus. The counts of a sampled target (a candidate's calls and tasks, its held-out
checks and violations) are those of the sample scaled by the inverse of its share.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tracemine.mine.profile.aggregates import Survey, call_paths_sql, plain_scans
from tracemine.mine.profile.formats import looks_personal, name_tokens, words
from tracemine.mine.profile.shards import Shards
from tracemine.mine.propose.context import MineContext, PathProfile
from tracemine.mine.propose.measure import Measure, parent_path, unary
from tracemine.model.contract import Contract, Kind, Predicate

TARGET_KINDS = (Kind.NON_EMPTY, Kind.PRESENT, Kind.NOT_NULL, Kind.NON_NEGATIVE, Kind.POSITIVE)
MAX_TARGETS = 40
MIN_CHECKED = 20
MAX_VIOLATION_SHARE = 0.8
MAX_CATEGORIES = 12
SAMPLE_CALLS = 20_000
"""Calls a target is read on at most, about: larger targets are read on a sample of tasks."""
SAMPLE_BUCKETS = 1 << 20
"""A task is in a sample of share s when ``hash(task) % SAMPLE_BUCKETS < s * SAMPLE_BUCKETS``."""
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
    scale: float = 1.0
    """The inverse of the share of tasks read (1.0: every task of the target)."""

    def scaled(self, count: int) -> int:
        """A count on the rows read, as an estimate on all the target's calls."""
        return count if self.scale == 1.0 else round(count * self.scale)


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
    listing = ctx.values.get((profile.tool, profile.side, profile.path))
    if json_type in ("integer", "number") and profile.side == "args":
        # a threshold on card numbers would say one: the values listed are screened too
        return listing is None or not any(looks_personal(v, tokens) for v in listing.counts)
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
        checked: dict[tuple, int] = {}
        for profile in ctx.profiles():
            for kind in TARGET_KINDS:
                found = unary(kind, {}, profile.tool, profile.side, profile.path, ctx)
                if kind in (Kind.NON_NEGATIVE, Kind.POSITIVE) and profile.json_type not in (
                        "integer", "number"):  # fmt: skip
                    continue
                share = found.violations / found.checked if found.checked else 1.0
                if found.checked >= MIN_CHECKED and 0 < share <= MAX_VIOLATION_SHARE:
                    specs.append((profile.tool, profile.side, profile.path, kind))
                    checked[specs[-1]] = found.checked
        specs = sorted(set(specs))[:MAX_TARGETS]
        if not specs:
            return cls([])
        features = {
            tool: [p for p in ctx.profiles(tool) if _is_feature(p, ctx)]
            for tool in {s[0] for s in specs}
        }
        keep = [sample_buckets(checked[s]) for s in specs]
        # a feature is read on the calls of the largest sample of its tool's targets
        most: dict[str, int] = {}
        for spec, buckets in zip(specs, keep, strict=True):
            most[spec[0]] = max(most.get(spec[0], 0), buckets)
        wanted = [(p.tool, p.side, p.path) for ps in features.values() for p in ps]
        tasks, rows, values = _merge(
            shards.map(read_rows, specs, wanted, survey, keep, [most[w[0]] for w in wanted],
                       label="conditional"),
            wanted,
        )  # fmt: skip
        fold_of_task = np.asarray([folds.get(t, -1) for t in tasks], dtype=np.int64)
        # a feature's values, decoded once for all the targets of its tool
        shown: dict[tuple[tuple[str, str, str], bool], tuple[np.ndarray, np.ndarray]] = {}
        targets = []
        for tid, (tool, side, path, kind) in enumerate(specs):
            if tid not in rows:
                continue
            keys, task_numbers, violated = rows[tid]
            target = Target(tool, side, path, kind, keys, fold_of_task[task_numbers],
                            task_numbers, violated, scale=SAMPLE_BUCKETS / keep[tid])  # fmt: skip
            for profile in features[tool]:
                if profile.side == side and profile.path == path:
                    continue
                listing = ctx.values.get((tool, profile.side, profile.path))
                categories = sorted(listing.counts, key=str) if listing else []
                if profile.json_type in ("integer", "number") and profile.side == "args":
                    categories = []
                where = (tool, profile.side, profile.path)
                decoded = (where, bool(categories))
                if decoded not in shown:
                    fkeys, table = values[where]
                    shown[decoded] = (fkeys, _feature_array(table, categories))
                fkeys, fvalues = shown[decoded]
                target.features.append(_align(profile.path, keys, fkeys, fvalues, categories))
            targets.append(target)
        return cls(targets)

    def sampled(self) -> dict[str, Any] | None:
        """What the provenance says of the targets read on a sample (None: none was)."""
        shares = [{"tool": t.tool, "side": t.side, "path": t.path, "kind": t.kind.value,
                   "share": round(1 / t.scale, 6), "calls": len(t.keys)}
                  for t in self.targets.values() if t.scale != 1.0]  # fmt: skip
        if not shares:
            return None
        return {"calls": SAMPLE_CALLS, "rule": "a target checked on more calls is read on "
                "the tasks whose hash falls below its share; its counts are scaled by the "
                "inverse of the share", "targets": sorted(shares, key=str)}  # fmt: skip

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
        # rows are in content order (target_rows_sql), so the first are the same whatever
        # order the store holds the calls in
        examples = [((), int(k), f"{contract.kind.value} broken") for k in target.keys[bad][:3]]
        return Measure(target.scaled(int(rows.sum())), target.scaled(int(bad.sum())), examples)


def sample_buckets(checked: int) -> int:
    """Of :data:`SAMPLE_BUCKETS` task hash buckets, how many a target checked on
    ``checked`` calls is read on: all of them up to :data:`SAMPLE_CALLS` calls, else a
    share of about ``SAMPLE_CALLS / checked``."""
    if checked <= SAMPLE_CALLS:
        return SAMPLE_BUCKETS
    return max(SAMPLE_BUCKETS * SAMPLE_CALLS // checked, 1)


def read_rows(
    con: duckdb.DuckDBPyConnection, specs: list[tuple], wanted: list[tuple[str, str, str]],
    survey: Survey, keep: list[int] | None = None, keep_features: list[int] | None = None,
) -> tuple[tuple[list[str], dict[int, tuple]], pa.Table | None]:  # fmt: skip
    """Shard step: the targets' rows (:func:`_target_rows`) and the feature values of the
    (tool, side, path) in ``wanted`` (:func:`_feature_values`), each on the tasks of
    its sample (``keep``, ``keep_features``: the hash buckets read; all by default). What
    it returns is numbers and Arrow columns, a few bytes a call: a task is a number into
    one list of the shard's task names, not a string a row."""
    every = SAMPLE_BUCKETS
    # the targets' per-call rows read the whole store: each half of them scans it, where
    # one shared scan would first hold every value of the store (plain_scans)
    with plain_scans(con):
        return (_target_rows(con, specs, survey, keep or [every] * len(specs)),
                _feature_values(con, wanted, keep_features or [every] * len(wanted)))  # fmt: skip


def _merge(
    shards: list[tuple[tuple[list[str], dict[int, tuple]], pa.Table | None]],
    wanted: list[tuple[str, str, str]],
) -> tuple[list[str], dict[int, tuple], dict]:
    """The tasks named by the shards (a task's number indexes this list), the target
    rows per target, in the order of what the calls said (then task, run and position)
    across shards as within one, and the feature values per path, in call key order (a shard's
    keys need not all follow another's)."""
    number: dict[str, int] = {}
    pieces: dict[int, list[tuple]] = {}
    for (names, found), _ in shards:
        renumber = np.asarray([number.setdefault(n, len(number)) for n in names], dtype=np.int64)
        for tid, (keys, tasks, flags, contents) in found.items():
            pieces.setdefault(tid, []).append((keys, renumber[tasks], flags, contents))
    task_names = np.asarray(list(number), dtype=str)
    rows: dict[int, tuple] = {}
    for tid, parts in pieces.items():
        keys, tasks, flags, contents = (np.concatenate([p[i] for p in parts]) for i in range(4))
        if len(parts) > 1:
            # stable: a task's rows come from one shard, already in run and seq order
            order = np.lexsort((task_names[tasks], contents))
            keys, tasks, flags = keys[order], tasks[order], flags[order]
        rows[tid] = (keys, tasks, flags)
    values: dict[tuple[str, str, str], tuple[np.ndarray, pa.Table | None]] = {
        key: (np.zeros(0, dtype=np.int64), None) for key in wanted
    }
    tables = [t for _, t in shards if t is not None and t.num_rows]
    if tables:
        table = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
        fids = table.column("fid").to_numpy()
        at = table.column("call_key").to_numpy().astype(np.int64)
        if len(tables) > 1:  # by feature, then key; a tie keeps the shards' order
            order = np.lexsort((at, fids))
            table, fids, at = table.take(order), fids[order], at[order]
        for start, end in _slices(fids):
            values[wanted[int(fids[start])]] = (at[start:end], table.slice(start, end - start))
    return list(number), rows, values


def _slices(ids: np.ndarray) -> list[tuple[int, int]]:
    """The (start, end) of each run of equal ids in ``ids`` (sorted by id)."""
    starts = [0, *(np.flatnonzero(np.diff(ids)) + 1).tolist(), len(ids)]
    return list(itertools.pairwise(starts))


def _target_rows(
    con: duckdb.DuckDBPyConnection, specs: list[tuple], survey: Survey, keep: list[int]
) -> tuple[list[str], dict[int, tuple]]:
    """The tasks of the rows, and per target number its calls' keys, the number of each
    one's task in that list, whether it broke the property and the hash of what the call
    said (numpy), in the order of that hash, then task, run and position: the trees are
    grown, and counterexamples picked, on rows in an order the calls decide, not the
    order a file listed them in."""
    table = pa.table({
        "tid": list(range(len(specs))), "tool": [s[0] for s in specs],
        "side": [s[1] for s in specs], "path": [s[2] for s in specs],
        "kind": [s[3].value for s in specs],
        "parent": [parent_path(s[2]) if s[3] == Kind.PRESENT else None for s in specs],
        "keep": pa.array(keep, pa.int64()),
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
        return [], {}
    # sorted by target: each target's rows are one slice of the columns
    tids = found.column(0).to_numpy()
    keys = found.column(1).to_numpy().astype(np.int64)
    tasks = found.column(2).combine_chunks().dictionary_encode()
    numbers = tasks.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    flags = found.column(3).fill_null(False).to_numpy(zero_copy_only=False).astype(bool)
    contents = found.column(4).to_numpy(zero_copy_only=False).astype(np.uint64)
    rows = {
        int(tids[start]): (keys[start:end], numbers[start:end], flags[start:end],
                           contents[start:end])
        for start, end in _slices(tids)
    }  # fmt: skip
    return tasks.dictionary.to_pylist(), rows


def target_rows_sql(survey: Survey) -> str:
    """SQL: per target, each applicable call with its task and whether it broke the
    property (needs ``_tm_targets`` and ``_tm_only``, their paths and parents)."""
    numeric = "p.n_integer + p.n_number < p.n"
    sampled = f"hash(c.task) % {SAMPLE_BUCKETS} < t.keep"
    return f"""
    WITH tm_call_paths AS MATERIALIZED ({call_paths_sql(survey, "_tm_only", dups=False)})
    SELECT t.tid, p.call_key, c.task, CASE t.kind
        WHEN 'non_empty' THEN p.n_empty > 0 OR p.n_len < p.n
        WHEN 'not_null' THEN p.n_null > 0
        WHEN 'non_negative' THEN p.n_neg > 0 OR {numeric}
        ELSE p.n_neg + p.n_zero > 0 OR {numeric} END AS violated,
        c.content, c.run_id, coalesce(c.seq, -1) AS seq
    FROM _tm_targets t JOIN tm_calls c ON c.tool = t.tool
    JOIN tm_call_paths p ON p.call_key = c.call_key AND p.side = t.side AND p.path = t.path
    WHERE t.kind <> 'present' AND {sampled}
    UNION ALL
    SELECT t.tid, up.call_key, c.task, coalesce(NOT ch.present_ok, TRUE), c.content,
           c.run_id, coalesce(c.seq, -1)
    FROM _tm_targets t JOIN tm_calls c ON c.tool = t.tool
    JOIN tm_call_paths up ON up.call_key = c.call_key AND up.side = t.side
                         AND up.path = t.parent AND up.n_object > 0
    LEFT JOIN tm_call_paths ch ON ch.call_key = up.call_key AND ch.side = t.side
                              AND ch.path = t.path
    WHERE t.kind = 'present' AND {sampled}
    ORDER BY tid, content, task, run_id, seq, call_key
    """


def _feature_values(
    con: duckdb.DuckDBPyConnection, wanted: list[tuple[str, str, str]], keep: list[int]
) -> pa.Table | None:
    """The values at the (tool, side, path) of ``wanted``, on the tasks of the hash
    buckets below ``keep`` (per feature), as Arrow columns: the feature's
    number in ``wanted`` (``fid``), the call key and the stored value's columns, sorted by
    feature and key (and value, for a call with more than one). They are decoded into
    Python values only for the rows a target reads (:func:`_align`)."""
    if not wanted:
        return None
    con.register("_tm_features", pa.table({
        "fid": list(range(len(wanted))), "tool": [w[0] for w in wanted],
        "side": [w[1] for w in wanted], "path": [w[2] for w in wanted],
        "keep": pa.array(keep, pa.int64())}))  # fmt: skip
    # one sort of all the rows, read back as columns: an ordered list per feature and
    # column sorted each list again, and a feature's lists on one thread
    try:
        return con.sql(f"""
            SELECT f.fid, v.call_key, v.jtype, v.str, v.num, v.bool
            FROM _tm_features f JOIN tm_calls c ON c.tool = f.tool
            JOIN tm_values v ON v.call_key = c.call_key AND v.side = f.side AND v.path = f.path
            WHERE hash(c.task) % {SAMPLE_BUCKETS} < f.keep
            ORDER BY f.fid, v.call_key, v.jtype, v.str, v.num, v.bool
        """).to_arrow_table()
    finally:
        con.unregister("_tm_features")


def _feature_array(table: pa.Table | None, categories: list) -> np.ndarray:
    """The values of a feature's rows of :func:`_feature_values`: as Python reads their
    JSON (equal values one object) for a categorical feature, else as floats (a number,
    a boolean as 1 or 0, anything else NaN)."""
    if table is None:
        return np.zeros(0, dtype=object if categories else np.float64)
    if not categories:
        jtype = table.column("jtype")
        numbers = table.column("num").to_numpy(zero_copy_only=False).astype(np.float64)
        flags = table.column("bool").to_numpy(zero_copy_only=False)
        numeric = pc.is_in(jtype, pa.array(["integer", "number"])).to_numpy(zero_copy_only=False)
        boolean = pc.equal(jtype, "boolean").to_numpy(zero_copy_only=False)
        out = np.full(table.num_rows, math.nan)
        out[numeric] = numbers[numeric]
        known = boolean & pc.is_valid(table.column("bool")).to_numpy(zero_copy_only=False)
        out[known] = flags[known].astype(np.float64)
        return out
    columns = (table.column(name).to_pylist() for name in ("jtype", "str", "num", "bool"))
    one: dict[tuple[type, Any], Any] = {}  # by type too: True, 1.0 and 1 are equal keys
    values = np.empty(table.num_rows, dtype=object)
    for row, v in enumerate(zip(*columns, strict=True)):
        value = _value(*v)
        values[row] = one.setdefault((type(value), value), value)
    return values


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
    path: str, keys: np.ndarray, fkeys: np.ndarray, fvalues: np.ndarray, categories: list
) -> Feature:
    position = np.clip(np.searchsorted(fkeys, keys), 0, max(len(fkeys) - 1, 0))
    present = (fkeys[position] == keys) if len(fkeys) else np.zeros(len(keys), dtype=bool)
    rows = np.flatnonzero(present)
    values = np.empty(len(keys), dtype=object) if categories else np.full(len(keys), math.nan)
    values[rows] = fvalues[position[rows]]
    return Feature(path, present & _not_none(values, categories), values, categories)


def _not_none(values: np.ndarray, categories: list) -> np.ndarray:
    if categories:
        return np.array([v is not None for v in values], dtype=bool)
    return ~np.isnan(values)
