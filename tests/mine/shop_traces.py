"""A small seeded shop whose tool results plant the properties the miner must recover.

Flat JSONL, one call per line. Planted on nominal calls (``run_outcome == "success"``,
``status == "ok"``):

- ``get_order``: ``result.order_id`` echoes ``args.order_id`` (shape ``#W`` + 7 digits),
  every ``result.items[*].order_id`` too; ``result.total_cents == sum(items[*].amount_cents)``;
  amounts non-negative, quantities positive; ``status`` and ``currency`` from small sets;
  ``created_at`` a date-time; the customer's name and email are personal;
  ``shipping_cents`` is heavy-tailed (a range mined on all tasks overfits).
- ``search_orders``: ``len(result.orders) <= args.limit``; every
  ``result.orders[*].status == args.status``; ``orders`` is non-empty when
  ``args.status == "open"`` and often empty otherwise.
- ``refund``: ``result.refund_id`` a uuid, ``result.amount_cents == args.amount_cents``.

Failed calls (``tool_error``) and failed runs carry values that break all of this, so a
miner that reads them as nominal is caught.
"""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path
from typing import Any

STATUSES = ("open", "closed", "cancelled")
ORDER_STATES = ("pending", "shipped", "delivered")
FIRST = ("Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Margaret", "Ken")
LAST = ("Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Hamilton", "Thompson")


def _order(rng: random.Random, order_id: str) -> dict[str, Any]:
    items = []
    for _ in range(rng.randint(1, 4)):
        quantity = rng.randint(1, 5)
        items.append({
            "sku": f"SKU-{rng.randint(10000, 99999)}",
            "quantity": quantity,
            "amount_cents": quantity * rng.choice((0, 199, 999, 2500, 4999)),
            "order_id": order_id,
        })  # fmt: skip
    first, last = rng.choice(FIRST), rng.choice(LAST)
    return {
        "order_id": order_id,
        "status": rng.choice(ORDER_STATES),
        "currency": rng.choice(("USD", "USD", "EUR")),
        "items": items,
        "total_cents": sum(item["amount_cents"] for item in items),
        "shipping_cents": int(rng.lognormvariate(6, 1.2)),
        "created_at": f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T0{rng.randint(0, 9)}:30:00Z",
        "customer": {"name": f"{first} {last}", "email": f"{first.lower()}@example.com"},
    }


def _task_calls(rng: random.Random, task: int) -> list[tuple[str, dict, Any, str]]:
    order_id = f"#W{rng.randint(0, 9_999_999):07d}"
    order = _order(rng, order_id)
    status = rng.choice(STATUSES)
    limit = rng.choice((3, 5, 10))
    calls: list[tuple[str, dict, Any, str]] = [("get_order", {"order_id": order_id}, order, "ok")]
    for _ in range(2):
        found = rng.randint(1, limit) if status == "open" else rng.choice((0, 0, 1, 2))
        orders = [
            {"order_id": f"#W{rng.randint(0, 9_999_999):07d}", "status": status}
            for _ in range(min(found, limit))
        ]
        calls.append(("search_orders", {"status": status, "limit": limit},
                      {"orders": orders, "count": len(orders)}, "ok"))  # fmt: skip
    amount = max(1, order["total_cents"] // 2)
    refund = {"refund_id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
              "order_id": order_id, "amount_cents": amount, "status": "accepted"}  # fmt: skip
    calls.append(("refund", {"order_id": order_id, "amount_cents": amount}, refund, "ok"))
    if rng.random() < 0.3:  # a failed call: its garbage result must not be mined
        calls.append(("get_order", {"order_id": order_id},
                      {"error": "upstream", "total_cents": -1, "items": []}, "tool_error"))  # fmt: skip
    return calls


def shop_lines(tasks: int, seed: int = 0, trials: int = 3, first_task: int = 0,
               failed_runs: bool = True, task_ids: bool = True) -> list[dict[str, Any]]:  # fmt: skip
    """Flat records of ``tasks`` tasks (``trials`` runs each); a task repeats its calls with
    the same ids across trials, as a benchmark's trials do."""
    lines = []
    for task in range(first_task, first_task + tasks):
        task_rng = random.Random(f"{seed}-{task}")
        base = _task_calls(task_rng, task)
        for trial in range(trials):
            run_id = f"shop-{task:04d}.r{trial}"
            failed = failed_runs and trial == 2 and task % 4 == 0
            rng = random.Random(f"{seed}-{task}-{trial}")
            for position, (tool, args, result, status) in enumerate(base):
                if failed and tool == "get_order":
                    result = {**result, "total_cents": -rng.randint(1, 500), "items": []}
                line = {"run_id": run_id, "tool": tool, "call_id": f"{run_id}.c{position}",
                        "seq": position, "arguments": args, "result": result, "status": status,
                        "run_outcome": "failure" if failed else "success"}  # fmt: skip
                if task_ids:
                    line["task_id"] = f"shop-{task:04d}"
                lines.append(line)
    return lines


def write_shop(path: Path, tasks: int, seed: int = 0, **options: Any) -> Path:
    """Write :func:`shop_lines` as flat JSONL to ``path``."""
    lines = shop_lines(tasks, seed, **options)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path
