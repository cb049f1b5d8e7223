"""The arms report, computed only from the files an experiment wrote: the traces read back
by the ingest readers, labelled by ``check``'s oracle labelling, gated by the contract
files the runs name. Nothing the saved records cannot reproduce.

Per arm and per fault class: the four labels with Wilson 95% intervals, completion
(complete-correct), false completion (unsafe-complete + complete-wrong), recovery attempts
(calls of a recovery tool, and calls repeating an earlier call's tool and arguments),
tokens and latency per run; between arms, paired differences over the same cases with the
exact McNemar test (a two-sided binomial test on the discordant pairs).
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from tracemine.arms.loop import ARMS, CLEAN
from tracemine.errors import InputError
from tracemine.evaluate.model import wilson
from tracemine.gate import LABELS, label_run
from tracemine.ingest import read_traces
from tracemine.monitor import Monitor, RunReplay, read_document, replay

PAIRS = (
    ("guarded", "status-only"),
    ("guarded-no-recovery", "status-only"),
    ("guarded", "guarded-no-recovery"),
    ("guarded-declared", "status-only"),
)
FAULTY = "faulty"


def label_runs(folder: str | Path) -> list[dict[str, Any]]:
    """Every run of an experiment folder, read back from ``traces/`` and labelled."""
    return _read(Path(folder))[0]


def _read(root: Path) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The labelled runs, and per arm the trace lines the reader quarantined."""
    oracle = _json(root / "oracle.json")["cases"]
    monitors: dict[str | None, Monitor] = {None: Monitor([])}
    rows = []
    quarantined: dict[str, int] = {}
    for name in ARMS:
        path = root / "traces" / f"{name}.jsonl"
        if not path.is_file():
            continue
        traces = read_traces(path, "openai_chat")
        quarantined[name] = len(traces.quarantined)
        runs = {run["run_id"]: run for run in traces.runs}
        guarded = name != "status-only"
        files = {
            rid: (run.get("metadata") or {}).get("contracts") if guarded else None
            for rid, run in runs.items()
        }
        by_run: dict[str, list[dict[str, Any]]] = {rid: [] for rid in runs}
        for call in traces.calls:
            by_run[call["run_id"]].append(call)
        families = {rid: run.get("family") for rid, run in runs.items()}
        for run_id, run in runs.items():
            monitor = _monitor(monitors, root, files[run_id])
            found = replay(monitor, by_run[run_id], families=families)
            # a run that made no call is still finalized: its gate sees nothing answered
            replayed = (
                found[0]
                if found
                else RunReplay(
                    run_id,
                    verdict=monitor.finalize(
                        monitor.start_run(run_id, family=run.get("family"), declared=True)
                    ),
                )
            )
            rows.append(_row(name, run, replayed, oracle, guarded, by_run[run_id]))
    return rows, quarantined


def _monitor(monitors: dict[str | None, Monitor], root: Path, contracts: str | None) -> Monitor:
    """The monitor on a contract file a run names (read once per file)."""
    if contracts not in monitors:
        assert contracts is not None  # the status-only monitor is there from the start
        document = read_document(root / contracts)
        monitors[contracts] = Monitor.from_dict(document, include_proposed=True, origin=contracts)
    return monitors[contracts]


def _row(
    arm: str,
    run: dict[str, Any],
    replayed: RunReplay,
    oracle: dict[str, Any],
    guarded: bool,
    calls: list[dict[str, Any]],
) -> dict[str, Any]:
    meta = run.get("metadata") or {}
    claimed = meta.get("agent_end") == "done"
    gate = True
    if guarded:
        gate = replayed.verdict.ok if replayed.verdict is not None else True
    label, detail = label_run(replayed, run, oracle.get(str(meta.get("case"))), claimed and gate)
    mine = sorted(calls, key=lambda c: c["seq"])
    seen: set[str] = set()
    attempts = 0
    for call in mine:
        key = call["tool"] + json.dumps(call.get("arguments"), sort_keys=True, default=str)
        attempts += call["tool"].startswith("refresh_") or key in seen
        seen.add(key)
    return {
        "run_id": run["run_id"],
        "case": meta.get("case"),
        "arm": arm,
        "fault_class": meta.get("fault_class") or CLEAN,
        "label": label,
        "detail": detail,
        "reported": "done" if claimed and gate else "incomplete",
        "recorded_as": meta.get("reported"),
        "calls": len(mine),
        "recovery_attempts": attempts,
        "tokens": meta.get("tokens"),
        "latency_ms": meta.get("latency_ms"),
        "arm_position": meta.get("arm_position"),
    }


def build_report(folder: str | Path) -> dict[str, Any]:
    """The report of an experiment folder (see the module docstring)."""
    root = Path(folder)
    settings = _json(root / "schedule.json").get("settings", {})
    rows, quarantined = _read(root)
    arms: dict[str, Any] = {}
    for name in ARMS:
        mine = [r for r in rows if r["arm"] == name]
        if not mine:
            continue
        entry = _summary(mine)
        classes = sorted({r["fault_class"] for r in mine} - {CLEAN})
        groups = {
            CLEAN: [r for r in mine if r["fault_class"] == CLEAN],
            FAULTY: [r for r in mine if r["fault_class"] != CLEAN],
            **{c: [r for r in mine if r["fault_class"] == c] for c in classes},
        }
        entry["by_fault"] = {group: _summary(runs) for group, runs in groups.items() if runs}
        arms[name] = entry
    return {
        "settings": settings,
        "cases": len({r["case"] for r in rows}),
        "arms": arms,
        "paired": [p for a, b in PAIRS if a in arms and b in arms for p in _paired(rows, a, b)],
        "mismatches": [r["run_id"] for r in rows if r["recorded_as"] != r["reported"]],
        "quarantined": quarantined,
        "definitions": {
            "completion": "complete-correct runs / runs",
            "false_completion": "(unsafe-complete + complete-wrong) runs / runs",
            "interval": "Wilson 95% score interval",
            "paired_test": "exact McNemar: two-sided binomial test on discordant cases",
            "recovery_attempts": "recovery-tool calls plus calls repeating an earlier call",
        },
        "runs": rows,
    }


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    labels = {label: sum(r["label"] == label for r in rows) for label in LABELS}
    wrong = labels["unsafe-complete"] + labels["complete-wrong"]
    tokens = [r["tokens"] for r in rows if isinstance(r["tokens"], int)]
    latency = [r["latency_ms"] for r in rows if isinstance(r["latency_ms"], int | float)]
    return {
        "runs": n,
        "labels": labels,
        "intervals": {label: _rate(k, n) for label, k in labels.items()},
        "completion": _rate(labels["complete-correct"], n),
        "false_completion": _rate(wrong, n),
        "recovery_attempts": {
            "total": sum(r["recovery_attempts"] for r in rows),
            "runs_with_any": sum(r["recovery_attempts"] > 0 for r in rows),
        },
        "tokens_per_run": statistics.fmean(tokens) if tokens else None,
        "latency_ms_per_run": {
            "mean": statistics.fmean(latency) if latency else None,
            "median": statistics.median(latency) if latency else None,
        },
    }


def _rate(k: int, n: int) -> dict[str, Any]:
    low, high = wilson(k, n)
    return {"k": k, "n": n, "rate": k / n if n else None, "low": low, "high": high}


def _paired(rows: list[dict[str, Any]], a: str, b: str) -> list[dict[str, Any]]:
    from scipy.stats import binomtest

    by = {(r["arm"], r["case"]): r for r in rows}
    out = []
    for subset in (FAULTY, "all"):
        cases = sorted({r["case"] for r in rows if subset == "all" or r["fault_class"] != CLEAN})
        cases = [c for c in cases if (a, c) in by and (b, c) in by]
        for outcome, test in (
            ("completion", lambda r: r["label"] == "complete-correct"),
            ("false_completion", lambda r: r["label"] in ("unsafe-complete", "complete-wrong")),
        ):
            first = sum(test(by[(a, c)]) and not test(by[(b, c)]) for c in cases)
            second = sum(test(by[(b, c)]) and not test(by[(a, c)]) for c in cases)
            discordant = first + second
            p = binomtest(first, discordant, 0.5).pvalue if discordant else 1.0
            out.append(
                {
                    "arm": a,
                    "versus": b,
                    "cases": subset,
                    "outcome": outcome,
                    "n": len(cases),
                    "only_arm": first,
                    "only_versus": second,
                    "difference": (first - second) / len(cases) if cases else None,
                    "p_value": float(p),
                }
            )
    return out


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: cannot read the experiment's record: {exc}") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object")
    return data


def write_reports(report: dict[str, Any], folder: str | Path) -> dict[str, Path]:
    """``report.json``, ``report.md`` and ``report.html`` (a self-contained SVG plot)."""
    from tracemine._atomic import write_atomic
    from tracemine.arms.render import html, markdown

    root = Path(folder)
    paths = {"json": root / "report.json", "md": root / "report.md", "html": root / "report.html"}
    write_atomic(paths["json"], json.dumps(report, indent=2) + "\n")
    write_atomic(paths["md"], markdown(report))
    write_atomic(paths["html"], html(report))
    return paths
