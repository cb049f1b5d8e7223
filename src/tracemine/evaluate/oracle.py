"""The ``oracle-peeking`` arm and selection efficiency.

A selection rule can only keep what mining proposed, and can only judge it on the mining
set. The oracle is what a rule that could see the evaluation runs would keep: every
``mined-no-crossfit`` contract that raises no alarm on the nominal evaluation runs. It is
not a deployable arm — it peeks at the very runs it is scored on — but it is the yardstick
that says how much of the detection on offer a real selection keeps:

    selection efficiency = arm's mean detection over covered classes
                           ÷ the oracle's mean detection over covered classes

An arm enforcing contracts the oracle dropped (the no-crossfit arm, or declared ones) can
exceed 1: it buys that detection with false alarms the oracle refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tracemine.evaluate.arms import Arm
from tracemine.evaluate.model import ArmResult
from tracemine.evaluate.score import Alarm, replay_runs
from tracemine.model.contract import ContractFile, save_contracts
from tracemine.monitor import Monitor

PEEKING = "oracle-peeking"
BASE = "mined-no-crossfit"
ROUNDS = 5
"""Dropping a contract can wake one it hid (``implied_by``); a few rounds reach the point
where nothing kept alarms, and the note says so if they did not."""


def alarmed_contracts(found: Iterable[list[Alarm]]) -> set[str]:
    """Ids of the contracts a receipt violation or a run-level violation names (gate gaps
    name no contract and are left alone)."""
    return {a.name for alarms in found for a in alarms if a.source in ("violation", "run")}


def peeking_arm(arms: list[Arm], nominal: list[dict[str, Any]], folder: Path | None = None) -> Arm:
    """The oracle arm: the ``mined-no-crossfit`` arm's contracts minus every one that raises
    an alarm when ``nominal`` (the nominal evaluation runs) are replayed through them.

    Its contract file is written to ``folder/oracle-peeking.json`` when ``folder`` is given.
    """
    base = next((arm for arm in arms if arm.name == BASE), None)
    if base is None or base.monitor is None or base.contracts is None:
        why = base.note if base is not None and base.note else "it was not built"
        return Arm(PEEKING, None, note=f"no {BASE} arm to filter: {why}"[:300])
    contracts, monitor = base.contracts, base.monitor
    dropped: set[str] = set()
    settled = False
    for _ in range(ROUNDS):
        alarmed = alarmed_contracts(replay_runs(Arm(PEEKING, monitor, contracts), nominal).values())
        if not alarmed - dropped:
            settled = True
            break
        dropped |= alarmed
        kept = [c for c in base.contracts.contracts if c.id not in dropped]
        contracts = filtered(base.contracts, kept, dropped)
        monitor = Monitor.from_dict(contracts.model_dump(mode="json"), include_proposed=True)
    if folder is not None:
        save_contracts(contracts, folder / f"{PEEKING}.json")
    total = len(base.contracts.contracts)
    note = (
        f"peeks at the evaluation runs: {len(dropped & _ids(base.contracts))} of {total} "
        f"{BASE} contracts (enforced or hidden behind a stronger one) dropped for alarming on "
        "nominal evaluation runs"
    )
    if not settled:
        note += f"; contracts still alarmed after {ROUNDS} rounds of dropping"
    return Arm(PEEKING, monitor, contracts, note=note)


def filtered(source: ContractFile, kept: list[Any], dropped: set[str]) -> ContractFile:
    """``source`` with only ``kept``; its provenance records what was dropped and why."""
    provenance = {
        **source.provenance,
        "oracle": {"base": BASE, "dropped": sorted(dropped & _ids(source)),
                   "why": "alarmed on a nominal evaluation run (peeking)"},
    }  # fmt: skip
    return source.model_copy(update={"contracts": kept, "provenance": provenance})


def selection_efficiency(arms: list[ArmResult]) -> None:
    """Set every arm's ``selection_efficiency`` against the oracle's mean detection."""
    oracle = next((a for a in arms if a.arm == PEEKING and a.available), None)
    reference = oracle.detection_covered if oracle is not None else None
    for arm in arms:
        arm.selection_efficiency = efficiency(arm.detection_covered, reference)


def efficiency(detection: float | None, reference: float | None) -> float | None:
    """``detection / reference``; ``None`` when either is unmeasured or the oracle detects
    nothing (a ratio to zero says nothing).

    >>> efficiency(0.6, 0.8)
    0.75
    """
    if detection is None or reference is None or reference <= 0.0:
        return None
    return detection / reference


def _ids(contracts: ContractFile) -> set[str]:
    return {c.id for c in contracts.contracts}
