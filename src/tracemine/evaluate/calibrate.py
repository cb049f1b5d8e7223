"""Calibration: the false-alarm share mining predicted per tool against the share realized
on the nominal evaluation calls.

Mining spends a false-alarm budget per tool and records, in the contract file, the share of
the tool's nominal calls it expects its kept call-level contracts to flag:
``provenance["selection"]["tools"][TOOL]["predicted_fa"]``. A file without it (older
mining, or a merge of files without it) gives those tools no prediction, and the report
says so rather than guessing.

The realized rate of a tool is the share of its nominal evaluation calls that any alarm
names — receipt violations, gate gaps and run-level violations alike, as in the arm's
false-alarm rate — so it can exceed a prediction that covers call-level contracts only.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from tracemine.evaluate.model import Calibration, CalibrationBin, Rate, ToolCalibration
from tracemine.evaluate.score import Alarm
from tracemine.model.contract import ContractFile

CALIBRATED = ("mined-crossfit", "merged")
"""The arms built from a cross-fitted selection, whose predictions can be checked."""

BINS: tuple[tuple[str, float, float | None], ...] = (
    ("0", 0.0, 0.0),
    ("(0, 0.5%]", 0.0, 0.005),
    ("(0.5%, 1%]", 0.005, 0.01),
    ("(1%, 2%]", 0.01, 0.02),
    ("> 2%", 0.02, None),
)
"""Predicted-rate bins: exactly zero, then ``(low, high]``; the last has no upper edge."""


def predictions(contracts: ContractFile | None) -> dict[str, dict[str, Any]]:
    """Per tool, ``predicted`` (a rate in [0, 1] or ``None``) and ``kept`` (or ``None``)
    from the contract file's selection record; tools it does not name are absent."""
    selection = contracts.provenance.get("selection") if contracts is not None else None
    tools = selection.get("tools") if isinstance(selection, dict) else None
    out: dict[str, dict[str, Any]] = {}
    for tool, entry in (tools or {}).items() if isinstance(tools, dict) else ():
        if not isinstance(entry, dict):
            continue
        value, kept = entry.get("predicted_fa"), entry.get("kept")
        predicted: float | None = None
        if isinstance(value, int | float) and not isinstance(value, bool):
            # a rate outside [0, 1] or not finite is no prediction, not a point off the chart
            predicted = float(value) if math.isfinite(value) and 0 <= value <= 1 else None
        kept_n = kept if isinstance(kept, int) and not isinstance(kept, bool) else None
        out[str(tool)] = {"predicted": predicted, "kept": kept_n}
    return out


def flagged_calls(
    runs: list[dict[str, Any]], nominal: dict[str, list[Alarm]]
) -> tuple[Counter[str], Counter[str]]:
    """Nominal calls per tool, and those of them that an alarm of their run names."""
    calls: Counter[str] = Counter()
    flagged: Counter[str] = Counter()
    for run in runs:
        tools = {}
        for position, call in enumerate(run["calls"]):
            seq = call["seq"] if isinstance(call.get("seq"), int) else position
            tools[seq] = str(call.get("tool"))
            calls[str(call.get("tool"))] += 1
        named = {s for alarm in nominal.get(run["run_id"], []) for s in alarm.seqs}
        flagged.update(tools[s] for s in named if s in tools)
    return calls, flagged


def calibrate(
    contracts: ContractFile | None, runs: list[dict[str, Any]], nominal: dict[str, list[Alarm]]
) -> Calibration:
    """Predicted against realized false alarms of one arm: per tool, pooled over the tools
    with a prediction (call-weighted), and per bin of predicted rate."""
    predicted = predictions(contracts)
    calls, flagged = flagged_calls(runs, nominal)
    rows = [
        ToolCalibration(
            tool=tool,
            predicted=predicted.get(tool, {}).get("predicted"),
            kept=predicted.get(tool, {}).get("kept"),
            realized=Rate.of(flagged[tool], calls[tool]),
        )
        for tool in sorted(set(calls) | set(predicted))
    ]
    scored = [row for row in rows if row.predicted is not None]
    result = Calibration(tools=rows, realized=_pooled(scored), predicted=_weighted(scored))
    for label, low, high in BINS:
        members = [row for row in scored if _in_bin(row.predicted, low, high)]
        result.bins.append(
            CalibrationBin(label=label, low=low, high=high, tools=len(members),
                           predicted=_weighted(members), realized=_pooled(members))
        )  # fmt: skip
    missing = [row.tool for row in rows if row.predicted is None and row.realized.n]
    if not predicted:
        result.note = (
            "the contract file records no predicted false-alarm rates "
            '(provenance["selection"]["tools"][tool]["predicted_fa"]): realized rates only'
        )
    elif missing:
        result.note = f"{len(missing)} tools with nominal calls have no prediction: " + (
            ", ".join(missing[:8]) + (" …" if len(missing) > 8 else "")
        )
    return result


def _in_bin(value: float | None, low: float, high: float | None) -> bool:
    if value is None:
        return False
    if high is not None and high == low:
        return value == low
    return value > low and (high is None or value <= high)


def _pooled(rows: list[ToolCalibration]) -> Rate:
    return Rate.of(sum(r.realized.k for r in rows), sum(r.realized.n for r in rows))


def _weighted(rows: list[ToolCalibration]) -> float | None:
    """The call-weighted mean prediction; ``None`` when the rows hold no calls."""
    calls = sum(r.realized.n for r in rows)
    if not calls:
        return None
    return sum((r.predicted or 0.0) * r.realized.n for r in rows) / calls
