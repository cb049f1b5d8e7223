"""Mining again after a new day of traces: the store of the old traces, mined, gets 10%
more calls (tasks of their own) and is mined again; the figure is that second mine's time
against a full mine of a fresh store of all the traces, in the same run.

    python benchmarks/incremental.py                   # 300k calls, then 30k more
    python benchmarks/incremental.py --calls 100000 --added 0.1 --json out.json

The corpus is ``benchmarks/mine.py``'s narrow shape. Printed: the first mine of the old
store, the ingest of the new file into it, the mine after it, the full mine of a fresh
store of both files, the ratio of the two mines, and whether they give the same contracts
(ids, parameters and evidence), whether the new traces changed them at all (else the
comparison could not tell a stale mine from a fresh one), how many tasks' profiles the
second mine built (the new ones only, when the stored ones still apply), and each
stage's seconds in both mines. The profiles and the relation counts are kept per task
and built for the new tasks only; the held-out counts and trials still read every value
(new tasks move old ones between folds). Target: the mine after adding 10% at most 0.2x
the full mine, with the same contracts.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("tracemine_bench_mine", HERE / "mine.py")
assert _spec is not None and _spec.loader is not None
_mine = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mine)

TARGET = 0.2


def _contracts(result: Any) -> list[dict[str, Any]]:
    """What two mines must agree on: each contract whole (id, parameters, evidence)."""
    return sorted((c.model_dump(mode="json") for c in result.contracts), key=lambda c: c["id"])


def _timed(step: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    out = step()
    return out, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300_000, help="calls of the old traces")
    parser.add_argument("--added", type=float, default=0.1, help="new calls, a share of them")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args()

    from _results import Run, headline

    from tracemine.ingest import ingest
    from tracemine.mine import mine

    results = Run("incremental")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        old, new = folder / "old.jsonl", folder / "new.jsonl"
        added = int(args.calls * args.added)
        _mine.generate(old, args.calls)
        old_tasks = -(-args.calls // _mine.CALLS_PER_TASK) + 1
        _mine.generate(new, added, seed=1, first_task=old_tasks)  # tasks of their own

        grown = folder / "grown.duckdb"
        ingest([old], grown)
        first, first_s = _timed(lambda: mine(grown, folds=5))
        _, ingest_s = _timed(lambda: ingest([new], grown))
        after_clock, full_clock = _mine._StageClock(), _mine._StageClock()
        after, after_s = _timed(lambda: mine(grown, folds=5, progress=after_clock))
        after_clock("end")

        fresh = folder / "fresh.duckdb"
        ingest([old, new], fresh)
        full, full_s = _timed(lambda: mine(fresh, folds=5, progress=full_clock))
        full_clock("end")

    ratio = round(after_s / full_s, 3)
    a, b = _contracts(after), _contracts(full)
    same = bool(b) and a == b
    differ = len({c["id"] for c in a} ^ {c["id"] for c in b})
    # the comparison could catch a stale mine only if the new traces change something
    changed = _contracts(first) != a
    row = {"calls": args.calls, "added": added, "first_mine_s": round(first_s, 2),
           "ingest_added_s": round(ingest_s, 2), "mine_after_s": round(after_s, 2),
           "full_mine_s": round(full_s, 2), "ratio": ratio, "contracts": len(b),
           "same_contracts": same, "ids_differing": differ, "changed_by_added": changed,
           "tasks": after.provenance["profile"]["tasks"],
           "tasks_built": after.provenance["profile"]["tasks_built"]}  # fmt: skip
    full_stages = {s["stage"]: s["wall_s"] for s in full_clock.stages}
    stages = [{"stage": s["stage"], "after_s": s["wall_s"],
               "full_s": full_stages.get(s["stage"])} for s in after_clock.stages]  # fmt: skip
    print(json.dumps(row, indent=1))
    for stage in stages:
        print(f"{stage['stage']:<20} after {stage['after_s']:>7.2f} s   full "
              f"{stage['full_s'] or 0:>7.2f} s")  # fmt: skip
    met = ratio <= TARGET and same
    results.write(
        args.json,
        {"rows": [row], "stages": stages},
        [headline("mine after adding 10% more traces, vs a full mine (profiles, relations reused)",
                  round(after_s, 2), "s", size=f"{args.calls:,} + {added:,} calls",
                  target=f"<= {TARGET}x a full mine, same contracts", met=met, baseline=round(full_s, 2),
                  baseline_what="full mine of all the traces", ratio=ratio)],
    )  # fmt: skip


if __name__ == "__main__":
    main()
