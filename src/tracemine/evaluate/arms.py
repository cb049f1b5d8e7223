"""The arms' contracts: the mining set is ingested into a store, mined with and without
cross-fitting, the specs' declared contracts extracted and merged, and a plain JSON Schema
inferred per tool (:mod:`tracemine.evaluate.schema`). Every contract file (and the
schemas) is written beside the report, so what each arm enforced can be reviewed."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tracemine._atomic import write_atomic
from tracemine.errors import TracemineError
from tracemine.evaluate import schema
from tracemine.evaluate.schema import InferredSchemas, infer_schemas
from tracemine.ingest import ingest
from tracemine.mine import mine
from tracemine.model.contract import ContractFile, MergeLabel, save_contracts
from tracemine.monitor import Monitor
from tracemine.openapi import merge_files
from tracemine.simulate import write_traces

Progress = Callable[[str], None]


@dataclass(slots=True)
class Arm:
    """One arm as the scorer needs it: a monitor and the contracts behind it, or the
    status-only harness (no monitor: it reads call statuses), or why it could not be built.
    ``schemas``: inferred JSON Schemas checked beside the monitor (which then holds no
    contracts, only the gate)."""

    name: str
    monitor: Monitor | None
    contracts: ContractFile | None = None
    note: str = ""
    status_only: bool = False
    schemas: InferredSchemas | None = None

    @property
    def size(self) -> int:
        """What the arm enforces: its monitor's contracts, or its schemas."""
        if self.schemas is not None:
            return len(self.schemas.schemas)
        return len(self.monitor.contracts) if self.monitor is not None else 0

    @property
    def available(self) -> bool:
        return self.monitor is not None or self.status_only


def build_arms(
    mining: list[dict[str, Any]],
    specs: Sequence[Path],
    out: Path,
    *,
    folds: int,
    target_fa: float,
    min_tasks: int,
    seed: int,
    progress: Progress,
) -> list[Arm]:
    """Ingest ``mining`` into ``out/mining.duckdb`` and build every arm. Contracts go to
    the monitor with ``include_proposed=True``: an evaluation has no reviewer."""
    db = out / "mining.duckdb"
    db.unlink(missing_ok=True)  # a store left by an earlier split must not leak into this one
    traces = write_traces(mining, out / "mining.jsonl.gz", "flat")
    progress(f"ingest the mining set ({len(mining)} runs)")
    ingest([traces], db)
    folder = out / "contracts"
    folder.mkdir(parents=True, exist_ok=True)
    arms = [Arm("status-only", None, status_only=True), _schema_arm(mining, folder)]

    def mined(crossfit: bool) -> ContractFile:
        # run-level contracts too: provenance and prior-call faults pass every call check
        return mine(db, folds=folds, target_fa=target_fa, min_tasks=min_tasks,
                    crossfit=crossfit, seed=seed, run_level=True)  # fmt: skip

    progress("mine without cross-fitting")
    plain = _attempt(lambda: mined(False))
    progress(f"mine with {folds}-fold task cross-fitting")
    crossfit = _attempt(lambda: mined(True))
    declared: ContractFile | str = "no spec given: nothing declared"
    merged: ContractFile | str = "no spec given: the merged arm would be mined-crossfit"
    if specs:
        progress(f"declared contracts and the merge ({', '.join(p.name for p in specs)})")
        declared = _attempt(lambda: merge_files(ContractFile(), specs, db=db).merged)
        if isinstance(crossfit, ContractFile):
            chosen = crossfit
            merged = _attempt(lambda: merge_files(chosen, specs, db=db).merged)
        else:
            merged = crossfit
    for name, result in (("declared", declared), ("mined-no-crossfit", plain),
                         ("mined-crossfit", crossfit), ("merged", merged)):  # fmt: skip
        if isinstance(result, str):
            arms.append(Arm(name, None, note=result))
            continue
        held_back = 0
        if name == "merged":
            # the merge flags drift between spec and traces for a person to settle; a
            # contract the nominal traces contradict is a question, not a check
            kept = [c for c in result.contracts if c.label != MergeLabel.OBSERVED_VIOLATES_DECLARED]
            held_back = len(result.contracts) - len(kept)
            result = result.model_copy(update={"contracts": kept})
        save_contracts(result, folder / f"{name}.json")
        try:
            monitor = Monitor.from_dict(result.model_dump(mode="json"), include_proposed=True)
        except Exception as exc:
            # a monitor refusing (or failing on) one arm's contracts is a finding of the
            # evaluation: report it on that arm and score the others
            note = f"the monitor could not load these contracts: {type(exc).__name__}: {exc}"
            arms.append(Arm(name, None, result, note=note[:300]))
            continue
        contradicted = sum(
            c.label == MergeLabel.OBSERVED_VIOLATES_DECLARED for c in result.contracts
        )
        note = (
            f"{contradicted} contracts labelled observed-violates-declared are enforced too"
            if contradicted
            else f"{held_back} contracts labelled observed-violates-declared are left to "
            "review, not enforced"
            if held_back
            else ""
        )
        arms.append(Arm(name, monitor, result, note=note))
    order = ["status-only", "declared", schema.NAME, "mined-no-crossfit", "mined-crossfit",
             "merged"]  # fmt: skip
    return sorted(arms, key=lambda arm: order.index(arm.name))


def _schema_arm(mining: list[dict[str, Any]], folder: Path) -> Arm:
    """The GenSON baseline: the gate (a monitor with no contracts) and the schemas, written
    to ``folder/inferred-schema.json``; unavailable, saying why, without GenSON."""
    why = schema.unavailable()
    if why is not None:
        return Arm(schema.NAME, None, note=why)
    try:
        inferred = infer_schemas(mining)
    except Exception as exc:  # a baseline failing on odd values is reported, not fatal
        return Arm(schema.NAME, None, note=f"not built: {type(exc).__name__}: {exc}"[:300])
    write_atomic(folder / f"{schema.NAME}.json",
                 json.dumps(inferred.document(), indent=2, ensure_ascii=False) + "\n")  # fmt: skip
    gate = Monitor.from_dict(ContractFile().model_dump(mode="json"), include_proposed=True)
    calls = sum(len(run["calls"]) for run in mining)
    note = (f"{len(inferred.schemas)} schemas (tool × side) inferred from {calls} mining "
            "calls; its contracts column counts schemas")  # fmt: skip
    return Arm(schema.NAME, gate, note=note, schemas=inferred)


def _attempt(build: Callable[[], ContractFile]) -> ContractFile | str:
    """The contracts, or why they could not be mined or merged (the arm is then reported
    as unavailable while the other arms are still scored)."""
    try:
        return build()
    except TracemineError as exc:
        return f"not built: {exc}"
