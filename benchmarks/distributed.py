"""Mining across workers: ingest plus mine of one corpus in 20 files, three ways.

    python benchmarks/distributed.py                    # 1M calls (the CI size)
    python benchmarks/distributed.py --calls 10000000   # 10M calls in 20 files
    python benchmarks/distributed.py --workdir DIR      # keep (and reuse) the files

The corpus is ``benchmarks/mine.py``'s narrow shape (37 values a call, 50 calls a task),
``--files`` files of whole tasks. Rows, each in its own process and started on an idle
machine: (a) today's single store, ``tracemine ingest`` then ``tracemine mine`` (each in
a process of its own; its peak RSS is the larger of the two); (b) ``mine --workers 1``
and (c) ``mine --workers 2``, a local Dask cluster whose workers are capped at
``--worker-memory`` (1GB). Printed per row: wall time of ingest plus mine, calls per
second, the ratio to (a)'s throughput, the peak RSS of each worker (read in each worker
at the end: a worker the nanny restarted would show only its last life, so restarts are
counted) and of the client process. The contracts of (b) and (c) are checked to be those
of (a). ``cpu_s`` is the CPU time of the row's whole process tree: on 2 cores no row can
take less wall time than half of it.

Targets on 2 cores: (c) in at most 1.15x the CPU seconds of (a) at 1M calls
(``cpu_vs_a``); 10M calls ingested and mined in under 15 minutes, the client within 1 GB.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# this file's folder is first on sys.path when it runs, and its name would shadow the
# ``distributed`` package: take it out, and load the mining benchmark's corpus by path
HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
_spec = importlib.util.spec_from_file_location("tracemine_bench_mine", HERE / "mine.py")
assert _spec is not None and _spec.loader is not None
_mine = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mine)
generate = _mine.generate

HEADER = ("row", "calls", "files", "wall_s", "cpu_s", "cpu_vs_a", "calls_per_s", "vs_a",
          "worker_rss_mb", "restarts", "client_rss_mb", "same_contracts")  # fmt: skip


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_corpus(folder: Path, calls: int, files: int) -> list[Path]:
    """``calls`` narrow calls in ``files`` files of whole tasks of their own (a file's
    tasks are numbered on from the last file's)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"part-{n:02d}.jsonl" for n in range(files)]
    tasks = calls // files // _mine.CALLS_PER_TASK + 1
    for n, path in enumerate(paths):
        if not path.exists():
            generate(path, calls // files, seed=1000 + n, first_task=n * tasks)
    return paths


def single_ingest(paths: list[str], db: str) -> dict:
    from tracemine.ingest import ingest

    report = ingest(paths, db)
    return {"calls": report.total("calls"), "rss_mb": round(_peak_mb())}


def single_mine(db: str, out: str) -> dict:
    from tracemine.mine import mine

    result = mine(db)
    Path(out).write_text(json.dumps([c.model_dump(mode="json") for c in result.contracts]))
    return {"rss_mb": round(_peak_mb()), "kept": len(result.contracts)}


def sharded(paths: list[str], work: str, workers: int, memory: str, out: str) -> dict:
    import resource as res

    from tracemine.engine import mine_sharded
    from tracemine.engine.dask import cluster

    def peak() -> float:
        return res.getrusage(res.RUSAGE_SELF).ru_maxrss / 1024

    with cluster(workers, memory=memory, dashboard=False) as started:
        client = started.client
        seen = set(client.scheduler_info()["workers"])
        result = mine_sharded(paths, work=work, client=client, worker_memory=memory)
        rss = client.run(peak)
        now = set(client.scheduler_info()["workers"])
    Path(out).write_text(
        json.dumps([c.model_dump(mode="json") for c in result.contracts.contracts])
    )
    return {"worker_rss_mb": [round(v) for v in rss.values()],
            "restarts": len(now - seen), "client_rss_mb": round(_peak_mb()),
            "calls": result.ingest.total("calls")}  # fmt: skip


def _cpu() -> float:
    """CPU seconds of the children waited for so far (the whole process tree of a finished
    child: its workers were waited for by their nannies, the nannies by it)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _child(*args: object) -> tuple[dict, float, float]:
    started, cpu = time.perf_counter(), _cpu()
    out = subprocess.run([sys.executable, __file__, *map(str, args)],
                         capture_output=True, text=True)  # fmt: skip
    wall = time.perf_counter() - started
    if out.returncode != 0:
        raise SystemExit(f"{args[1]} failed: {(out.stderr.strip().splitlines() or ['?'])[-1]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1])), wall, _cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--worker-memory", default="1GB")
    parser.add_argument("--rows", default="abc", help="which rows to run (a, b, c)")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    parser.add_argument("args", nargs="*", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.phase:
        if options.phase == "sharded":
            *paths, work, workers, memory, out = options.args
            found = sharded(paths, work, int(workers), memory, out)
        elif options.phase == "ingest":
            *paths, db = options.args
            found = single_ingest(paths, db)
        else:
            found = single_mine(*options.args)
        print(json.dumps(found))
        return
    spec = importlib.util.spec_from_file_location("tracemine_bench_results", HERE / "_results.py")
    assert spec is not None and spec.loader is not None
    _results = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(_results)
    results, lines = _results.Run("distributed"), {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = options.workdir or Path(tmp)
        paths = [str(p) for p in write_corpus(folder / "corpus", options.calls, options.files)]
        print(" ".join(f"{h:>{len(h) + 2}}" for h in HEADER), flush=True)
        baseline = cpu_a = None
        reference = folder / "a.json"
        for row in options.rows:
            out = folder / f"{row}.json"
            if row == "a":
                db = folder / "single.duckdb"
                db.unlink(missing_ok=True)
                ingested, t1, c1 = _child("--phase", "ingest", *paths, db)
                mined, t2, c2 = _child("--phase", "mine", db, out)
                wall, cpu, calls = t1 + t2, c1 + c2, ingested["calls"]
                figures = {"worker_rss_mb": "-", "restarts": "-",
                           "client_rss_mb": max(ingested["rss_mb"], mined["rss_mb"])}  # fmt: skip
            else:
                work = folder / f"work-{row}"
                subprocess.run(["rm", "-rf", str(work)], check=True)
                workers = {"b": 1, "c": 2}[row]
                found, wall, cpu = _child("--phase", "sharded", *paths, work, workers,
                                          options.worker_memory, out)  # fmt: skip
                calls = found["calls"]
                figures = {k: found[k] for k in ("worker_rss_mb", "restarts", "client_rss_mb")}
            rate = calls / wall
            baseline = baseline or (rate if row == "a" else None)
            cpu_a = cpu_a or (cpu if row == "a" else None)
            # without row (a) in this run there is nothing to compare with
            same = out.read_text() == reference.read_text() if "a" in options.rows[
                :options.rows.index(row)] else "-"  # fmt: skip
            line = {"row": row, "calls": calls, "files": len(paths), "wall_s": round(wall, 1),
                    "cpu_s": round(cpu, 1), "cpu_vs_a": round(cpu / cpu_a, 2) if cpu_a else "-",
                    "calls_per_s": round(rate), "vs_a": round(rate / baseline, 2) if baseline
                    else "-", **figures, "same_contracts": same}  # fmt: skip
            print(" ".join(f"{line[h]!s:>{len(h) + 2}}" for h in HEADER), flush=True)
            lines[row] = line
    a, c = lines.get("a"), lines.get("c")
    results.write(options.json, {"rows": list(lines.values())}, [_results.headline(
        "mine --workers 2 (ingest plus mine), CPU seconds over the single store's", c["cpu_s"],
        "CPU-s", size=f"{c['calls']:,} calls in {c['files']} files", target="<= 1.15x (a) at 1M",
        met=c["cpu_s"] <= 1.15 * a["cpu_s"] if c["calls"] >= 950_000 else None, baseline=a["cpu_s"],
        baseline_what="single store (a)", ratio=round(c["cpu_s"] / a["cpu_s"], 3))] if a and c else [])  # fmt: skip


if __name__ == "__main__":
    main()
