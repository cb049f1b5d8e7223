"""What replaying a recorded run costs per call, next to a bare dictionary lookup.

    python benchmarks/replay.py [--calls 1000] [--repeats 30]

Records a run of ``--calls`` tool calls (three tools, order-shaped results of about 1 kB)
into a cassette, then replays it through ``Player.guard`` wrappers ``--repeats`` times.
Each replayed call binds the arguments, canonicalizes them (sorted keys, numbers and
strings normalised, ignored arguments removed), finds the recorded answer, logs the call
into the new run and hands back a fresh copy of the result. The baseline, timed in the
same run, is a lookup of the same results in a dict by precomputed keys. Prints the
median µs per call of both, their difference (target: at most 10 µs) and their ratio;
loading the cassette is timed apart.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from _results import Run, headline

from tracemine.replay import Player, Recorder, call_key


def order(n: int) -> dict[str, Any]:
    return {
        "order_id": f"#W{n:07d}",
        "status": ("pending", "delivered", "cancelled")[n % 3],
        "currency": "EUR",
        "total_cents": 1000 + n,
        "customer": {"id": f"u_{n % 97}", "email": f"user{n % 97}@example.com"},
        "items": [
            {"sku": f"SKU-{n}-{i}", "qty": i + 1, "price_cents": 250 * (i + 1)} for i in range(5)
        ],
    }


def get_order(order_id: str, include: list[str] | None = None) -> dict[str, Any]:
    return order(int(order_id[2:]))


def search_orders(customer_id: str, status: str, limit: int = 10, request_id: str = "") -> Any:
    return {"orders": [order(i)["order_id"] for i in range(limit)], "request_id": request_id}


def create_refund(order_id: str, amount_cents: int, reason: str) -> dict[str, Any]:
    return {"refund_id": f"rf-{order_id}", "amount_cents": amount_cents, "status": "created"}


TOOLS = {"get_order": get_order, "search_orders": search_orders, "create_refund": create_refund}


def script(calls: int) -> list[tuple[str, dict[str, Any]]]:
    """The run: the same tool mix every time, a few repeated keys among them."""
    out: list[tuple[str, dict[str, Any]]] = []
    for n in range(calls):
        if n % 3 == 0:
            out.append(("get_order", {"order_id": f"#W{n % 400:07d}", "include": ["items"]}))
        elif n % 3 == 1:
            out.append(("search_orders", {"customer_id": f"u_{n % 97}", "status": "delivered",
                                          "limit": 5, "request_id": f"req-{n}"}))  # fmt: skip
        else:
            out.append(("create_refund", {"order_id": f"#W{n:07d}", "amount_cents": 1250.0,
                                          "reason": "damaged"}))  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    args = parser.parse_args()
    results = Run("replay")
    run = script(args.calls)
    with tempfile.TemporaryDirectory() as folder:
        cassette = Path(folder) / "run.jsonl"
        with Recorder(cassette, ignore={"search_orders": ["request_id"]}) as recorder:
            wrapped = {name: recorder.guard(name)(fn) for name, fn in TOOLS.items()}
            answers = [wrapped[tool](**arguments) for tool, arguments in run]
        size = cassette.stat().st_size

        keys = [call_key(tool, arguments) for tool, arguments in run]
        table = dict(zip(keys, answers, strict=False))
        replay_us, lookup_us, load_ms = [], [], []
        for _ in range(args.repeats):
            started = time.perf_counter()
            player = Player(cassette)
            load_ms.append((time.perf_counter() - started) * 1e3)
            tools = {name: player.guard(name)(fn) for name, fn in TOOLS.items()}
            started = time.perf_counter()
            for tool, arguments in run:
                tools[tool](**arguments)
            replay_us.append((time.perf_counter() - started) * 1e6 / len(run))
            assert player.live_calls == 0 and player.replayed_calls == len(run)

            started = time.perf_counter()
            for key in keys:
                table[key]  # the baseline is the lookup itself
            lookup_us.append((time.perf_counter() - started) * 1e6 / len(run))

    replay, lookup = statistics.median(replay_us), statistics.median(lookup_us)
    print(f"python {platform.python_version()} on {platform.machine()}, load average "
          f"{os.getloadavg()[0]:.1f}; {len(run)} calls, cassette {size / 1024:.0f} kB, "
          f"{args.repeats} repeats")  # fmt: skip
    print(f"load the cassette:        {statistics.median(load_ms):8.2f} ms (median)")
    print(f"replay, per call:         {replay:8.2f} µs (median; min {min(replay_us):.2f})")
    print(f"dict lookup, per call:    {lookup:8.3f} µs (median)")
    print(
        f"replay over the lookup:   {replay - lookup:8.2f} µs a call (target ≤ 10), "
        f"ratio {replay / lookup:.0f}×"
    )
    row = {"calls": len(run), "repeats": args.repeats, "cassette_kb": round(size / 1024),
           "load_ms": round(statistics.median(load_ms), 2), "replay_us": round(replay, 2),
           "replay_min_us": round(min(replay_us), 2), "lookup_us": round(lookup, 3),
           "overhead_us": round(replay - lookup, 2), "ratio": round(replay / lookup, 1)}  # fmt: skip
    results.write(args.json, {"replay": [row]}, [
        headline("replay a recorded run, per call over a dict lookup", row["overhead_us"], "µs",
                 size=f"{len(run):,} calls, {args.repeats} repeats", target="<= 10 µs",
                 met=row["overhead_us"] <= 10, baseline=row["lookup_us"],
                 baseline_what="dict lookup", ratio=row["ratio"]),
    ])  # fmt: skip


if __name__ == "__main__":
    main()
