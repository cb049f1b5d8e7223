"""Writes ``shapes.jsonl``: tool results shaped like those of real retail and travel tool
suites, in tracemine's flat trace format, one task per run.

The shapes, each one written out below as real exports have it:

- ``get_product_details``: ``variants`` is an object keyed by item ids (a map), each
  entry with a price as a number, an availability flag and options;
- ``get_user_details``: ``payment_methods`` keyed by ``gift_card_1591784``-style ids;
- ``get_order_details``: ids with patterns (``#W4817420``), items with prices;
- ``search_hotels``: a paged list with ``count``, ``total`` and ``page_size`` beside it.

Run ``python tests/data/real_shapes/generate.py`` to write the file again; the output is
the same for the same seed.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

TASKS = 80
SEED = 7
COLORS = ["red", "blue", "black", "white", "green"]
SIZES = ["S", "M", "L", "XL"]
CITIES = ["Paris", "Lisbon", "Osaka", "Denver", "Quito"]
FIRST = ["mia", "noah", "ava", "liam", "zoe", "omar", "ines", "yuki"]
LAST = ["garcia", "smith", "kim", "rossi", "haddad", "silva", "mori"]


def _id(rng: random.Random, digits: int = 10) -> str:
    return str(rng.randrange(10 ** (digits - 1), 10**digits))


def product(rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    product_id = _id(rng)
    variants = {}
    for _ in range(rng.randint(2, 4)):
        item_id = _id(rng)
        variants[item_id] = {
            "item_id": item_id,
            "options": {"color": rng.choice(COLORS), "size": rng.choice(SIZES)},
            "available": rng.random() < 0.8,
            "price": round(rng.uniform(9, 400), 2),
        }
    name = rng.choice(["T-Shirt", "Backpack", "Desk Lamp", "Water Bottle"])
    return {"product_id": product_id}, {
        "name": name, "product_id": product_id, "variants": variants,
    }  # fmt: skip


def user(rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    user_id = f"{first}_{last}_{rng.randrange(1000, 9999)}"
    methods: dict[str, Any] = {}
    card = f"credit_card_{rng.randrange(1000000, 9999999)}"
    methods[card] = {"source": "credit_card", "id": card, "brand": rng.choice(["visa", "amex"]),
                     "last_four": f"{rng.randrange(10000):04d}"}  # fmt: skip
    if rng.random() < 0.7:
        gift = f"gift_card_{rng.randrange(1000000, 9999999)}"
        methods[gift] = {"source": "gift_card", "id": gift, "balance": rng.randint(0, 300)}
    orders = [f"#W{rng.randrange(1000000, 9999999)}" for _ in range(rng.randint(1, 3))]
    return {"user_id": user_id}, {
        "user_id": user_id, "name": {"first_name": first.title(), "last_name": last.title()},
        "email": f"{first}.{last}{rng.randrange(100)}@example.com",
        "payment_methods": methods, "orders": orders,
    }  # fmt: skip


def order(rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    order_id = f"#W{rng.randrange(1000000, 9999999)}"
    items = [
        {"item_id": _id(rng), "name": rng.choice(["T-Shirt", "Backpack", "Desk Lamp"]),
         "price": round(rng.uniform(9, 400), 2), "quantity": rng.randint(1, 3)}
        for _ in range(rng.randint(1, 4))
    ]  # fmt: skip
    total = round(sum(i["price"] * i["quantity"] for i in items), 2)
    return {"order_id": order_id}, {
        "order_id": order_id, "status": rng.choice(["pending", "delivered", "cancelled"]),
        "items": items, "total": total, "currency": "USD",
    }  # fmt: skip


def hotels(rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    city, limit = rng.choice(CITIES), rng.choice([5, 10])
    total = rng.randint(1, 40)
    count = min(total, limit)
    results = [
        {"hotel_id": f"H{rng.randrange(10000, 99999)}", "name": f"Hotel {rng.randrange(100)}",
         "city": city, "stars": rng.randint(1, 5), "price_per_night": round(rng.uniform(40, 600), 2),
         "rating": round(rng.uniform(5, 10), 1)}
        for _ in range(count)
    ]  # fmt: skip
    return {"city": city, "limit": limit}, {
        "results": results, "count": count, "total": total, "page_size": limit,
    }  # fmt: skip


TOOLS = {
    "get_product_details": product, "get_user_details": user,
    "get_order_details": order, "search_hotels": hotels,
}  # fmt: skip


def records(tasks: int = TASKS, seed: int = SEED) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for task in range(tasks):
        for seq, (tool, make) in enumerate(TOOLS.items()):
            arguments, result = make(rng)
            out.append({
                "run_id": f"run-{task:03d}", "task_id": f"task-{task:03d}", "seq": seq,
                "tool": tool, "call_id": f"call-{task:03d}-{seq}", "arguments": arguments,
                "result": result, "status": "ok",
            })  # fmt: skip
    return out


if __name__ == "__main__":
    target = Path(__file__).with_name("shapes.jsonl")
    lines = (json.dumps(r, separators=(",", ":")) for r in records())
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {target.name}")
