"""Where the evaluation's runs come from (the simulator or trace files) and how their tasks
are split, task-disjoint and seeded, into a mining set and an evaluation set."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracemine.errors import InputError
from tracemine.ingest import read_traces
from tracemine.ingest.taskkey import TaskKey, suggest
from tracemine.simulate import OPENAPI_DOCUMENTS, runs_from_records, simulate, write_openapi


@dataclass(slots=True)
class Source:
    """Runs in the writers' shape (see :mod:`tracemine.simulate`), every one with a
    ``task_id``, the declared specs that describe their tools, and what was assumed."""

    label: str
    runs: list[dict[str, Any]]
    specs: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Split:
    mining: list[dict[str, Any]]
    evaluation: list[dict[str, Any]]
    mining_tasks: int
    evaluation_tasks: int


def from_suite(suite: str, tasks: int, trials: int, seed: int, out: Path) -> Source:
    """Simulated runs; the suite's OpenAPI documents are written into ``out``."""
    runs = simulate(suite, tasks=tasks, seed=seed, trials=trials)
    domains = list(OPENAPI_DOCUMENTS) if suite == "all" else [suite]
    specs = [
        write_openapi(out / OPENAPI_DOCUMENTS[d], d) for d in domains if d in OPENAPI_DOCUMENTS
    ]
    label = f"simulator: suite {suite}, {tasks} tasks x {trials} trials, seed {seed}"
    source = Source(label, runs, specs)
    if not specs:
        source.notes.append(f"the simulated suite {suite!r} has no OpenAPI document")
    return source


def from_traces(paths: Sequence[str | Path], task_key: str | None) -> Source:
    """Runs read from trace files (any ingest format). A run without a task id under
    ``task_key`` counts as its own task, and the report says how many did."""
    key = TaskKey.parse(task_key) if task_key else None
    runs: list[dict[str, Any]] = []
    notes: list[str] = []
    quarantined = 0
    for path in paths:
        traces = read_traces(path)
        quarantined += len(traces.quarantined)
        tasks = {r["run_id"]: key.task_id(r) if key else r.get("task_id") for r in traces.runs}
        for run in runs_from_records(traces.runs, traces.calls):
            run["task_id"] = tasks.get(run["run_id"]) or run.get("task_id")
            for call in run["calls"]:
                call.pop("run_id", None)  # the run carries it; the replay adds it back
            runs.append(run)
    if not runs:
        raise InputError("the trace files hold no runs to evaluate on")
    orphans = [run for run in runs if not run.get("task_id")]
    if orphans and key is None:
        found = suggest(runs)
        hint = "".join(f"; {s}" for s in found if s.tasks < s.covered)
    else:
        hint = ""
    for run in orphans:
        run["task_id"] = f"run:{run['run_id']}"
    if orphans:
        notes.append(
            f"{len(orphans)} of {len(runs)} runs have no task id; each counts as its own task "
            f"(give --task-key to group runs of one task{hint})"
        )
    if quarantined:
        notes.append(f"{quarantined} items of the trace files could not be read (left out)")
    label = "traces: " + ", ".join(Path(p).name for p in paths)
    return Source(label, runs, notes=notes)


def split_tasks(runs: list[dict[str, Any]], eval_share: float, folds: int, seed: int) -> Split:
    """Deal whole tasks to the evaluation set (``eval_share`` of them, seeded) and the rest
    to the mining set, which keeps at least ``folds`` tasks so cross-fitting can run."""
    if not 0.0 < eval_share < 1.0:
        raise InputError(f"--eval-share must be between 0 and 1 (got {eval_share})")
    tasks = sorted({str(run["task_id"]) for run in runs})
    # the seed string, not hash(): the same seed splits alike under any PYTHONHASHSEED
    random.Random(f"tracemine-evaluate/{seed}").shuffle(tasks)
    held = max(1, round(eval_share * len(tasks)))
    if len(tasks) - held < max(folds, 2):
        raise InputError(
            f"{len(tasks)} tasks: too few to keep {held} for evaluation and mine on at least "
            f"{max(folds, 2)}; give more tasks, a smaller --eval-share or fewer --folds"
        )
    evaluation = set(tasks[:held])
    return Split(
        mining=[run for run in runs if str(run["task_id"]) not in evaluation],
        evaluation=[run for run in runs if str(run["task_id"]) in evaluation],
        mining_tasks=len(tasks) - held,
        evaluation_tasks=held,
    )
