"""``mine``: from the ingest store to a contract file of cross-fitted candidates."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from tracemine import _gc
from tracemine.errors import InputError, StoreError
from tracemine.ingest.store import (
    MEMORY_SETTING,
    connect,
    out_of_memory,
    ran_out_of_memory,
    sql_string,
    writing,
)
from tracemine.ingest.taskkey import suggest
from tracemine.mine.evidence.crossfit import Shared
from tracemine.mine.evidence.crossfit import crossfit as crossfit_tasks
from tracemine.mine.evidence.detect import estimate
from tracemine.mine.evidence.noise import mark_noisy
from tracemine.mine.evidence.schema import add_catches, schemas
from tracemine.mine.profile.shards import LocalShards, Shards
from tracemine.mine.profile.state import ensure_calls, ensure_profiles, run_counts, runs_of
from tracemine.mine.profile.where import Filter, parse_filters
from tracemine.mine.propose.conditional import Conditional
from tracemine.mine.propose.context import (
    assign_folds,
    folds_dealt,
    load_contexts,
    register_membership,
)
from tracemine.mine.propose.relations import Relations, find_pairs
from tracemine.mine.runs.trajectory import mine_runs
from tracemine.mine.select.budget import MAX_PER_TOOL, Settings, select
from tracemine.model.contract import ContractFile

SELECTION_RULE = (
    "per tool, candidates proposed on every task and in min_folds folds are priced at "
    "their family's pooled posterior mean false-alarm rate per task (held-out calls "
    "counted in tasks) times the share of the tool's calls they check, and bought "
    "greedily by estimated detection of injected faults per unit of price while the sum "
    "of prices (predicted_fa, an upper estimate of the share of calls alarmed) stays "
    "within target_fa"
)
ELIGIBLE_RULE = (
    "no budget: every candidate proposed on every task and in min_folds folds is kept; "
    "predicted_fa is the sum of their prices and may exceed target_fa"
)
FOLD_SUPPORT = 2
"""Distinct tasks a template needs in one context before it proposes anything."""
# DuckDB's buffers while mining. Profiles, pair counts and held-out counts run a part of
# the tasks at a time (profile.PART_CALLS), so they need a fraction of this; conditional
# mining reads the whole store, but only the few paths it targets and their parents. The
# cap keeps DuckDB from caching the whole store as it reads it, which without one grows
# with the store.
# TRACEMINE_DUCKDB_MEMORY overrides it.
MINE_MEMORY_LIMIT: str | None = "1GB"
STAGE_MEMORY: dict[str, str] = {"relations": "640MB", "held-out counts": "320MB"}
"""DuckDB's cap from each of these stages on, in a mine of one store at the default cap.
Whatever DuckDB reads of the store stays in its buffers up to its cap, and once the
profiles are built the later statements need a fraction of it (a part of the tasks at a
time) while Python holds the contexts, then the candidates: past the profiles, a cap of
1GB was a cache of the store beside them (at 250k real-wide calls, 0.7 GB of it beside
the candidates). ``TRACEMINE_DUCKDB_MEMORY`` sets one cap for the whole mine instead."""


@dataclass(frozen=True)
class Options:
    """A mine's settings (see :func:`mine`), checked."""

    folds: int = 5
    target_fa: float = 0.01
    min_tasks: int = 5
    tools: tuple[str, ...] | None = None
    filters: tuple[Filter, ...] = ()
    task_key: str | None = None
    crossfit: bool = True
    seed: int = 0
    min_folds: int | None = None
    run_level: bool = False
    budget: bool = True
    max_per_tool: int | None = MAX_PER_TOOL

    @classmethod
    def of(cls, *, where: str | Sequence[str] | None = None, tools: Sequence[str] | None = None,
           **settings: Any) -> Options:  # fmt: skip
        """Options from :func:`mine`'s keywords; a bad value is an :class:`InputError`."""
        options = cls(tools=tuple(tools) if tools else None, **settings)
        if options.crossfit and options.folds < 2:
            raise InputError(f"--folds must be at least 2 to cross-fit (got {options.folds})")
        if not 0 < options.target_fa < 1:
            raise InputError(f"--target-fa must be between 0 and 1 (got {options.target_fa})")
        if options.max_per_tool is not None and options.max_per_tool < 1:
            raise InputError(f"--max-per-tool must be at least 1 (got {options.max_per_tool})")
        texts = where if where is None or isinstance(where, str) else list(where)
        return replace(options, filters=tuple(parse_filters(texts)))


def mine(
    db: str | Path,
    *,
    folds: int = 5,
    target_fa: float = 0.01,
    min_tasks: int = 5,
    tools: Sequence[str] | None = None,
    where: str | Sequence[str] | None = None,
    task_key: str | None = None,
    crossfit: bool = True,
    seed: int = 0,
    min_folds: int | None = None,
    run_level: bool = False,
    budget: bool = True,
    max_per_tool: int | None = MAX_PER_TOOL,
    progress: Callable[[str], None] | None = None,
) -> ContractFile:
    """Mine candidate contracts from the nominal calls of the store at ``db``.

    Nominal calls ended ``ok`` in runs passing ``where`` (``"run_outcome=success"``).
    Tasks are split into ``folds`` seeded groups; candidates are proposed on the other
    folds and counted on each held-out one. Those proposed in ``min_folds`` folds
    (default ``folds - 1``) and supported by ``min_tasks`` distinct tasks are priced by
    their family's pooled false-alarm posterior, and each tool buys the ones that catch
    the most injected faults while the predicted share of its calls alarmed stays within
    ``target_fa`` (:mod:`tracemine.mine.select.budget`); ``provenance["selection"]`` says, per
    tool, what was predicted and why a tool kept nothing. ``budget=False`` keeps every
    eligible candidate instead (to review what cross-fitting found; the predicted rate
    of that set is still written, and may exceed ``target_fa``). Within the budget a tool
    keeps at most ``max_per_tool`` contracts besides its schemas, the first bought
    (``None``: no cap); ``provenance["selection"]["tools"]`` names what the cap dropped.
    Without task ids give ``task_key`` (a run field, metadata key or ``regex:``) or
    ``crossfit=False``. Profiles are stored in the database and reused while its calls
    and these filters stay the same. With ``run_level`` the run-level contracts (prior
    calls, provenance, call caps, expected tools per family, completeness) are mined from
    the same runs and folds, and judged per run (:mod:`tracemine.mine.runs.trajectory`).
    :func:`tracemine.mine_sharded` mines trace files spread over many machines into the
    same contracts. ``progress`` is called with the name of each stage as it starts
    (:data:`STAGES`).

    >>> contracts = mine("traces.duckdb", where="run_outcome=success")  # doctest: +SKIP
    >>> contracts.contracts[0].description  # doctest: +SKIP
    'result.total_cents >= 0'
    """
    options = Options.of(
        folds=folds, target_fa=target_fa, min_tasks=min_tasks, tools=tools, where=where,
        task_key=task_key, crossfit=crossfit, seed=seed, min_folds=min_folds,
        run_level=run_level, budget=budget, max_per_tool=max_per_tool,
    )  # fmt: skip
    if not Path(db).exists():
        raise StoreError(f"{db}: no such database; run `tracemine ingest` first")
    # mining writes its profiles into the store: one writer at a time, as for ingest
    caps = None if os.environ.get(MEMORY_SETTING) else STAGE_MEMORY
    # the cyclic collector off (_gc): a mine builds no cycles, and a wide store's mine
    # holds millions of containers (contexts, then candidates) that each full collection
    # walked again, for nothing (20 of them at 50k real-wide calls, 10 objects collected)
    with writing(db), closing(connect(db, memory_limit=MINE_MEMORY_LIMIT)) as con, _gc.paused():
        return mine_shards(LocalShards([con], client_is_store=True), con, str(db), options,
                           progress, caps)  # fmt: skip


STAGES = ("reading", "profiles", "relations", "held-out counts", "detection estimate",
          "selection", "run-level", "trials")  # fmt: skip
"""The stages a mine reports to its ``progress`` callback, in order (the last two only
with ``run_level`` and cross-fitting)."""


def mine_shards(
    shards: Shards, client: duckdb.DuckDBPyConnection, store: str, options: Options,
    progress: Callable[[str], None] | None = None,
    caps: dict[str, str] | None = None,
) -> ContractFile:  # fmt: skip
    """Mine the nominal calls of ``shards`` (:mod:`tracemine.mine.profile.shards`); ``client``
    holds the merged profiles (with one store, the store itself) and ``store`` is what
    the provenance names as the source. ``caps``: DuckDB's memory cap on ``client`` from
    each named stage on (:data:`STAGE_MEMORY`)."""
    started = time.perf_counter()
    o = options
    filters = list(o.filters)
    limit = MINE_MEMORY_LIMIT  # the cap in force, as an out-of-memory error names it

    def stage(name: str, step: str) -> str:
        nonlocal limit
        if progress is not None:
            progress(name)
        if caps and name in caps:
            limit = caps[name]
            client.execute(f"SET memory_limit = {sql_string(limit)}")
        return step  # what an out-of-memory error names

    step = stage("reading", "reading the nominal calls")
    try:
        _require_tasks(shards, filters, o.task_key, o.crossfit, o.folds)
        info = ensure_calls(shards, client, filters, o.task_key)
        task_calls, tool_sizes = _task_calls(info.tool_tasks, o.tools)
        if o.crossfit and len(task_calls) < o.folds:
            raise InputError(
                f"{len(task_calls)} tasks with nominal calls, fewer than --folds {o.folds}; "
                "lower --folds or give --no-crossfit"
            )
        assignment = (
            assign_folds(task_calls, o.folds, o.seed) if o.crossfit
            else dict.fromkeys(task_calls, 0)
        )  # fmt: skip
        names = register_membership(client, assignment, o.folds if o.crossfit else 0)
        step = stage("profiles", "building the profiles")
        info = ensure_profiles(shards, client, info, assignment)
        step = "summing the profiles of each fold"
        contexts = load_contexts(client, names, FOLD_SUPPORT, info.survey, assignment,
                                 info.per_fold, info.tool_tasks)  # fmt: skip
        _only(contexts, o.tools)
        every = contexts["all"]
        survey = info.survey
        step = stage("relations", "reading conditional targets")
        shared = Shared(
            Relations(find_pairs(every)), Conditional.build(shards, every, assignment, survey)
        )
        assert shared.relations is not None
        step = "counting relations"
        shared.relations.load(shards, client, contexts, survey, per_task=info.per_task)
        for ctx in contexts.values():
            ctx.shared = shared
        step = stage("held-out counts", "counting held-out violations")
        candidates = crossfit_tasks(shards, contexts, survey, assignment)
        added = schemas(candidates, contexts)
        # the profiles, pair counts and conditional rows are read no more: a wide store's
        # contexts are a row per context and path, freed before the candidates are priced
        sample = shared.conditional.sampled() if shared.conditional is not None else None
        del contexts, every, shared
        settings = Settings(o.folds if o.crossfit else 0, o.target_fa, o.min_tasks,
                            o.min_folds if o.min_folds is not None else max(o.folds - 1, 1),
                            o.crossfit, o.budget, o.max_per_tool)  # fmt: skip
        finals = [c.final for c in candidates.values() if c.final is not None]
        step = stage("detection estimate", "estimating detection")
        faults = estimate(shards, finals, o.seed)
        add_catches(added, faults)
        step = stage("selection", "selecting contracts")
        chosen = select(candidates, settings, lambda keys: call_info(shards, keys), tool_sizes,
                        faults)  # fmt: skip
        kept, summary = chosen.kept, chosen.summary
        run_summary: dict[str, dict[str, int]] = {}
        if o.run_level:
            step = stage("run-level", "mining run-level contracts")
            runs_kept, run_summary = mine_runs(shards, assignment, settings, FOLD_SUPPORT,
                                               o.tools)  # fmt: skip
            kept += runs_kept
        if o.crossfit:
            step = stage("trials", "replaying trials for noisy contracts")
            kept = mark_noisy(shards, kept, candidates, assignment, settings.folds)
        for name in ("_tm_membership", "_tm_folds", "_tm_fold_membership"):
            client.unregister(name)
    except duckdb.Error as exc:
        if not ran_out_of_memory(exc):
            raise
        raise out_of_memory("mining", step, limit) from None
    provenance: dict[str, Any] = {
        "store": store,
        "params": {
            "folds": o.folds if o.crossfit else 0,
            # how tasks were dealt to folds: balancing calls, or by a hash of the task
            "folds_dealt": folds_dealt(len(task_calls), o.folds) if o.crossfit else None,
            "target_fa": o.target_fa,
            "min_tasks": o.min_tasks, "min_folds": settings.min_folds,
            "tools": sorted(o.tools) if o.tools else None, "where": [f.text for f in filters],
            "task_key": o.task_key, "crossfit": o.crossfit, "seed": o.seed,
            "run_level": o.run_level, "budget": o.budget,
            "max_per_tool": o.max_per_tool,
        },
        "profile": {"fingerprint": info.fingerprint, "reused": info.reused,
                    "per": "fold" if info.per_fold else "task",
                    "profiles_reused": info.profiles_reused,
                    # tasks whose profile rows this mine built (the others' were stored)
                    "tasks_built": info.tasks_built,
                    "calls": info.calls, "tasks": info.tasks, "runs": info.runs,
                    "runs_without_task": info.runs_without_task,
                    # objects keyed by ids, read as maps: their key step is {*}
                    "maps": [{"tool": t, "path": p} for t, p in info.survey.maps],
                    **({"conditional_sample": sample} if sample else {})},
        "summary": summary,
        "selection": {
            "target": f"at most {o.target_fa:g} of each tool's nominal calls alarmed by its "
            "kept call-level contracts",
            "rule": (SELECTION_RULE if o.budget else ELIGIBLE_RULE)
            if o.crossfit
            else f"no cross-fitting: every candidate supported by {o.min_tasks} tasks is kept",
            "tools": chosen.tools,
            "families": chosen.families,
        },
        **({"run_summary": run_summary} if o.run_level else {}),
        "seconds": round(time.perf_counter() - started, 3),
    }  # fmt: skip
    return ContractFile(generated_at=datetime.now(UTC), provenance=provenance, contracts=kept)


def _require_tasks(
    shards: Shards, filters: list, task_key: str | None, crossfit: bool, folds: int
) -> None:
    counts = shards.map(run_counts, filters, label="runs")
    runs, with_task = sum(r for r, _ in counts), sum(t for _, t in counts)
    if runs == 0:
        raise InputError("no runs in the store pass --where; nothing to mine")
    if crossfit and with_task == 0 and task_key is None:
        found = suggest([r for rs in shards.map(runs_of, filters) for r in rs], at_least=folds)
        said = "".join(f"\n  {s}" for s in found) or f" none (no key gives {folds} tasks)"
        raise InputError(
            "no run has a task id, so tasks cannot be held out; give --task-key (a run "
            "field, metadata key or regex:PATTERN over run ids) or --no-crossfit. "
            f"What these runs carry would give:{said}"
        )


def _task_calls(
    tool_tasks: list[tuple[str, str, int]], tools: Sequence[str] | None
) -> tuple[dict[str, int], dict[str, tuple[int, int]]]:
    """Nominal calls per task (of ``tools``), and (calls, tasks) per tool."""
    known = {tool for tool, _, _ in tool_tasks}
    unknown = sorted(set(tools or ()) - known)
    if unknown:
        raise InputError(
            f"--tool {', '.join(unknown)}: no nominal calls of that tool; "
            f"tools in the store: {', '.join(sorted(known)) or 'none'}"
        )
    out: dict[str, int] = {}
    sizes: dict[str, tuple[int, int]] = {}
    for tool, task, count in tool_tasks:
        if not tools or tool in tools:
            out[task] = out.get(task, 0) + int(count)
            calls, tasks = sizes.get(tool, (0, 0))
            sizes[tool] = (calls + int(count), tasks + 1)
    return out, dict(sorted(sizes.items()))


def _only(contexts: dict, tools: Sequence[str] | None) -> None:
    if not tools:
        return
    for ctx in contexts.values():
        ctx.tool_calls = {t: n for t, n in ctx.tool_calls.items() if t in tools}
        ctx.paths = {k: v for k, v in ctx.paths.items() if k[0] in tools}
        ctx.values = {k: v for k, v in ctx.values.items() if k[0] in tools}
        ctx.shapes = {k: v for k, v in ctx.shapes.items() if k[0] in tools}


def call_keys(con: duckdb.DuckDBPyConnection, keys: list[int]) -> dict[int, dict]:
    """Shard step: where the calls of ``keys`` that this shard holds come from."""
    rows = con.execute(
        "SELECT call_key, run_id, task, call_id, seq FROM tm_calls WHERE call_key IN "
        "(SELECT unnest(?))",
        [keys],
    ).fetchall()
    return {
        int(k): {"run_id": run, "task_id": None if task.startswith("run:") else task,
                 "call_id": call, "seq": seq}
        for k, run, task, call, seq in rows
    }  # fmt: skip


def call_info(shards: Shards, keys: list[int]) -> dict[int, dict]:
    """Run, task, call id and position of the nominal calls of ``keys`` (counterexamples)."""
    if not keys:
        return {}
    return {k: v for found in shards.map(call_keys, keys, label="counterexamples")
            for k, v in found.items()}  # fmt: skip
