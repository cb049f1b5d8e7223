"""Held-out counts of fitted contracts, kept in the store for the next mine.

A fitted contract (a range, a length, a value set, a pattern) is counted on its held-out
fold with the parameters the other folds gave it, so its counts cannot come from the
profiles: they read the fold's values. But a fold whose tasks were all counted before,
unchanged and in the same fold, and which only gained tasks, has as counts the stored
ones plus those of the tasks it gained: the tasks are disjoint, counts add, and the
first counterexamples of the whole are the first of the two lists merged. So the store
keeps, per version of a fitted contract (what its count reads: tool, side, path, kind,
parameters, and the path survey) and fold, its counts and first counterexamples
(``tm_heldout_counts``), and the task digests and folds they were counted on
(``tm_heldout_digests``). Mining again after new traces of new tasks then counts each
fitted contract seen before on the new tasks only; a contract whose parameters moved,
or a fold that lost or changed a task (another seed, ``--replace``, a new trial of an
old task), is counted whole, as before.

A store of few tasks has its folds dealt by balancing calls over every task
(:func:`~tracemine.mine.propose.context.assign_folds`), so new tasks usually move old
ones between folds, and then every fold is counted whole: what this saves there is a
mine of the same calls again (other thresholds, ``--min-tasks``, ``--max-per-tool``),
where every fold is unchanged and no value is read. From ``STABLE_FOLD_TASKS`` tasks a
fold on, a task's fold is a hash of its name, and a mine after traces of new tasks counts
the new tasks only.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

import duckdb
import pyarrow as pa

from tracemine.ingest.store import transaction
from tracemine.mine.profile.aggregates import Survey, survey_print, task_digests_sql
from tracemine.mine.profile.shards import folds_table, has_table
from tracemine.mine.propose.measure import Measure, add_measures, count_fitted
from tracemine.model.contract import Contract

Item = tuple[int, int, Contract]
"""(item number, held-out fold, the contract the other folds fitted)."""


def version(contract: Contract, survey: str) -> str:
    """What a fitted contract's held-out count depends on, hashed (``survey``: the
    survey's print)."""
    said = [contract.tool, contract.side.value, contract.paths[0], contract.kind.value,
            contract.params, survey]  # fmt: skip
    return hashlib.sha256(json.dumps(said, sort_keys=True, default=str).encode()).hexdigest()[:24]


def _grown_folds(con: duckdb.DuckDBPyConnection) -> set[int]:
    """The folds all of whose tasks when the counts were stored are still there, with
    the same calls and in the same fold (``_tm_task_digests``, ``_tm_now_folds``)."""
    rows = con.execute(
        """SELECT o.fold, bool_and(n.task IS NOT NULL AND n.calls = o.calls
                                   AND n.digest = o.digest AND f.fold = o.fold)
           FROM tm_heldout_digests o LEFT JOIN _tm_task_digests n ON n.task = o.task
           LEFT JOIN _tm_now_folds f ON f.task = o.task GROUP BY o.fold"""
    ).fetchall()
    return {int(fold) for fold, grown in rows if grown}


def _stored(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, int], Measure]:
    rows = con.execute(
        "SELECT version, fold, checked, violations, examples FROM tm_heldout_counts"
    ).fetchall()
    return {
        (str(v), int(fold)): Measure(int(checked), int(violations), [
            (tuple(order), int(key), str(shown)) for order, key, shown in json.loads(examples)])
        for v, fold, checked, violations, examples in rows
    }  # fmt: skip


def kept_counts(
    con: duckdb.DuckDBPyConnection, survey: Survey, items: list[Item],
    assignment: Mapping[str, int],
) -> dict[int, Measure]:  # fmt: skip
    """:func:`~tracemine.mine.propose.measure.count_fitted` on one store (needs
    ``_tm_folds``), reusing and then replacing the counts the store keeps."""
    printed = survey_print(survey)
    versions = {item: version(contract, printed) for item, _, contract in items}
    con.execute(f"CREATE OR REPLACE TEMP TABLE _tm_task_digests AS {task_digests_sql()}")
    con.register("_tm_now_folds", folds_table(assignment))
    try:
        stored: dict[tuple[str, int], Measure] = {}
        grown: set[int] = set()
        if has_table(con, "tm_heldout_counts") and has_table(con, "tm_heldout_digests"):
            grown = _grown_folds(con)
            stored = _stored(con) if grown else {}
        again = [i for i in items if i[1] in grown and (versions[i[0]], i[1]) in stored]
        whole = [i for i in items if not (i[1] in grown and (versions[i[0]], i[1]) in stored)]
        out = count_fitted(con, survey, whole) if whole else {}
        if again:
            # the tasks not counted before in their fold as they are now
            con.execute(
                """CREATE OR REPLACE TEMP TABLE _tm_added AS SELECT f.task FROM _tm_now_folds f
                   JOIN _tm_task_digests n ON n.task = f.task
                   LEFT JOIN tm_heldout_digests o ON o.task = f.task
                   WHERE o.task IS NULL OR o.fold <> f.fold OR o.calls <> n.calls
                         OR o.digest <> n.digest"""
            )
            new = count_fitted(con, survey, again, only="_tm_added")
            con.execute("DROP TABLE _tm_added")
            kept = {item: stored[(versions[item], fold)] for item, fold, _ in again}
            out.update(add_measures([kept, {item: new[item] for item, _, _ in again}]))
        _keep(con, items, versions, out)
        return out
    finally:
        con.unregister("_tm_now_folds")
        con.execute("DROP TABLE IF EXISTS _tm_task_digests")


def _keep(
    con: duckdb.DuckDBPyConnection, items: list[Item], versions: dict[int, str],
    out: dict[int, Measure],
) -> None:  # fmt: skip
    """Replace the stored counts with this mine's, and the digests with its tasks'."""
    rows: dict[tuple[str, int], Measure] = {}
    for item, fold, _ in items:
        rows.setdefault((versions[item], fold), out[item])
    keys = list(rows)
    table = pa.table({
        "version": pa.array([v for v, _ in keys], pa.string()),
        "fold": pa.array([f for _, f in keys], pa.int64()),
        "checked": pa.array([rows[k].checked for k in keys], pa.int64()),
        "violations": pa.array([rows[k].violations for k in keys], pa.int64()),
        "examples": pa.array([json.dumps(rows[k].examples) for k in keys], pa.string()),
    })  # fmt: skip
    con.register("_tm_counts", table)
    try:
        with transaction(con):
            con.execute("CREATE OR REPLACE TABLE tm_heldout_counts AS SELECT * FROM _tm_counts")
            con.execute(
                "CREATE OR REPLACE TABLE tm_heldout_digests AS SELECT d.*, f.fold "
                "FROM _tm_task_digests d JOIN _tm_now_folds f ON f.task = d.task"
            )
    finally:
        con.unregister("_tm_counts")
