"""Mining benchmark: generate flat JSONL traces, ingest them, mine with 5 folds, and print
per size the time and peak RSS of ingest and of mine (each in its own process), the time
of a re-mine with the same folds (stored profiles) and with another seed, candidates per
second and the ratio to a baseline measured in the same process just before the mine: one
DuckDB ``GROUP BY tool, path`` over the stored values (``count``, ``min`` and ``max`` of
the numbers), the floor of any profile.

    python benchmarks/mine.py                       # narrow: 100k, 300k, 1M calls
    python benchmarks/mine.py --sizes 100000 300000 # a subset
    python benchmarks/mine.py --shape wide          # 250k wide calls, 50k tasks, then 1M narrow
    python benchmarks/mine.py --shape realwide      # 250k real-wide calls over 50k tasks
    python benchmarks/mine.py --shape realwide --calls 50000 --tasks 10000 --json out.json

Shapes: ``narrow``, 37 values a call, 50 calls a task; ``wide``, the simulator's
``offers`` suite (lists of 5–30 offers of 14 fields, some nested; about 120 values and 5
calls a task, one run each), ``--sizes`` calls over a fifth as many tasks. With ``--shape
wide`` the 1M narrow run is printed beside it (``--alone`` leaves it out). ``realwide``,
the simulator's ``realwide`` suite: thousands of distinct paths a tool (fare rules,
amenities and seats keyed by name, rooms of many optional fields), about 180 values and
five calls a run, up to a few thousand values in one result; ``--calls`` over ``--tasks``
tasks (a fifth as many by default; more runs a task when there are more calls than five a
task). Its mine runs once (no re-mine), as a real corpus is mined. ``--json PATH`` writes
the rows with the machine (cores, load average before and after) and versions.

Targets on 2 cores: narrow 1M calls, mine <= 60 s and 2 GB; wide 250k calls over 50k tasks,
ingest <= 120 s and 1 GB, mine <= 25 s and 1.4 GB; real-wide 250k calls over 50k tasks, mine
<= 8x the same-run baseline and 1.4 GB.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import orjson

CALLS_PER_TASK = 50
STATES = ("pending", "shipped", "delivered", "cancelled")


def _task(rng: random.Random, task: int) -> list[tuple[str, dict, object]]:
    """One task's calls: an order lookup, searches, a customer, a refund."""
    order_id = f"#W{rng.randint(0, 9_999_999):07d}"
    items = []
    for _ in range(rng.randint(1, 6)):
        quantity = rng.randint(1, 4)
        items.append(
            {
                "sku": f"SKU-{rng.randint(10000, 99999)}",
                "quantity": quantity,
                "amount_cents": quantity * rng.randint(0, 9000),
                "order_id": order_id,
            }
        )
    order = {
        "order_id": order_id,
        "status": rng.choice(STATES),
        "currency": rng.choice(("USD", "EUR", "GBP")),
        "items": items,
        "total_cents": sum(i["amount_cents"] for i in items),
        "created_at": f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T10:00:00Z",
    }
    customer_id = f"cus_{rng.randint(0, 16**8):08x}"
    status = rng.choice(("open", "closed"))
    limit = rng.choice((5, 10, 20))
    found = rng.randint(1, limit) if status == "open" else rng.randint(0, 2)
    orders = [
        {
            "order_id": f"#W{rng.randint(0, 9_999_999):07d}",
            "status": status,
            "updated_at": "2024-05-01T00:00:00Z",
        }
        for _ in range(found)
    ]
    amount = max(1, order["total_cents"] // 3)
    return [
        ("get_order", {"order_id": order_id}, order),
        ("search_orders", {"status": status, "limit": limit},
         {"orders": orders, "count": len(orders), "has_more": False}),
        ("get_customer", {"customer_id": customer_id},
         {"customer_id": customer_id, "tier": rng.choice(("gold", "silver", "bronze")),
          "email": f"user{task}@example.com", "balance_cents": rng.randint(0, 10**6),
          "session": str(uuid.UUID(int=rng.getrandbits(128), version=4))}),
        ("refund", {"order_id": order_id, "amount_cents": amount},
         {"refund_id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
          "order_id": order_id, "amount_cents": amount, "status": "accepted"}),
    ]  # fmt: skip


def generate(path: Path, calls: int, seed: int = 0, first_task: int = 0) -> None:
    """Write about ``calls`` flat JSONL calls: tasks of several runs each, numbered from
    ``first_task`` (so that files written apart hold tasks of their own)."""
    rng = random.Random(seed)
    written, task = 0, first_task
    with path.open("wb") as out:
        while written < calls:
            base = _task(random.Random(f"{seed}-{task}"), task)
            for trial in range(CALLS_PER_TASK // 10):
                run_id = f"t{task}.r{trial}"
                extra = [base[1], base[0], base[1], rng.choice(base), rng.choice(base), base[2]]
                chosen = [*base, *extra]
                lines = []
                for seq, (tool, args, result) in enumerate(chosen):
                    lines.append(orjson.dumps({
                        "run_id": run_id, "task_id": f"t{task}", "tool": tool,
                        "call_id": f"{run_id}.{seq}", "seq": seq, "arguments": args,
                        "result": result, "status": "ok", "run_outcome": "success"}))  # fmt: skip
                out.write(b"\n".join(lines) + b"\n")
                written += len(chosen)
            task += 1


def generate_wide(path: Path, calls: int, seed: int = 0) -> None:
    """Write about ``calls`` flat JSONL calls of the simulator's ``offers`` suite: one run
    a task, ``calls // 5`` tasks (the suite makes about five calls a run)."""
    from tracemine.simulate import WIDE_DOMAINS
    from tracemine.simulate.formats.flat import write_run

    simulate_task = WIDE_DOMAINS["offers"]
    with path.open("wb") as out:
        for task in range(max(calls // 5, 1)):
            for run in simulate_task(seed, task, 1):
                out.write(b"".join(orjson.dumps(line) + b"\n" for line in write_run(run)))


def generate_realwide(path: Path, calls: int, tasks: int, seed: int = 0) -> None:
    """Write ``calls`` flat JSONL calls of the simulator's ``realwide`` suite over
    ``tasks`` tasks: as many runs a task as it takes (five calls a run), dealt in turn so
    that a smaller ``calls`` still spans the tasks."""
    from tracemine.simulate import WIDE_DOMAINS
    from tracemine.simulate.formats.flat import write_run

    simulate_task = WIDE_DOMAINS["realwide"]
    trials = max(1, -(-calls // (5 * tasks)))
    written = 0
    with path.open("wb") as out:
        for task in range(tasks):
            if written >= calls:
                break
            for run in simulate_task(seed, task, trials):
                lines = write_run(run)[: calls - written]
                out.write(b"".join(orjson.dumps(line) + b"\n" for line in lines))
                written += len(lines)


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


def ingest_phase(trace: Path, db: Path) -> dict:
    from tracemine.ingest import ingest

    started = time.perf_counter()
    report = ingest([trace], db)
    return {"calls": report.total("calls"), "ingest_s": round(time.perf_counter() - started, 2),
            "ingest_rss_mb": round(_peak_mb())}  # fmt: skip


BASELINE = """SELECT tool, path, count(*), min(num), max(num)
FROM calls JOIN json_values USING (call_key) GROUP BY tool, path"""


def mine_phase(db: Path, once: bool = False) -> dict:
    import duckdb

    from tracemine.mine import mine

    con = duckdb.connect(str(db), read_only=True)
    started = time.perf_counter()
    con.execute(BASELINE).fetchall()
    baseline = time.perf_counter() - started
    paths = con.execute("SELECT count(*) FROM (SELECT DISTINCT tool, path FROM calls "
                        "JOIN json_values USING (call_key))").fetchall()[0][0]  # fmt: skip
    values = con.execute("SELECT count(*) FROM json_values").fetchall()[0][0]
    tasks = con.execute("SELECT count(DISTINCT task_id) FROM runs").fetchall()[0][0]
    con.close()
    clock = _StageClock()
    started = time.perf_counter()
    result = mine(db, folds=5, progress=clock)
    mined = time.perf_counter() - started
    peak = _peak_mb()
    clock("end")
    figures: dict = {}
    if not once:
        started = time.perf_counter()
        mine(db, folds=5, target_fa=0.02)
        figures["remine_s"] = round(time.perf_counter() - started, 2)
        started = time.perf_counter()
        again = mine(db, folds=5, seed=1)
        figures["reseed_s"] = round(time.perf_counter() - started, 2)
        figures["kept_again"] = len(again.contracts)
    summary = result.provenance["summary"]
    candidates = sum(s["candidates"] for s in summary.values())
    return {
        "values": values, "tasks": tasks, "paths": paths, "baseline_s": round(baseline, 3),
        "mine_s": round(mined, 2), "mine_rss_mb": round(peak), **figures,
        "candidates": candidates, "kept": len(result.contracts),
        "candidates_per_s": round(candidates / mined, 1),
        "ratio_to_baseline": round(mined / baseline, 1), "stages": clock.stages,
    }  # fmt: skip


class _StageClock:
    """The mine's ``progress`` callback: wall and CPU seconds (this process's threads,
    DuckDB's among them) from each stage's start to the next's."""

    def __init__(self) -> None:
        self.stages: list[dict] = []
        self._at: tuple[str, float, float] | None = None

    def __call__(self, name: str) -> None:
        now, cpu = time.perf_counter(), time.process_time()
        if self._at is not None:
            stage, wall0, cpu0 = self._at
            self.stages.append({"stage": stage, "wall_s": round(now - wall0, 2),
                                "cpu_s": round(cpu - cpu0, 2)})  # fmt: skip
        self._at = (name, now, cpu)


def _child(*args: object) -> dict:
    """Run one phase in its own process, so its peak RSS is its own; say why it failed."""
    out = subprocess.run([sys.executable, __file__, *map(str, args)],
                         capture_output=True, text=True)  # fmt: skip
    if out.returncode != 0:
        return {"failed": (out.stderr.strip().splitlines() or ["?"])[-1]}
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


HEADER = ("shape", "calls", "tasks", "values", "paths", "ingest_s", "ingest_rss_mb", "baseline_s",
          "mine_s", "mine_rss_mb", "remine_s", "reseed_s", "candidates", "kept",
          "ratio_to_baseline")  # fmt: skip


def run(shape: str, size: int, workdir: Path, tasks: int | None = None) -> dict:
    """Generate (unless the file is there), ingest and mine one size; print its row and
    return its figures."""
    tasks = tasks or max(size // 5, 1)
    name = f"{shape}-{size}" + (f"-{tasks}" if shape == "realwide" else "")
    trace = workdir / f"{name}.jsonl"
    db = workdir / f"{name}.duckdb"
    if not trace.exists():
        if shape == "realwide":
            generate_realwide(trace, size, tasks)
        else:
            (generate_wide if shape == "wide" else generate)(trace, size)
    db.unlink(missing_ok=True)
    figures: dict = {"shape": shape}
    figures.update(_child("--phase", "ingest", trace, db))
    if "failed" not in figures:
        once = ("--once",) if shape == "realwide" else ()
        figures.update(_child("--phase", "mine", *once, trace, db))
    if "failed" in figures:
        print(f"{shape:>9} {size:>9} failed: {figures['failed']}", flush=True)
        return figures
    print(" ".join(f"{figures.get(h, ''):>{len(h) + 2}}" for h in HEADER), flush=True)
    return figures


# the README's targets: the size each is set at, time and peak RSS of the mine alone
TARGETS = {"narrow": (1_000_000, "<= 60 s", 60, 2048), "wide": (250_000, "<= 25 s", 25, 1434),
           "realwide": (250_000, "<= 8x baseline", None, 1434)}  # fmt: skip


def headlines(rows: list[dict], headline) -> list[dict]:
    """One README figure a row: the mine's time, its baseline and ratio, against the target
    set for its shape at the target's size (at other sizes there is no verdict)."""
    out = []
    for row in rows:
        if "failed" in row:
            continue
        at, words, limit, rss = TARGETS[row["shape"]]
        fast = row["mine_s"] <= limit if limit else row["ratio_to_baseline"] <= 8
        out.append(headline(
            f"mine, {row['shape']}, 5 folds (peak RSS {row['mine_rss_mb']:,} MB)", row["mine_s"],
            "s", size=f"{row['calls']:,} calls over {row['tasks']:,} tasks",
            target=f"{words} and <= {rss:,} MB at {at:,} calls",
            met=(fast and row["mine_rss_mb"] <= rss) if row["calls"] >= 0.95 * at else None,
            baseline=row["baseline_s"], baseline_what="GROUP BY tool, path",
            ratio=row["ratio_to_baseline"]))  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=("narrow", "wide", "realwide"), default="narrow")
    parser.add_argument("--sizes", type=int, nargs="+", default=None)
    parser.add_argument("--calls", type=int, default=None, help="one size: this many calls")
    parser.add_argument(
        "--tasks",
        type=int,
        default=None,
        help="realwide: over this many tasks (default: a fifth of the calls)",
    )
    parser.add_argument("--alone", action="store_true", help="wide: no 1M narrow run beside")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument("--workdir", type=Path, default=None,
                        help="keep the generated files here (and reuse them)")  # fmt: skip
    parser.add_argument("--phase", choices=("ingest", "mine"), help=argparse.SUPPRESS)
    parser.add_argument("--once", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("paths", nargs="*", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase == "ingest":
        print(json.dumps(ingest_phase(*args.paths)))
        return
    if args.phase == "mine":
        print(json.dumps(mine_phase(args.paths[1], once=args.once)))
        return
    wide = args.shape == "wide"
    default = [250_000] if args.shape != "narrow" else [100_000, 300_000, 1_000_000]
    sizes = [args.calls] if args.calls else args.sizes or default
    from _results import Run, headline

    results, rows = Run("mine"), []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        print(" ".join(f"{h:>{len(h) + 2}}" for h in HEADER), flush=True)
        for size in sizes:
            rows.append(run(args.shape, size, workdir, args.tasks))
        if wide and not args.alone:
            rows.append(run("narrow", 1_000_000, workdir))
    stages = [{"shape": row["shape"], "calls": row["calls"], **stage,
               "share": round(stage["wall_s"] / row["mine_s"], 3)}
              for row in rows for stage in row.pop("stages", [])]  # fmt: skip
    for stage in stages:
        print(
            f"{stage['shape']:>9} {stage['calls']:>9} {stage['stage']:<20} "
            f"{stage['wall_s']:>8.2f} s wall {stage['cpu_s']:>8.2f} s CPU",
            flush=True,
        )
    tables = {"rows": rows, **({"stages": stages} if stages else {})}
    results.write(args.json, tables, headlines(rows, headline))


if __name__ == "__main__":
    main()
