"""Contracts as a polars DataFrame, one row a contract, for review in a notebook."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import polars as pl

from tracemine.model.contract import RUN_KINDS, Contract, ContractFile
from tracemine.review.apply import is_stale

SCHEMA: dict[str, Any] = {
    "id": pl.String, "tool": pl.String, "side": pl.String, "kind": pl.String,
    "path": pl.String, "paths": pl.List(pl.String), "when": pl.String,
    "description": pl.String, "sources": pl.List(pl.String), "source": pl.String,
    "label": pl.String, "status": pl.String, "run_level": pl.Boolean,
    "implied_by": pl.String, "calls": pl.Int64, "tasks": pl.Int64, "folds": pl.Int64,
    "folds_proposed": pl.Int64, "heldout_calls": pl.Int64, "heldout_violations": pl.Int64,
    "fa_upper": pl.Float64, "counterexamples": pl.Int64, "reviewer": pl.String,
    "reason": pl.String, "decided_at": pl.Datetime("us", "UTC"), "stale": pl.Boolean,
    "flipped_tasks": pl.Int64, "flip_rate": pl.Float64,
}  # fmt: skip
"""Columns of :func:`contracts_frame`, in order."""


def _row(c: Contract) -> dict[str, Any]:
    e, d = c.evidence, c.decision
    return {
        "id": c.id, "tool": c.tool, "side": c.side.value, "kind": c.kind.value,
        "path": c.paths[0] if c.paths else "", "paths": list(c.paths),
        "when": c.when.render() if c.when else None, "description": c.description,
        "sources": [s.value for s in c.sources], "source": "+".join(s.value for s in c.sources),
        "label": c.label.value if c.label else None, "status": c.status.value,
        "run_level": c.kind in RUN_KINDS, "implied_by": c.implied_by,
        "calls": e.calls if e else None, "tasks": e.tasks if e else None,
        "folds": e.folds if e else None, "folds_proposed": e.folds_proposed if e else None,
        "heldout_calls": e.heldout_calls if e else None,
        "heldout_violations": e.heldout_violations if e else None,
        "fa_upper": e.fa_upper if e else None,
        "counterexamples": len(e.counterexamples) if e else 0,
        "reviewer": d.reviewer if d else None, "reason": d.reason if d else None,
        "decided_at": d.at if d else None, "stale": is_stale(c),
        "flipped_tasks": e.flipped_tasks if e else None, "flip_rate": e.flip_rate if e else None,
    }  # fmt: skip


def contracts_frame(contracts: ContractFile | Iterable[Contract]) -> pl.DataFrame:
    """One row per contract: scope, kind, sources and merge label, status and decision,
    and the evidence counts (support, held-out checks, the false-alarm bound, the tasks
    whose trials disagree on it: ``flipped_tasks > 0`` is a noisy contract).

    >>> frame = contracts_frame(load_contracts("mined_contracts/candidates.json"))  # doctest: +SKIP
    >>> frame.group_by("tool", "status").len()  # doctest: +SKIP
    """
    items = contracts.contracts if isinstance(contracts, ContractFile) else contracts
    return pl.DataFrame([_row(c) for c in items], schema=SCHEMA)


def summarise(frame: pl.DataFrame, by: str | Sequence[str]) -> pl.DataFrame:
    """Counts per group, one column per status, plus the median support and the share of
    contracts whose held-out check found a violation; largest groups first."""
    keys = [by] if isinstance(by, str) else list(by)
    if frame.is_empty():
        return pl.DataFrame(schema={**{k: frame.schema[k] for k in keys}, "contracts": pl.UInt32})
    counts = frame.group_by(keys).agg(
        pl.len().alias("contracts"),
        *[(pl.col("status") == s).sum().alias(s) for s in ("proposed", "accepted", "rejected",
                                                           "muted")],
        pl.col("tasks").median().alias("median_tasks"),
        (pl.col("heldout_violations").fill_null(0) > 0).mean().round(3).alias("violated_share"),
    )  # fmt: skip
    return counts.sort(["contracts", *keys], descending=[True, *[False] * len(keys)])


def evidence_frame(contract: Contract) -> pl.DataFrame:
    """The contract's counterexamples (run, task, call, what was observed) as a frame."""
    rows = [c.model_dump() for c in contract.evidence.counterexamples] if contract.evidence else []
    schema = {"run_id": pl.String, "task_id": pl.String, "call_id": pl.String, "seq": pl.Int64,
              "observed": pl.String}  # fmt: skip
    return pl.DataFrame(rows, schema=schema)
