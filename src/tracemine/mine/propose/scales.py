"""Scale relations within one call: a result number that is a fixed multiple of another
number of the call (``amount_cents`` a hundred times ``amount``, a fee a fixed share of a
fare). A value in the wrong unit (×100) breaks the ratio by far more than its tolerance.

The ratio is fitted, so a fold's proposal is tested on its held-out fold with the ratio of
the other folds. Per pair, shard and task one SQL statement keeps the calls and the least
and greatest ratio as a bucket of ``STEP`` decades (about 0.46 %), with the calls whose
ratio is zero or negative. A context proposes the ratio when every call of its tasks lies
within ``MAX_SPREAD`` buckets of one sign; a held-out task breaks it when one of its
buckets lies outside the fitted band, and then all its calls are counted as violations
(an upper bound: a task's calls are not kept one by one). Pricing counts tasks.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

import duckdb
import pyarrow as pa

from tracemine.ingest.store import fetch_arrow
from tracemine.mine.profile.aggregates import Part, Survey, call_paths_sql, parts, unit_calls
from tracemine.mine.profile.shards import Shards, concat
from tracemine.mine.propose.context import MineContext, fold_membership
from tracemine.mine.propose.measure import Measure
from tracemine.model.contract import Contract

STEP = 0.002
"""Width of a ratio bucket in decades of log10."""
MAX_SPREAD = 4
"""Buckets a context's ratios may spread over (about 1.8 %) and still be one ratio."""
MARGIN = 1.5
"""Buckets of slack each side of the fitted ones in the exported band: a bucket rounds
its ratio, so a ratio one bucket past the last seen is still inside."""


@dataclass(frozen=True)
class TaskRatios:
    """One task's calls of one pair: how many, the least and greatest bucket of their
    ratio (None when every ratio was zero), and the zero and negative ones."""

    calls: int
    low: int | None
    high: int | None
    zeros: int
    negatives: int


@dataclass
class Scales:
    """Per ratio pair and fold, every task's :class:`TaskRatios`."""

    folds: dict[tuple[int, int], list[TaskRatios]] = field(default_factory=dict)
    members: dict[str, list[int]] = field(default_factory=dict)  # context → its folds

    def rows(self, pid: int, ctx: MineContext) -> list[TaskRatios]:
        out: list[TaskRatios] = []
        for fold in self.members.get(ctx.name, ()):
            out.extend(self.folds.get((pid, fold), ()))
        return out

    def fit(self, pid: int, ctx: MineContext) -> tuple[int, dict[str, float]] | None:
        """(tasks, params) of the ratio that held on every call of ``ctx``, or None."""
        rows = self.rows(pid, ctx)
        if not rows or any(r.zeros or r.low is None for r in rows):
            return None
        signs = {r.negatives == r.calls for r in rows}
        if len(signs) != 1 or any(0 < r.negatives < r.calls for r in rows):
            return None
        low = min(r.low for r in rows if r.low is not None)
        high = max(r.high for r in rows if r.high is not None)
        if high - low > MAX_SPREAD:
            return None
        centre = 10 ** ((low + high) / 2 * STEP)
        tolerance = 10 ** (((high - low) / 2 + MARGIN) * STEP) - 1
        ratio = -centre if signs.pop() else centre
        return len(rows), {"ratio": float(f"{ratio:.12g}"), "tolerance": round(tolerance, 6)}

    def measure(self, pid: int, contract: Contract, ctx: MineContext) -> Measure:
        ratio = float(contract.params["ratio"])
        tolerance = float(contract.params["tolerance"])
        centre, half = math.log10(abs(ratio)), math.log10(1 + tolerance) + 1e-9
        checked = violations = 0
        for r in self.rows(pid, ctx):
            checked += r.calls
            wrong_sign = r.negatives != (r.calls if ratio < 0 else 0)
            outside = (
                r.low is None
                or r.high is None
                or not (centre - half <= r.low * STEP and r.high * STEP <= centre + half)
            )
            if r.zeros or wrong_sign or outside:
                violations += r.calls
        return Measure(checked, violations)


def ratio_stats_sql(survey: Survey, part: Part) -> str:
    """SQL: per ratio pair of ``_tm_pairs``, fold and task of ``part``, the calls where
    both numbers are one number and the right one is not zero, their least and greatest
    ratio bucket and the zero and negative ratios."""
    per_call = call_paths_sql(survey, "_tm_only", part, dups=False, presence=False)
    num = "{0}.n = 1 AND {0}.n_integer + {0}.n_number = 1"
    return f"""
    WITH c AS MATERIALIZED (
        SELECT call_key, tool, fold, task FROM {unit_calls(part, fold=True)}
    ), cp AS (
        SELECT p.*, c.tool, c.task, c.fold FROM ({per_call}) p
        JOIN c ON c.call_key = p.call_key
    ), q AS (
        SELECT pr.pid, r.fold, r.task, l.nmin / r.nmin AS q
        FROM _tm_pairs pr
        JOIN cp r ON r.tool = pr.tool AND r.side = pr.rside AND r.path = pr.rpath
        JOIN cp l ON l.call_key = r.call_key AND l.side = pr.lside AND l.path = pr.lpath
        WHERE pr.kind = 'ratio' AND {num.format("r")} AND {num.format("l")} AND r.nmin <> 0
    ), b AS (
        SELECT *, CASE WHEN q <> 0 THEN CAST(round(log10(abs(q)) / {STEP}) AS BIGINT) END AS b
        FROM q WHERE isfinite(q)
    )
    SELECT pid, fold, task, count(*) AS calls, min(b) AS low, max(b) AS high,
           count(*) FILTER (q = 0) AS zeros, count(*) FILTER (q < 0) AS negatives
    FROM b GROUP BY pid, fold, task
    """


def ratio_stats(con: duckdb.DuckDBPyConnection, pairs: pa.Table, survey: Survey) -> pa.Table:
    """Shard step: :func:`ratio_stats_sql` over every part of the shard."""
    con.register("_tm_pairs", pairs)
    paths = set(pairs.column("lpath").to_pylist()) | set(pairs.column("rpath").to_pylist())
    con.register("_tm_only", pa.table({"path": sorted(paths)}))
    try:
        tables = [fetch_arrow(con, ratio_stats_sql(survey, part)) for part in parts(con)]
        return concat(tables)
    finally:
        con.unregister("_tm_pairs")
        con.unregister("_tm_only")


def load_scales(shards: Shards, pairs: pa.Table, survey: Survey, folds: int) -> Scales:
    """Every ratio pair's per-task rows, from every shard."""
    scales = Scales()
    members = fold_membership(folds)
    for fold, name in zip(members["fold"], members["ctx"], strict=True):
        scales.members.setdefault(name, []).append(fold)
    found: dict[tuple[int, int], list[TaskRatios]] = defaultdict(list)
    for table in shards.map(ratio_stats, pairs, survey, label="relations"):
        for row in table.to_pylist():
            found[(int(row["pid"]), int(row["fold"]))].append(TaskRatios(
                int(row["calls"]), row["low"], row["high"], int(row["zeros"]),
                int(row["negatives"])))  # fmt: skip
    scales.folds = dict(found)
    return scales
