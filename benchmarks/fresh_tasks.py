"""False alarms on fresh tasks, predicted against realized, and the monitor's verdict on
each fresh call given as text against the verdict on its value.

    python benchmarks/fresh_tasks.py 40 commerce search travel [--json PATH]

Mines N simulated tasks (3 trials, seeds 0-2), checks one run of each of 300 new tasks of
the same deployment, and prints a Markdown row per suite: fresh nominal calls, predicted
(the mean over fresh calls of their tool's predicted rate), realized with its 95 % Wilson
interval, and how many calls were judged differently as ``json.dumps`` text.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import warnings
from pathlib import Path
from typing import Any

from _results import Run, headline

from tracemine import ingest
from tracemine.evaluate.model import wilson
from tracemine.mine import mine
from tracemine.monitor import Monitor
from tracemine.simulate import simulate, write_traces


def split(suite: str, tasks: int, seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    runs = simulate(suite, tasks=tasks + 300, seed=seed, trials=3)
    ids = sorted({r["task_id"] for r in runs})
    random.Random(seed).shuffle(ids)
    mined = set(ids[:tasks])
    fresh: dict[str, dict[str, Any]] = {}
    for run in runs:
        if run["task_id"] not in mined:
            fresh.setdefault(run["task_id"], run)
    return [r for r in runs if r["task_id"] in mined], list(fresh.values())


def row(suite: str, tasks: int) -> dict[str, Any]:
    alarmed = calls = differ = 0
    predicted = 0.0
    for seed in (0, 1, 2):
        runs, fresh = split(suite, tasks, seed)
        with tempfile.TemporaryDirectory() as folder:
            trace = write_traces(runs, Path(folder) / "runs.jsonl", "flat")
            ingest([trace], Path(folder) / "runs.duckdb")
            result = mine(Path(folder) / "runs.duckdb", target_fa=0.01)
        tools = result.provenance["selection"]["tools"]
        monitor = Monitor.from_dict(result.model_dump(mode="json"), include_proposed=True)
        for run in fresh:
            for call in run["calls"]:
                if call.get("status") != "ok":
                    continue
                args, value = call.get("arguments"), call.get("result")
                as_value = monitor.check(call["tool"], args, value)
                as_text = monitor.check(call["tool"], args, json.dumps(value))
                calls += 1
                alarmed += bool(as_value.violations)
                ids = [sorted(v.contract_id for v in r.violations) for r in (as_value, as_text)]
                differ += ids[0] != ids[1]
                predicted += tools.get(call["tool"], {}).get("predicted_fa", 0.0)
    low, high = wilson(alarmed, calls)
    return {"suite": suite, "tasks": tasks, "calls": calls, "alarmed": alarmed,
            "predicted_pct": round(100 * predicted / calls, 2),
            "realized_pct": round(100 * alarmed / calls, 2), "low_pct": round(100 * low, 2),
            "high_pct": round(100 * high, 2), "text_differs": differ}  # fmt: skip


def markdown(r: dict[str, Any]) -> str:
    return (f"| {r['suite']} | {r['tasks']} | {r['calls']:,} | {r['predicted_pct']:.2f}% | "
            f"{r['realized_pct']:.2f}% [{r['low_pct']:.2f}, {r['high_pct']:.2f}] "
            f"({r['alarmed']}/{r['calls']}) | {r['text_differs']} |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", type=int, help="tasks to mine")
    parser.add_argument("suites", nargs="+", help="simulated suites (commerce, search, travel)")
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    options = parser.parse_args()
    results, rows = Run("fresh_tasks"), []
    for name in options.suites:
        rows.append(row(name, options.tasks))
        print(markdown(rows[-1]), flush=True)
    results.write(options.json, {"fresh tasks": rows}, [
        headline(f"false alarms on fresh tasks, {r['suite']} (95 % upper end {r['high_pct']}%)",
                 r["realized_pct"], "%", size=f"mined on {r['tasks']} tasks, "
                 f"{r['calls']:,} fresh calls, 3 seeds", target="<= 1 %, upper end < 2 %",
                 met=r["realized_pct"] <= 1 and r["high_pct"] < 2, baseline=r["predicted_pct"],
                 baseline_what="predicted", ratio=round(r["realized_pct"] / r["predicted_pct"], 2)
                 if r["predicted_pct"] else None)
        for r in rows
    ])  # fmt: skip


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    main()
