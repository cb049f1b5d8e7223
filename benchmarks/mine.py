"""Mining benchmark: generate flat JSONL traces of 100k, 300k and 1M calls, ingest them,
mine with 5 folds, and print the time at each size, candidates per second, peak RSS and
the ratio to a baseline scan of the same store (``SELECT tool, path, count(*) FROM
json_values GROUP BY ALL``).

    python benchmarks/mine.py                       # 100k, 300k, 1M
    python benchmarks/mine.py --sizes 100000 300000 # a subset

Each size runs in its own process, so the peak RSS printed is that size's. Target: 1M calls
in at most 60 s and 2 GB on 2 cores.
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


def generate(path: Path, calls: int, seed: int = 0) -> None:
    """Write about ``calls`` flat JSONL calls: tasks of several runs each."""
    rng = random.Random(seed)
    written, task = 0, 0
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


def one(size: int, workdir: Path) -> dict:
    """Generate, ingest and mine one size; return the figures."""
    import duckdb

    from tracemine.ingest import ingest
    from tracemine.mine import mine

    trace = workdir / f"calls-{size}.jsonl"
    db = workdir / f"calls-{size}.duckdb"
    started = time.perf_counter()
    generate(trace, size)
    generated = time.perf_counter() - started
    started = time.perf_counter()
    report = ingest([trace], db)
    ingested = time.perf_counter() - started
    con = duckdb.connect(str(db), read_only=True)
    started = time.perf_counter()
    con.execute("SELECT tool, path, count(*) FROM calls JOIN json_values USING (call_key) "
                "GROUP BY ALL").fetchall()  # fmt: skip
    baseline = time.perf_counter() - started
    values = con.execute("SELECT count(*) FROM json_values").fetchall()[0][0]
    con.close()
    started = time.perf_counter()
    result = mine(db, folds=5)
    mined = time.perf_counter() - started
    started = time.perf_counter()
    again = mine(db, folds=5, seed=1)
    remined = time.perf_counter() - started
    summary = result.provenance["summary"]
    candidates = sum(s["candidates"] for s in summary.values())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux
    return {
        "calls": report.total("calls"), "values": values, "generate_s": round(generated, 2),
        "ingest_s": round(ingested, 2), "baseline_s": round(baseline, 3),
        "mine_s": round(mined, 2), "remine_s": round(remined, 2),
        "candidates": candidates, "kept": len(result.contracts),
        "kept_again": len(again.contracts),
        "candidates_per_s": round(candidates / mined, 1),
        "ratio_to_baseline": round(mined / baseline, 1), "peak_rss_mb": round(peak),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 300_000, 1_000_000])
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(one(args.one, args.workdir)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        header = (
            "calls",
            "values",
            "ingest_s",
            "baseline_s",
            "mine_s",
            "remine_s",
            "candidates",
            "kept",
            "candidates_per_s",
            "ratio_to_baseline",
            "peak_rss_mb",
        )
        print(" ".join(f"{h:>17}" for h in header), flush=True)
        for size in args.sizes:
            out = subprocess.run(
                [sys.executable, __file__, "--one", str(size), "--workdir", str(workdir)],
                capture_output=True, text=True,
            )  # fmt: skip
            if out.returncode != 0:  # say why a size failed (out of memory, …) and go on
                print(f"{size:>17} failed: {out.stderr.strip().splitlines()[-1:]}", flush=True)
                continue
            figures = json.loads(out.stdout.strip().splitlines()[-1])
            print(" ".join(f"{figures[h]:>17}" for h in header), flush=True)


if __name__ == "__main__":
    main()
