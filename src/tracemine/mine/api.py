"""``mine``: from the ingest store to a contract file of cross-fitted candidates."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from tracemine.errors import InputError, StoreError
from tracemine.ingest.store import connect, fetch_one, out_of_memory
from tracemine.ingest.taskkey import store_runs, suggest
from tracemine.mine.conditional import Conditional
from tracemine.mine.context import assign_folds, load_contexts, register_membership
from tracemine.mine.crossfit import Shared
from tracemine.mine.crossfit import crossfit as crossfit_tasks
from tracemine.mine.detect import estimate
from tracemine.mine.noise import mark_noisy
from tracemine.mine.profile import ensure_calls, ensure_profiles
from tracemine.mine.relations import Relations, find_pairs
from tracemine.mine.select import Settings, select
from tracemine.mine.trajectory import mine_runs
from tracemine.mine.where import parse_filters, where_sql
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
) -> ContractFile:
    """Mine candidate contracts from the nominal calls of the store at ``db``.

    Nominal calls ended ``ok`` in runs passing ``where`` (``"run_outcome=success"``).
    Tasks are split into ``folds`` seeded groups; candidates are proposed on the other
    folds and counted on each held-out one. Those proposed in ``min_folds`` folds
    (default ``folds - 1``) and supported by ``min_tasks`` distinct tasks are priced by
    their family's pooled false-alarm posterior, and each tool buys the ones that catch
    the most injected faults while the predicted share of its calls alarmed stays within
    ``target_fa`` (:mod:`tracemine.mine.select`); ``provenance["selection"]`` says, per
    tool, what was predicted and why a tool kept nothing. ``budget=False`` keeps every
    eligible candidate instead (to review what cross-fitting found; the predicted rate
    of that set is still written, and may exceed ``target_fa``).
    Without task ids give ``task_key`` (a run field, metadata key or ``regex:``) or
    ``crossfit=False``. Profiles are stored in the database and reused while its calls
    and these filters stay the same. With ``run_level`` the run-level contracts (prior
    calls, provenance, call caps, expected tools per family, completeness) are mined from
    the same runs and folds, and judged per run (:mod:`tracemine.mine.trajectory`).

    >>> contracts = mine("traces.duckdb", where="run_outcome=success")  # doctest: +SKIP
    >>> contracts.contracts[0].description  # doctest: +SKIP
    'result.total_cents >= 0'
    """
    started = time.perf_counter()
    if crossfit and folds < 2:
        raise InputError(f"--folds must be at least 2 to cross-fit (got {folds})")
    if not 0 < target_fa < 1:
        raise InputError(f"--target-fa must be between 0 and 1 (got {target_fa})")
    filters = parse_filters(where if where is None or isinstance(where, str) else list(where))
    if not Path(db).exists():
        raise StoreError(f"{db}: no such database; run `tracemine ingest` first")
    con = connect(db, memory_limit=MINE_MEMORY_LIMIT)
    step = "reading the nominal calls"  # what an out-of-memory error names
    try:
        _require_tasks(con, filters, task_key, crossfit, folds)
        info = ensure_calls(con, filters, task_key)
        task_calls, tool_sizes = _task_calls(con, tools)
        if crossfit and len(task_calls) < folds:
            raise InputError(
                f"{len(task_calls)} tasks with nominal calls, fewer than --folds {folds}; "
                "lower --folds or give --no-crossfit"
            )
        assignment = (
            assign_folds(task_calls, folds, seed) if crossfit else dict.fromkeys(task_calls, 0)
        )
        names = register_membership(con, assignment, folds if crossfit else 0)
        step = "building the profiles"
        info = ensure_profiles(con, info, assignment)
        step = "summing the profiles of each fold"
        contexts = load_contexts(con, names, FOLD_SUPPORT, info.survey, assignment, info.per_fold)
        _only(contexts, tools)
        every = contexts["all"]
        survey = info.survey
        step = "reading conditional targets"
        shared = Shared(
            Relations(find_pairs(every)), Conditional.build(con, every, assignment, survey)
        )
        assert shared.relations is not None
        step = "counting relations"
        shared.relations.load(con, contexts, survey)
        for ctx in contexts.values():
            ctx.shared = shared
        step = "counting held-out violations"
        candidates = crossfit_tasks(con, contexts, survey)
        settings = Settings(folds if crossfit else 0, target_fa, min_tasks,
                            min_folds if min_folds is not None else max(folds - 1, 1),
                            crossfit, budget)  # fmt: skip
        finals = [c.final for c in candidates.values() if c.final is not None]
        step = "estimating detection"
        faults = estimate(con, finals, seed)
        chosen = select(candidates, settings, lambda keys: _calls(con, keys), tool_sizes, faults)
        kept, summary = chosen.kept, chosen.summary
        run_summary: dict[str, dict[str, int]] = {}
        if run_level:
            step = "mining run-level contracts"
            runs_kept, run_summary = mine_runs(con, assignment, settings, FOLD_SUPPORT, tools)
            kept += runs_kept
        if crossfit:
            step = "replaying trials for noisy contracts"
            kept = mark_noisy(con, kept, candidates, assignment, settings.folds)
        for name in ("_tm_membership", "_tm_folds", "_tm_fold_membership"):
            con.unregister(name)
    except duckdb.OutOfMemoryException:
        raise out_of_memory("mining", step, MINE_MEMORY_LIMIT) from None
    finally:
        con.close()
    provenance: dict[str, Any] = {
        "store": str(db),
        "params": {
            "folds": folds if crossfit else 0, "target_fa": target_fa, "min_tasks": min_tasks,
            "min_folds": settings.min_folds, "tools": sorted(tools) if tools else None,
            "where": [f.text for f in filters], "task_key": task_key, "crossfit": crossfit,
            "seed": seed, "run_level": run_level, "budget": budget,
        },
        "profile": {"fingerprint": info.fingerprint, "reused": info.reused,
                    "per": "fold" if info.per_fold else "task",
                    "profiles_reused": info.profiles_reused,
                    "calls": info.calls, "tasks": info.tasks, "runs": info.runs,
                    "runs_without_task": info.runs_without_task,
                    # objects keyed by ids, read as maps: their key step is {*}
                    "maps": [{"tool": t, "path": p} for t, p in info.survey.maps]},
        "summary": summary,
        "selection": {
            "target": f"at most {target_fa:g} of each tool's nominal calls alarmed by its "
            "kept call-level contracts",
            "rule": (SELECTION_RULE if budget else ELIGIBLE_RULE)
            if crossfit
            else f"no cross-fitting: every candidate supported by {min_tasks} tasks is kept",
            "tools": chosen.tools,
            "families": chosen.families,
        },
        **({"run_summary": run_summary} if run_level else {}),
        "seconds": round(time.perf_counter() - started, 3),
    }  # fmt: skip
    return ContractFile(generated_at=datetime.now(UTC), provenance=provenance, contracts=kept)


def _require_tasks(
    con: duckdb.DuckDBPyConnection, filters: list, task_key: str | None, crossfit: bool,
    folds: int,
) -> None:  # fmt: skip
    where, params = where_sql(filters)
    row = fetch_one(con, f"SELECT count(*), count(task_id) FROM runs r WHERE {where}", params)
    runs, with_task = (int(row[0]), int(row[1])) if row else (0, 0)
    if runs == 0:
        raise InputError("no runs in the store pass --where; nothing to mine")
    if crossfit and with_task == 0 and task_key is None:
        found = suggest(store_runs(con, where, params), at_least=folds)
        said = "".join(f"\n  {s}" for s in found) or f" none (no key gives {folds} tasks)"
        raise InputError(
            "no run has a task id, so tasks cannot be held out; give --task-key (a run "
            "field, metadata key or regex:PATTERN over run ids) or --no-crossfit. "
            f"What these runs carry would give:{said}"
        )


def _task_calls(
    con: duckdb.DuckDBPyConnection, tools: Sequence[str] | None
) -> tuple[dict[str, int], dict[str, tuple[int, int]]]:
    """Nominal calls per task (of ``tools``), and (calls, tasks) per tool."""
    rows = con.execute("SELECT tool, task, count(*) FROM tm_calls GROUP BY ALL").fetchall()
    known = {tool for tool, _, _ in rows}
    unknown = sorted(set(tools or ()) - known)
    if unknown:
        raise InputError(
            f"--tool {', '.join(unknown)}: no nominal calls of that tool; "
            f"tools in the store: {', '.join(sorted(known)) or 'none'}"
        )
    out: dict[str, int] = {}
    sizes: dict[str, tuple[int, int]] = {}
    for tool, task, count in rows:
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


def _calls(con: duckdb.DuckDBPyConnection, keys: list[int]) -> dict[int, dict]:
    if not keys:
        return {}
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
