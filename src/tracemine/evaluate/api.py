"""``evaluate``: split tasks, build the arms, inject every fault class, score, report."""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tracemine.errors import InputError
from tracemine.evaluate.arms import Arm, build_arms
from tracemine.evaluate.calibrate import CALIBRATED, calibrate
from tracemine.evaluate.families import FRESH, family_calibration
from tracemine.evaluate.model import ARMS, ArmResult, ClassResult, EvaluationReport, Rate
from tracemine.evaluate.oracle import peeking_arm, selection_efficiency
from tracemine.evaluate.report import write_reports
from tracemine.evaluate.score import (
    COVERAGE,
    COVERED,
    Alarm,
    localized,
    new_alarms,
    normalize,
    replay_runs,
)
from tracemine.evaluate.split import from_suite, from_traces, split_tasks
from tracemine.evaluate.text import as_text, judge, verdicts
from tracemine.faults import FaultClass, FaultRecord, inject

DEFINITIONS = {
    "detection": "share of injected faults whose run raised an alarm (a receipt violation, "
    "a completeness-gate gap making the run incomplete, or a run-level violation) that the "
    "same run without the fault did not raise; one fault per faulted run",
    "false alarm": "share of nominal calls of the evaluation tasks named by an alarm (a "
    "violation in their receipt, or a gap or run-level violation carrying their call id); "
    "Wilson 95% interval",
    "localization": "share of detected faults with a new alarm at the injected tool and "
    "call whose path is on the ground truth's pattern path (equal, inside or enclosing); "
    "for id, status and timing faults, any new alarm at the faulted call",
    "review": "no human review in an evaluation: every arm's monitor enforces proposed "
    "contracts too (include_proposed=True)",
    "covered": "classes the monitor can see by design (gate, vocabulary or relational "
    "contracts); late_result is not covered: the monitor reads no timing",
    "oracle-peeking": "not a deployable arm: it looks at the nominal evaluation runs it is "
    "scored on and keeps the mined-no-crossfit contracts that raise no alarm there",
    "selection efficiency": "an arm's mean detection over covered classes divided by the "
    "oracle-peeking arm's; above 100% the arm buys detection with contracts the oracle "
    "dropped for false alarms",
    "results as text": "the arm's monitor given every evaluation result (nominal and "
    "faulted) as its content text, json.dumps of the value as an agent loop writes it, "
    "instead of the parsed value: calls whose alarms are the same both ways, and the false "
    "alarms on nominal calls judged as text",
    "fresh-task calibration": "per contract family (kind/side[/type][/when][/support], "
    "as selection pools them), the cross-fitted arm's enforced contracts: predicted is the "
    "call-weighted mean of their prices (evidence.fa_share, the false-alarm share each adds "
    "per call of its tool on a new task); realized is the share of (contract, nominal "
    "evaluation call of its tool) units a violation of that contract names, and of "
    "(contract, evaluation task) units with any such call; Wilson 95% intervals",
    "calibration": "per tool, the false-alarm share mining predicted for its kept call-level "
    "contracts (provenance selection.tools[tool].predicted_fa) against the share of its "
    "nominal evaluation calls any alarm named (Wilson 95% interval); overall and per bin of "
    "prediction, call-weighted over the tools with a prediction",
}


def evaluate(
    *,
    out: str | Path,
    suite: str | None = None,
    tasks: int = 300,
    trials: int = 3,
    traces: Sequence[str | Path] | None = None,
    spec: Sequence[str | Path] | str | Path | None = None,
    task_key: str | None = None,
    folds: int = 5,
    target_fa: float = 0.01,
    min_tasks: int = 5,
    eval_share: float = 0.3,
    max_faults: int = 200,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> EvaluationReport:
    """Measure detection of injected faults and false alarms, per arm and fault class.

    Runs come from the simulator (``suite``; its OpenAPI document is the spec unless
    ``spec`` is given) or from ``traces`` files. Tasks are split, seeded, into a mining
    set and an evaluation set (``eval_share`` of the tasks); the mining set is mined with
    and without cross-fitting and merged with ``spec``; each fault class is injected into
    up to ``max_faults`` evaluation runs; every arm's monitor replays the nominal and the
    faulted runs. The ``oracle-peeking`` arm keeps the no-crossfit contracts that raise no
    alarm on the nominal evaluation runs: it peeks, and is there as the denominator of
    every arm's selection efficiency. The cross-fitted and merged arms also set the
    false-alarm rate mining predicted per tool against the realized one. Writes
    ``report.md``, ``report.html``, ``report.json`` and the arms' contract files into ``out``.

    >>> report = evaluate(suite="all", tasks=60, out="eval")  # doctest: +SKIP
    >>> report.arm("mined-crossfit").false_alarms.text()  # doctest: +SKIP
    '0.0% [0.0, 0.5] (0/759)'
    """
    started = time.perf_counter()
    say = progress or (lambda _message: None)
    if (suite is None) == (traces is None):
        raise InputError("give either a simulated suite (--suite) or trace files (--traces)")
    if max_faults < 1:
        raise InputError(f"--max-faults must be at least 1 (got {max_faults})")
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    if suite is not None:
        source = from_suite(suite, tasks, trials, seed, folder)
    else:
        assert traces is not None
        source = from_traces(traces, task_key)
    if spec is not None:
        source.specs = [Path(s) for s in ([spec] if isinstance(spec, str | Path) else spec)]
    split = split_tasks(source.runs, eval_share, folds, seed)
    say(f"split {split.mining_tasks} mining / {split.evaluation_tasks} evaluation tasks")
    arms = build_arms(split.mining, source.specs, folder, folds=folds, target_fa=target_fa,
                      min_tasks=min_tasks, seed=seed, progress=say)  # fmt: skip
    say("oracle: drop the no-crossfit contracts that alarm on nominal evaluation runs")
    arms.append(peeking_arm(arms, split.evaluation, folder / "contracts"))
    say(f"inject {len(FaultClass)} fault classes into the evaluation runs")
    faulted = _inject_all(split.evaluation, max_faults, seed)
    settings = {"folds": folds, "target_fa": target_fa, "min_tasks": min_tasks,
                "eval_share": eval_share, "max_faults": max_faults, "seed": seed,
                "include_proposed": True}  # fmt: skip
    report = EvaluationReport(
        source=source.label,
        specs=[p.as_posix() for p in source.specs],
        settings=settings,
        tasks={"mining": split.mining_tasks, "evaluation": split.evaluation_tasks},
        runs={"mining": len(split.mining), "evaluation": len(split.evaluation)},
        calls={"mining": _calls(split.mining), "evaluation": _calls(split.evaluation)},
        faults={c.value: len(records) for c, (_, records) in faulted.items()},
        definitions=DEFINITIONS,
        notes=[*source.notes, _support_note(arms, target_fa, min_tasks)],
    )
    for arm in arms:
        say(f"replay through the {arm.name} arm")
        report.arms.append(_score(arm, split.evaluation, faulted))
    selection_efficiency(report.arms)
    report.seconds = round(time.perf_counter() - started, 1)
    report.outputs = {k: p.as_posix() for k, p in write_reports(report, folder).items()}
    return report


def _inject_all(
    runs: list[dict[str, Any]], max_faults: int, seed: int
) -> dict[FaultClass, tuple[list[dict[str, Any]], dict[str, list[FaultRecord]]]]:
    """Per class: the faulted runs (at most ``max_faults``, one fault each) and the
    ground truth by run id. Classes are injected separately so each gets its full share."""
    out = {}
    for number, fault_class in enumerate(FaultClass):
        sample = list(runs)
        if len(sample) > max_faults:
            sample = random.Random(f"tracemine-evaluate/{seed}/{fault_class}").sample(
                sample, max_faults
            )
        faulty, records = inject(sample, [fault_class], rate=1.0, seed=seed * 100 + number)
        truth: dict[str, list[FaultRecord]] = {}
        for record in records:
            truth.setdefault(record.run_id, []).append(record)
        out[fault_class] = ([run for run in faulty if run["run_id"] in truth], truth)
    return out


def _score(
    arm: Arm,
    evaluation: list[dict[str, Any]],
    faulted: dict[FaultClass, tuple[list[dict[str, Any]], dict[str, list[FaultRecord]]]],
) -> ArmResult:
    result = ArmResult(arm=arm.name, description=ARMS[arm.name], available=arm.available,
                       note=arm.note, false_alarms=Rate.of(0, 0),
                       run_false_alarms=Rate.of(0, 0))  # fmt: skip
    if not arm.available:
        return result
    result.contracts = arm.size
    nominal = replay_runs(arm, evaluation)
    flagged = sum(len({s for a in found for s in a.seqs}) for found in nominal.values())
    result.false_alarms = Rate.of(flagged, _calls(evaluation))
    result.run_false_alarms = Rate.of(sum(bool(f) for f in nominal.values()), len(nominal))
    result.noisiest = _noisiest(nominal)
    if arm.name in CALIBRATED:
        result.calibration = calibrate(arm.contracts, evaluation, nominal)
    if arm.name in FRESH and arm.contracts is not None and arm.monitor is not None:
        enforced = {spec.id for spec in arm.monitor.contracts}
        chosen = [c for c in arm.contracts.contracts if c.id in enforced]
        result.families = family_calibration(chosen, evaluation, nominal)
    # the same runs with every result as its content text: (value verdicts, text verdicts)
    judged: tuple[list[Any], list[Any]] | None = None
    if not arm.status_only:
        text_nominal = replay_runs(arm, as_text(evaluation))
        judged = (verdicts(evaluation, nominal), verdicts(evaluation, text_nominal))
    for fault_class, (runs, truth) in faulted.items():
        replayed = replay_runs(arm, runs) if runs else {}
        if runs and judged is not None:
            judged[0].extend(verdicts(runs, replayed))
            judged[1].extend(verdicts(runs, replay_runs(arm, as_text(runs))))
        detected = located = 0
        missed: list[str] = []
        for run_id, records in truth.items():
            found = new_alarms(replayed.get(run_id, []), nominal.get(run_id, []))
            if found:
                detected += 1
                located += localized(found, records)
            elif len(missed) < 3:
                first = records[0]
                missed.append(f"{run_id} {first.tool} {first.path}: {first.detail}"[:200])
        result.classes.append(
            ClassResult(
                fault_class=fault_class.value, group=fault_class.group.value,
                coverage=COVERAGE[fault_class], injected=len(truth),
                detection=Rate.of(detected, len(truth)), localization=Rate.of(located, detected),
                examples=missed,
            )
        )  # fmt: skip
    if judged is not None:
        flagged_text = sum(len({s for a in f for s in a.seqs}) for f in text_nominal.values())
        result.text = judge(*judged, _calls(evaluation), flagged_text)
    rates = [
        c.detection.rate
        for c in result.classes
        if FaultClass(c.fault_class) in COVERED and c.detection.rate is not None
    ]
    result.detection_covered = sum(rates) / len(rates) if rates else None
    return result


def _noisiest(nominal: dict[str, list[Alarm]]) -> list[dict[str, Any]]:
    counts = Counter(
        (a.source, a.name, a.tool, normalize(a.paths[0]) if a.paths else "")
        for found in nominal.values()
        for a in found
    )
    return [
        {"source": source, "id": name, "tool": tool, "path": path, "alarms": n}
        for (source, name, tool, path), n in counts.most_common(5)
    ]


def _support_note(arms: list[Arm], target_fa: float, min_tasks: int) -> str:
    """What the cross-fitted selection did with the budget: how many tools had the
    support to be judged, how many kept contracts, and what it predicted for them."""
    arm = next((a for a in arms if a.name == "mined-crossfit" and a.contracts), None)
    if arm is None or arm.contracts is None:
        return "the cross-fitted arm was not built: no selection to describe"
    tools = arm.contracts.provenance.get("selection", {}).get("tools", {})
    judged = [line for line in tools.values() if line.get("tasks", 0) >= min_tasks]
    kept = [line for line in judged if line.get("kept")]
    calls = [line.get("calls", 0) for line in tools.values()]
    predicted = sorted(line.get("predicted_fa", 0.0) for line in kept)
    spread = f"{predicted[0]:.2%} to {predicted[-1]:.2%}" if predicted else "none"
    return (
        f"at --target-fa {target_fa:g} each tool spends that budget of predicted false alarms "
        f"per nominal call; {len(judged)} of {len(tools)} tools have --min-tasks {min_tasks} "
        f"tasks (median {_median(calls)} calls a tool), {len(kept)} of them kept contracts "
        f"(predicted {spread})"
    )


def _median(values: Any) -> int:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else 0


def _calls(runs: list[dict[str, Any]]) -> int:
    return sum(len(run["calls"]) for run in runs)
