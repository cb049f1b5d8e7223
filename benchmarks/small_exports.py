"""Exports of twenty to forty tasks: the cross-fitted arm against the inferred schema, on
random task subsets of the bundled real corpora.

    python benchmarks/small_exports.py [--only agentdojo] [--json PATH]

Each subset (corpus, tasks, seed) keeps that many of the corpus's tasks, drawn with the
seed, and is evaluated as ``tracemine evaluate --traces`` evaluates a file (seed 0, 70/30
split). Prints a Markdown row per subset (false alarms per nominal evaluation call, mean
detection over covered classes, faults detected per structural class, inferred schema ·
cross-fit), then fresh-task calibration pooled over the subsets per family: calls its
contracts checked, alarms its prices predicted, alarms realized with a 95 % Wilson interval.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import warnings
from pathlib import Path
from typing import Any

from tracemine.evaluate import evaluate, wilson
from tracemine.ingest import read_traces
from tracemine.simulate import runs_from_records, write_traces

DATA = Path(__file__).resolve().parents[1] / "data"
SUBSETS = [("agentdojo", 30, seed) for seed in range(1, 6)] + [
    ("agentdojo", 45, seed) for seed in range(1, 4)
] + [("bfcl", 30, seed) for seed in (1, 2)] + [("bfcl", 40, seed) for seed in range(1, 6)] + [
    ("bfcl", 60, seed) for seed in (1, 2)
]  # fmt: skip
STRUCTURAL = ("field_omitted", "field_null", "wrong_type", "html_error_page")


def subset(corpus: str, tasks: int, seed: int, folder: Path) -> Path:
    traces = read_traces(DATA / corpus / f"{corpus}.jsonl.gz")
    runs = runs_from_records(traces.runs, traces.calls)
    ids = sorted({run["task_id"] for run in runs})
    random.Random(seed).shuffle(ids)
    chosen = set(ids[:tasks])
    kept = [run for run in runs if run["task_id"] in chosen]
    return write_traces(kept, folder / f"{corpus}-{tasks}-{seed}.jsonl", "flat")


def measure(corpus: str, tasks: int, seed: int, folder: Path) -> dict[str, Any]:
    source = subset(corpus, tasks, seed, folder)
    report = evaluate(traces=[source], out=folder / f"{corpus}-{tasks}-{seed}")
    row: dict[str, Any] = {"corpus": corpus, "tasks": tasks, "seed": seed,
                           "mined_tasks": report.tasks.get("mining")}  # fmt: skip
    for name in ("inferred-schema", "mined-crossfit"):
        arm = report.arm(name)
        structural = {}
        for fault in STRUCTURAL:
            found = arm.row(fault)
            structural[fault] = [found.detection.k, found.injected] if found else [0, 0]
        row[name] = {"false_alarms": [arm.false_alarms.k, arm.false_alarms.n],
                     "detection_covered": arm.detection_covered,
                     "structural": structural}  # fmt: skip
    families = report.arm("mined-crossfit").families
    row["families"] = [
        {"family": f.family, "predicted": f.predicted * f.calls.n, "k": f.calls.k, "n": f.calls.n}
        for f in (families.families if families else [])
    ]
    return row


def _cells(row: dict[str, Any]) -> str:
    schema, ours = row["inferred-schema"], row["mined-crossfit"]
    fa = " · ".join(f"{a['false_alarms'][0]}/{a['false_alarms'][1]}" for a in (schema, ours))
    covered = " · ".join(f"{(a['detection_covered'] or 0):.1%}" for a in (schema, ours))
    classes = " · ".join(
        f"{schema['structural'][c][0]} / {ours['structural'][c][0]} of {ours['structural'][c][1]}"
        for c in STRUCTURAL
    )
    return f"| {row['corpus']} {row['tasks']} tasks, seed {row['seed']} | {row['mined_tasks']} " \
           f"| {fa} | {covered} | {classes} |"  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="one corpus: agentdojo or bfcl")
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for corpus, tasks, seed in SUBSETS:
            if args.only and corpus != args.only:
                continue
            rows.append(measure(corpus, tasks, seed, Path(tmp)))
            print(rows[-1]["corpus"], rows[-1]["tasks"], rows[-1]["seed"], "done", flush=True)
    print(
        "\n| subset | mined tasks | false alarms: schema · cross-fit | mean detection, covered "
        "| field_omitted · field_null · wrong_type · html_error_page: schema / cross-fit |"
    )
    print("| --- | --- | --- | --- | --- |")
    for row in rows:
        print(_cells(row))
    pooled: dict[str, list[float]] = {}
    for row in rows:
        for f in row["families"]:
            entry = pooled.setdefault(f["family"], [0.0, 0, 0])
            entry[0] += f["predicted"]
            entry[1] += f["k"]
            entry[2] += f["n"]
    for name in ("inferred-schema", "mined-crossfit"):
        k = sum(r[name]["false_alarms"][0] for r in rows)
        n = sum(r[name]["false_alarms"][1] for r in rows)
        low, high = wilson(k, n)
        print(f"\n{name}: {k}/{n} false alarms pooled ({low:.2%}–{high:.2%})")
    print("\n| family | held-out calls | predicted alarms | realized (95 % interval) |")
    print("| --- | --- | --- | --- |")
    for family, (predicted, k, n) in sorted(pooled.items(), key=lambda kv: -kv[1][2]):
        if n:
            low, high = wilson(int(k), int(n))
            print(f"| {family} | {int(n)} | {predicted:.2f} | {int(k)} ({low:.2%}–{high:.2%}) |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
