"""Ingest throughput and memory.

Writes N calls (default 1,000,000) of realistic nested results as flat JSONL, ingests
them into a fresh DuckDB store, and in the same run times a bare line-by-line
``orjson.loads`` of the same file. Prints calls/s, peak RSS of the ingest (a child
process, so the figure is the ingest's alone) and the ratio to the bare parse.

    python benchmarks/ingest.py [--calls N] [--keep DIR] [--breakdown]

Targets: 1M calls in <= 60 s on 2 cores, peak RSS <= 1 GB whatever the file size,
<= 3x the bare parse time.

``--breakdown`` then times the parts of ingest on their own, each in a child process: the
reading thread (ingest with flattening switched off), DuckDB's ``json_tree`` walk of the
stored arguments and results (counting the rows, in the ranges ingest flattens), storing
the value rows that ingest produced into an empty table, and ingest's own flattening
statements with nothing else running.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
from _results import Run, headline

STATUSES = ["pending", "processed", "delivered", "cancelled", "returned"]


def write_calls(path: Path, n: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    with open(path, "wb") as out:
        for i in range(n):
            task = i // 50
            run = i // 5
            n_items = rng.randint(0, 6)
            items = [
                {
                    "item_id": f"I{rng.randrange(10**9):09d}",
                    "sku": f"SKU-{rng.randrange(10**5):05d}",
                    "qty": rng.randint(1, 4),
                    "price_cents": rng.randint(100, 50_000),
                    "options": {
                        "color": rng.choice(["red", "blue", "black"]),
                        "size": rng.choice("SML"),
                    },
                }
                for _ in range(n_items)
            ]
            order_id = f"#W{rng.randrange(10**7):07d}"
            record = {
                "run_id": f"run-{run}",
                "task_id": f"task-{task}",
                "seq": i % 5,
                "tool": rng.choice(["get_order", "search_orders", "list_items"]),
                "call_id": f"call_{i}",
                "arguments": {"order_id": order_id, "limit": 10},
                "result": {
                    "order_id": order_id,
                    "status": rng.choice(STATUSES),
                    "items": items,
                    "total_cents": sum(x["qty"] * x["price_cents"] for x in items),
                    "currency": "USD",
                    "created_at": f"2025-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T10:00:00Z",
                    "customer": {
                        "customer_id": f"C{rng.randrange(10**6):06d}",
                        "tier": rng.choice(["gold", "silver", None]),
                    },
                },
                "status": "ok",
                "duration_ms": round(rng.uniform(1, 400), 2),
            }
            out.write(orjson.dumps(record))
            out.write(b"\n")


def bare_parse(path: Path) -> float:
    start = time.perf_counter()
    with open(path, "rb") as handle:
        for line in handle:
            orjson.loads(line)
    return time.perf_counter() - start


_CHILD = """
import json, resource, sys, time
from tracemine.ingest import ingest, store
if sys.argv[3] == "no-flatten":
    store.flatten = lambda con, first, last: None
before = resource.getrusage(resource.RUSAGE_SELF)  # imports are not the ingest's
start = time.perf_counter()
report = ingest([sys.argv[1]], sys.argv[2])
elapsed = time.perf_counter() - start
f = report.files[0]
usage = resource.getrusage(resource.RUSAGE_SELF)
cpu_s = usage.ru_utime + usage.ru_stime - before.ru_utime - before.ru_stime
print(json.dumps({"seconds": elapsed, "calls": f.calls, "read": f.units_read,
                  "stored": f.units_stored, "quarantined": f.units_quarantined,
                  "rss_mb": usage.ru_maxrss / 1024, "cpu_s": cpu_s}))
"""

# the parts of the values side, on the finished store (argv: db, part)
_PART = """
import json, resource, sys, time
from tracemine.ingest import pipeline, store
con = store.connect(sys.argv[1], memory_limit=pipeline.INGEST_MEMORY_LIMIT)
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
first, last = store.fetch_one(con, "SELECT min(call_key), max(call_key) FROM calls")
if sys.argv[2] != "walk":
    con.execute("CREATE TABLE bench_values AS SELECT * FROM json_values LIMIT 0")
start, used = time.perf_counter(), cpu()
if sys.argv[2] == "walk":
    for low in range(first, last + 1, pipeline.FLATTEN_CALLS):
        for column in ("arguments", "result"):
            con.execute(f"SELECT count(*) FROM calls c, json_tree(c.{column}) t "
                        "WHERE c.call_key BETWEEN ? AND ?",
                        [low, low + pipeline.FLATTEN_CALLS - 1]).fetchall()
elif sys.argv[2] == "flatten":  # ingest's own statements, into a table of their own
    for low in range(first, last + 1, pipeline.FLATTEN_CALLS):
        for side in ("args", "result"):
            sql = store.flatten_sql(side).replace("INTO json_values", "INTO bench_values")
            con.execute(sql, [low, low + pipeline.FLATTEN_CALLS - 1])
    con.execute("CHECKPOINT")
else:
    con.execute("INSERT INTO bench_values SELECT * FROM json_values")
    con.execute("CHECKPOINT")
seconds, cpu_s = time.perf_counter() - start, cpu() - used
if sys.argv[2] != "walk":
    con.execute("DROP TABLE bench_values")
rows = store.fetch_one(con, "SELECT count(*) FROM json_values")[0]
print(json.dumps({"seconds": seconds, "cpu_s": cpu_s, "rows": rows}))
"""


def child(code: str, *args: object) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, default=None, help="keep the files in this folder")
    parser.add_argument("--breakdown", action="store_true", help="time ingest's parts alone")
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    options = parser.parse_args()
    results = Run("ingest")
    work = options.keep or Path(tempfile.mkdtemp(prefix="tracemine-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    traces, db = work / "calls.jsonl", work / "bench.duckdb"
    db.unlink(missing_ok=True)
    print(f"writing {options.calls:,} calls …", flush=True)
    write_calls(traces, options.calls)
    size_mb = traces.stat().st_size / 1e6
    parse_s = bare_parse(traces)
    result = child(_CHILD, traces, db, "all")
    assert result["read"] == result["stored"] + result["quarantined"]
    seconds = result["seconds"]
    print(f"file               {size_mb:,.0f} MB, {options.calls:,} calls")
    print(f"bare orjson parse  {parse_s:.2f} s")
    print(f"ingest             {seconds:.2f} s  ({result['calls'] / seconds:,.0f} calls/s)")
    print(f"ingest CPU         {result['cpu_s']:.1f} s (all threads; 2 cores give 2 s a second)")
    print(f"ratio              {seconds / parse_s:.1f}x the bare parse")
    print(f"peak RSS (ingest)  {result['rss_mb']:,.0f} MB")
    print(f"store              {db.stat().st_size / 1e6:,.0f} MB")
    row = {"calls": result["calls"], "file_mb": round(size_mb), "parse_s": round(parse_s, 2),
           "ingest_s": round(seconds, 2), "calls_per_s": round(result["calls"] / seconds),
           "cpu_s": round(result["cpu_s"], 1), "ratio_to_parse": round(seconds / parse_s, 1),
           "rss_mb": round(result["rss_mb"]), "store_mb": round(db.stat().st_size / 1e6)}  # fmt: skip
    tables = {"ingest": [row]}
    if options.breakdown:
        tables["parts alone"] = breakdown(traces, db, parse_s)
    size = f"{options.calls:,} calls, {size_mb:,.0f} MB"
    # the decided target is 110 s and 800 MB at 1M calls: at another size the time is
    # scaled to the calls (the 3x-the-parse goal waits for a store with fewer rows a call)
    limit = 110 * options.calls / 1_000_000
    results.write(options.json, tables, [
        headline(f"ingest, flat JSONL of nested results (peak RSS {row['rss_mb']:,} MB)",
                 row["ingest_s"], "s", size=size, target=f"<= {limit:g} s (110 s a million "
                 "calls) and <= 800 MB", met=seconds <= limit and row["rss_mb"] <= 800,
                 baseline=row["parse_s"],
                 baseline_what="bare orjson parse", ratio=row["ratio_to_parse"]),
    ])  # fmt: skip
    if options.keep is None:
        shutil.rmtree(work, ignore_errors=True)


def breakdown(traces: Path, db: Path, parse_s: float) -> list[dict]:
    """Each part of ingest alone, wall and CPU seconds (CPU over all threads)."""
    alone = traces.with_name("reader-alone.duckdb")
    alone.unlink(missing_ok=True)
    reader = child(_CHILD, traces, alone, "no-flatten")
    alone.unlink(missing_ok=True)
    walk = child(_PART, db, "walk")
    values = child(_PART, db, "store")
    flatten = child(_PART, db, "flatten")
    print("parts alone        wall s   CPU s")
    print(f"  reading thread  {reader['seconds']:7.1f} {reader['cpu_s']:7.1f}"
          "  (parse, normalize, store calls and runs; flattening off)")  # fmt: skip
    print(f"  json_tree walk  {walk['seconds']:7.1f} {walk['cpu_s']:7.1f}"
          "  (rows counted, nothing computed or stored)")  # fmt: skip
    print(f"  store values    {values['seconds']:7.1f} {values['cpu_s']:7.1f}"
          f"  ({values['rows']:,} value rows into an empty table)")  # fmt: skip
    print(f"  flatten         {flatten['seconds']:7.1f} {flatten['cpu_s']:7.1f}"
          "  (ingest's flattening statements, nothing else running)")  # fmt: skip
    print(f"3x the bare parse {3 * parse_s:7.1f}")
    parts = {"reading thread, flattening off": reader, "json_tree walk, rows counted": walk,
             "store the value rows": values, "flatten statements alone": flatten}  # fmt: skip
    return [{"part": name, "wall_s": round(found["seconds"], 1), "cpu_s": round(found["cpu_s"], 1)}
            for name, found in parts.items()]  # fmt: skip


if __name__ == "__main__":
    main()
