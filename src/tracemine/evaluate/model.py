"""The evaluation's result types: rates with their Wilson intervals, one row per arm and
fault class, and the :class:`EvaluationReport` that ``tracemine evaluate`` renders."""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, Field

Z95 = 1.959964  # two-sided 95 % normal quantile

ARMS: dict[str, str] = {
    "status-only": "a harness for which a green status means done: only calls whose status "
    "says they failed (and were not retried with success) or never came back",
    "declared": "the completeness gate plus the constraints the spec declares",
    "inferred-schema": "the gate plus a JSON Schema per tool and side that GenSON inferred "
    "from every mining call, checked with jsonschema (Draft 2020-12): a baseline with no "
    "statistics (needs the dev extra)",
    "mined-no-crossfit": "the gate plus contracts mined on every mining task, no held-out check",
    "mined-crossfit": "the gate plus contracts that held on held-out mining tasks (cross-fitted)",
    "merged": "the gate plus the cross-fitted mined contracts merged with the declared ones",
    "oracle-peeking": "PEEKS AT THE EVALUATION RUNS, not deployable: the mined-no-crossfit "
    "contracts minus every one that raised an alarm on a nominal evaluation run — the "
    "reference that selection efficiency divides by",
}
"""The arms, in report order, and what each one enforces."""


class Rate(BaseModel):
    """``k`` of ``n`` with a Wilson 95 % interval; ``rate`` and the bounds are ``None`` when
    ``n`` is 0 (nothing to measure, as opposed to a rate of zero)."""

    k: int
    n: int
    rate: float | None = None
    low: float | None = None
    high: float | None = None

    @classmethod
    def of(cls, k: int, n: int) -> Rate:
        if n <= 0:
            return cls(k=k, n=n)
        low, high = wilson(k, n)
        return cls(k=k, n=n, rate=k / n, low=low, high=high)

    def text(self, digits: int = 1) -> str:
        """``12.5% [8.1, 18.0] (20/160)``, or ``n/a`` when nothing was measured."""
        if self.rate is None or self.low is None or self.high is None:
            return "n/a"
        pct = f"{{:.{digits}f}}"
        return (
            f"{pct.format(100 * self.rate)}% [{pct.format(100 * self.low)}, "
            f"{pct.format(100 * self.high)}] ({self.k}/{self.n})"
        )


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``k`` successes in ``n`` trials.

    >>> [round(x, 4) for x in wilson(0, 100)]
    [0.0, 0.037]
    """
    if n <= 0:
        return 0.0, 1.0
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # at the edges the interval touches 0 or 1 exactly; floating point would miss by an ulp
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return low, high


class ClassResult(BaseModel):
    """One arm on one fault class. ``localization`` is over the detected faults."""

    fault_class: str
    group: str
    coverage: str = Field(description="what in the monitor can see this class, by design")
    injected: int
    detection: Rate
    localization: Rate
    examples: list[str] = Field(default_factory=list, description="first missed faults")


class ToolCalibration(BaseModel):
    """One tool: the false-alarm share mining predicted for its nominal calls, and the share
    of its nominal evaluation calls an alarm named."""

    tool: str
    predicted: float | None = Field(
        default=None, description="predicted_fa from the contract file; None: no prediction"
    )
    kept: int | None = Field(default=None, description="call-level contracts mining kept")
    realized: Rate = Field(description="nominal evaluation calls of the tool with an alarm")


class CalibrationBin(BaseModel):
    """Tools whose predicted rate falls in ``(low, high]`` (``[0, 0]`` for exactly zero),
    pooled: call-weighted mean prediction against the pooled realized rate."""

    label: str
    low: float
    high: float | None = Field(description="None: no upper edge")
    tools: int = 0
    predicted: float | None = None
    realized: Rate


class Calibration(BaseModel):
    """Predicted against realized false alarms per tool, overall and binned by prediction.
    ``overall`` pools the tools that have a prediction (call-weighted)."""

    tools: list[ToolCalibration] = Field(default_factory=list)
    predicted: float | None = Field(default=None, description="call-weighted, predicted tools")
    realized: Rate = Field(description="pooled over the tools that have a prediction")
    bins: list[CalibrationBin] = Field(default_factory=list)
    note: str = ""


class FamilyRow(BaseModel):
    """One contract family on fresh tasks: its price against its realized false alarms,
    per (contract, nominal call of its tool) and per (contract, task calling it)."""

    family: str
    contracts: int = Field(description="enforced contracts of the family")
    predicted: float | None = Field(
        default=None, description="call-weighted mean fa_share; None: no price"
    )
    calls: Rate = Field(description="(contract, nominal call) units with its violation")
    tasks: Rate = Field(description="(contract, evaluation task) units with its violation")
    over_price: bool = Field(default=False, description="realized per call above predicted")
    chance: float | None = Field(
        default=None,
        description="probability of at least this many alarmed calls if every call broke "
        "at the predicted rate (binomial); None: no price or no call",
    )
    beyond_chance: bool = Field(
        default=False, description="chance below 0.05: a price the calls refute"
    )


class FamilyCalibration(BaseModel):
    """Fresh-task calibration per contract family (:mod:`tracemine.evaluate.families`)."""

    families: list[FamilyRow] = Field(default_factory=list)
    priced: FamilyRow = Field(description="pooled over the families with a price")
    note: str = ""


class TextJudgement(BaseModel):
    """The arm's monitor given every evaluation result as its content text (as an agent
    loop passes it) instead of the parsed value: the calls (nominal and faulted) judged
    the same way both times, and the false alarms on nominal calls judged as text."""

    agreement: Rate = Field(description="calls with the same alarms as text and as value")
    false_alarms: Rate = Field(description="nominal evaluation calls with an alarm, as text")


class ArmResult(BaseModel):
    """One arm: its contracts, its false alarms on nominal calls and its detection."""

    arm: str
    description: str
    available: bool = True
    note: str = ""
    contracts: int = Field(default=0, description="contracts the monitor enforced")
    false_alarms: Rate = Field(description="nominal evaluation calls with an alarm")
    run_false_alarms: Rate = Field(description="nominal evaluation runs with any alarm")
    detection_covered: float | None = Field(
        default=None, description="mean detection rate over the classes the monitor can see"
    )
    selection_efficiency: float | None = Field(
        default=None,
        description="detection_covered divided by the oracle-peeking arm's detection_covered",
    )
    calibration: Calibration | None = Field(
        default=None, description="predicted against realized false alarms, per tool"
    )
    families: FamilyCalibration | None = Field(
        default=None, description="fresh-task false alarms per contract family, priced"
    )
    noisiest: list[dict[str, Any]] = Field(
        default_factory=list, description="contracts raising most false alarms"
    )
    text: TextJudgement | None = Field(
        default=None, description="the same runs judged with results as content text"
    )
    classes: list[ClassResult] = Field(default_factory=list)

    def row(self, fault_class: str) -> ClassResult | None:
        return next((c for c in self.classes if c.fault_class == fault_class), None)


class EvaluationReport(BaseModel):
    """What ``tracemine evaluate`` measured: per arm, false alarms on nominal calls of the
    evaluation tasks and, per fault class, detection and localization of injected faults.

    >>> report = evaluate(suite="all", tasks=60, out="eval")  # doctest: +SKIP
    >>> report.arm("merged").row("negative_quantity").detection.rate  # doctest: +SKIP
    """

    source: str
    specs: list[str] = Field(default_factory=list)
    settings: dict[str, Any] = Field(default_factory=dict)
    tasks: dict[str, int] = Field(default_factory=dict, description="mining / evaluation")
    runs: dict[str, int] = Field(default_factory=dict)
    calls: dict[str, int] = Field(default_factory=dict)
    faults: dict[str, int] = Field(default_factory=dict, description="injected, per class")
    arms: list[ArmResult] = Field(default_factory=list)
    definitions: dict[str, str] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    outputs: dict[str, str] = Field(default_factory=dict)
    seconds: float = 0.0

    def arm(self, name: str) -> ArmResult:
        found = next((a for a in self.arms if a.arm == name), None)
        if found is None:
            raise KeyError(f"no arm {name!r}; arms: {', '.join(a.arm for a in self.arms)}")
        return found
