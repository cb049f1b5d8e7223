"""Noisy contracts, marked in the evidence: a verdict that differs between nominal trials
of the same task, judged where the contract was not fitted.

An agent run is a sample, and a task mined from two trials or more tells how a contract
fares from one run of the task to the next. Each kept contract is replayed through the
monitor, in the version proposed on the other folds, on the runs of every held-out task
with two or more nominal runs; a run *violated* it when any call (or the run) did, and
*held* it when the contract was evaluated there and never violated. As for
``check --trials`` (:mod:`tracemine.gate.trials`), ``flip_rate`` is the share of pairs of
trials of one task whose verdicts differ, and ``flipped_tasks`` the tasks whose trials
disagree. Run-level contracts are replayed with their final parameters: the fold
versions of their fitted parameters (a call cap) are not kept.

At most ``MAX_TASKS`` tasks are replayed (the first by task id), so the cost stays
bounded however large the store.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import duckdb
import pyarrow as pa

from tracemine.mine.evidence.crossfit import Candidate
from tracemine.mine.profile.shards import Shards
from tracemine.model.contract import RUN_KINDS, Contract, ContractStatus
from tracemine.monitor import ContractLoadError, Monitor, replay
from tracemine.monitor.trials import Flips, flips, verdicts

MAX_TASKS = 400
"""Tasks with two or more nominal runs replayed, at most."""


_REPEATED = """
    WITH nominal AS (SELECT DISTINCT run_id, task FROM tm_calls)
    SELECT task FROM nominal GROUP BY task HAVING count(*) >= 2 ORDER BY task LIMIT ?
"""


def repeated_tasks(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Shard step: the first ``MAX_TASKS`` tasks (by name) of the shard with two or more
    nominal runs. A task lies in one shard, so the first tasks of the whole are among the
    first of the shards they lie in."""
    return [task for (task,) in con.execute(_REPEATED, [MAX_TASKS]).fetchall()]


def trial_rows(con: duckdb.DuckDBPyConnection, tasks: list[str] | None) -> list[tuple]:
    """Shard step: every call (any status) of the nominal runs of ``tasks`` (None: of the
    shard's :func:`repeated_tasks`)."""
    if tasks is None:
        tasks = repeated_tasks(con)
    con.register("_tm_trial_tasks", pa.table({"task": pa.array(tasks, pa.string())}))
    try:
        return con.execute(
            """
            WITH nominal AS (SELECT DISTINCT run_id, task FROM tm_calls
                             SEMI JOIN _tm_trial_tasks USING (task))
            SELECT c.run_id, n.task, r.family, c.seq, c.call_id, c.result_call_id, c.tool,
                   c.arguments, c.result, c.status
            FROM calls c JOIN nominal n USING (run_id) JOIN runs r USING (run_id)
            ORDER BY c.run_id, c.seq, c.call_key
            """
        ).fetchall()
    finally:
        con.unregister("_tm_trial_tasks")


def trial_runs(shards: Shards, tasks: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """Run id → every call (any status) of the nominal runs of ``tasks`` that have two or
    more nominal runs, up to ``MAX_TASKS`` tasks; ``task_id`` set to the mining task.
    With one store in one pass; with several, the shards name their first tasks, and only
    the calls of the first of all are read."""
    chosen: list[str] | None = None
    if not shards.client_is_store:
        chosen = sorted(t for found in shards.map(repeated_tasks, label="trial tasks")
                        for t in found)[:MAX_TASKS]  # fmt: skip
    found = shards.map(trial_rows, chosen, label="trials")
    rows = [row for shard in found for row in shard]
    wanted = set(tasks)
    out: dict[str, list[dict[str, Any]]] = {}
    for run_id, task, family, seq, cid, rcid, tool, arguments, result, status in rows:
        if task not in wanted:
            continue
        out.setdefault(run_id, []).append({
            "run_id": run_id, "task_id": task, "family": family, "seq": seq, "call_id": cid,
            "result_call_id": rcid, "tool": tool, "status": status,
            "arguments": json.loads(arguments) if arguments is not None else None,
            "result": json.loads(result) if result is not None else None})  # fmt: skip
    return dict(sorted(out.items())) if len(found) > 1 else out


def _monitor(contracts: list[Contract]) -> Monitor:
    """A monitor enforcing every one of ``contracts`` (none hidden behind another); one
    it would refuse is left out rather than failing the rest."""

    def document(items: list[Contract]) -> dict[str, Any]:
        dumped = [c.model_copy(update={"status": ContractStatus.ACCEPTED, "implied_by": None})
                  .model_dump(mode="json", include={"id", "tool", "side", "kind", "paths",
                                                    "params", "when", "status"})
                  for c in items]  # fmt: skip
        return {"schema_version": "1", "contracts": dumped}

    try:
        return Monitor.from_dict(document(contracts))
    except ContractLoadError:
        usable = []
        for contract in contracts:
            try:
                Monitor.from_dict(document([contract]))
            except ContractLoadError:
                continue
            usable.append(contract)
        return Monitor.from_dict(document(usable))


def measure_flips(
    shards: Shards,
    kept: Sequence[Contract],
    candidates: Mapping[str, Candidate],
    assignment: Mapping[str, int],
    folds: int,
) -> dict[str, Flips]:
    """Per kept contract id, how its held-out verdicts flip between trials of a task."""
    runs = trial_runs(shards, list(assignment))
    by_fold: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for calls in runs.values():
        by_fold[assignment[calls[0]["task_id"]]].extend(calls)
    grouped: dict[str, list[tuple[str, dict[str, bool]]]] = defaultdict(list)
    for fold in range(folds):
        held = by_fold.get(fold)
        if not held:
            continue
        versions = []
        for contract in kept:
            entry = candidates.get(contract.id)
            if contract.kind in RUN_KINDS:
                versions.append(contract)
            elif entry is not None and fold in entry.proposals:
                versions.append(entry.proposals[fold].model_copy(update={"id": contract.id}))
        if not versions:
            continue
        monitor = _monitor(versions)
        plans: dict[str, list[str]] = defaultdict(list)
        for spec in monitor.contracts:
            plans[spec.tool].append(spec.id)
        families = {rid: calls[0]["family"] for rid, calls in runs.items()}
        for replayed in replay(monitor, held, families=families):
            task = runs[replayed.run_id][0]["task_id"]
            grouped[task].append((replayed.run_id, verdicts(replayed, plans)))
    return flips(grouped)


def mark_noisy(
    shards: Shards,
    kept: list[Contract],
    candidates: Mapping[str, Candidate],
    assignment: Mapping[str, int],
    folds: int,
) -> list[Contract]:
    """``kept`` with ``trial_tasks``, ``flipped_tasks`` and ``flip_rate`` in the evidence
    of every contract some held-out task with two or more trials exercised."""
    found = measure_flips(shards, kept, candidates, assignment, folds)
    out = []
    for contract in kept:
        tally = found.get(contract.id)
        if tally is None or contract.evidence is None:
            out.append(contract)
            continue
        evidence = contract.evidence.model_copy(update={
            "trial_tasks": tally.tasks, "flipped_tasks": tally.flipped,
            "flip_rate": round(tally.rate, 4)})  # fmt: skip
        out.append(contract.model_copy(update={"evidence": evidence}))
    return out
