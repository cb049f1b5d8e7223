"""Commerce: orders, items, policies, regions and refunds.

Planted properties a miner should find: order ids shaped ``#W`` + 7 digits and echoed from
the arguments; line totals that add up to the subtotal and ``subtotal + shipping == total``;
non-negative cents with an ISO 4217 currency; status enums; ``tracking_number`` present only
once shipped; ``len(orders) <= args.limit`` and every returned order matching
``args.status``; ``search_orders`` non-empty when ``args.status == "delivered"`` (refund
tasks always have such an order); every ``list_items`` item echoing ``args.order_id``; and,
per run, ``create_refund`` at most once, always after ``get_order`` of the same order, for
exactly ``get_order.result.total_cents``.
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from tracemine.simulate._core import (
    EPOCH,
    Recorder,
    digits,
    iso,
    new_run,
    run_start,
    task_rng,
    trial_rng,
    upper_token,
    weighted,
    with_retry,
)

DOMAIN = "commerce"
STATUSES = ["pending", "processing", "shipped", "delivered", "cancelled", "returned"]
REGIONS = {
    "US": ("NA", "USD", 0.0),
    "CA": ("NA", "CAD", 0.05),
    "DE": ("EU", "EUR", 0.19),
    "FR": ("EU", "EUR", 0.2),
    "NL": ("EU", "EUR", 0.21),
    "GB": ("UK", "GBP", 0.2),
    "JP": ("APAC", "JPY", 0.1),
    "AU": ("APAC", "AUD", 0.1),
}
CATALOG = [
    ("Desk lamp", 2499),
    ("USB-C cable", 999),
    ("Mechanical keyboard", 8900),
    ("Wool socks", 1250),
    ("Water bottle", 1800),
    ("Noise-cancelling headphones", 19900),
    ("Notebook", 450),
    ("Phone case", 1599),
    ("Espresso cups", 3200),
    ("Backpack", 6400),
]
CITIES = {
    "US": "Portland",
    "CA": "Halifax",
    "DE": "Leipzig",
    "FR": "Lyon",
    "NL": "Utrecht",
    "GB": "Leeds",
    "JP": "Sapporo",
    "AU": "Hobart",
}


def _order(rng: random.Random, user_id: str, country: str, status: str) -> dict[str, Any]:
    currency = REGIONS[country][1]
    items = []
    for _ in range(rng.randint(1, 4)):
        name, price = rng.choice(CATALOG)
        quantity = weighted(rng, [(1, 0.7), (2, 0.2), (3, 0.1)])
        items.append(
            {
                "item_id": "it_" + digits(rng, 6),
                "sku": "SKU-" + upper_token(rng, 5),
                "name": name,
                "quantity": quantity,
                "unit_price_cents": price,
                "line_total_cents": quantity * price,
            }
        )
    subtotal = sum(item["line_total_cents"] for item in items)
    shipping = 0 if subtotal >= 5000 else rng.choice([499, 699, 999])
    created = EPOCH - timedelta(days=rng.randint(2, 90), minutes=rng.randint(0, 1440))
    order: dict[str, Any] = {
        "order_id": "#W" + digits(rng, 7),
        "user_id": user_id,
        "status": status,
        "created_at": iso(created),
        "currency": currency,
        "items": items,
        "subtotal_cents": subtotal,
        "shipping_cents": shipping,
        "total_cents": subtotal + shipping,
        "shipping_address": {
            "line1": f"{rng.randint(1, 400)} Main Street",
            "city": CITIES[country],
            "country": country,
            "postal_code": digits(rng, 5),
        },
        # nullable by design: most orders carry no gift message
        "gift_message": rng.choice(["Happy birthday!", "Enjoy!"]) if rng.random() < 0.15 else None,
    }
    if status in ("shipped", "delivered", "returned"):
        # optional by design: only orders that left the warehouse have one
        order["tracking_number"] = "1Z" + upper_token(rng, 16)
    return order


def _world(rng: random.Random) -> dict[str, Any]:
    country = rng.choice(sorted(REGIONS))
    user_id = "u_" + digits(rng, 6)
    statuses = ["delivered"] + [rng.choice(STATUSES) for _ in range(rng.randint(1, 5))]
    orders = [_order(rng, user_id, country, status) for status in statuses]
    rng.shuffle(orders)
    return {"user_id": user_id, "country": country, "orders": orders}


def _summary(order: dict[str, Any]) -> dict[str, Any]:
    keys = ("order_id", "status", "total_cents", "currency", "created_at")
    return {key: order[key] for key in keys}


def _search(world: dict[str, Any], status: str | None, limit: int) -> dict[str, Any]:
    found = [o for o in world["orders"] if status is None or o["status"] == status]
    return {
        "user_id": world["user_id"],
        "status_filter": status,
        "total": len(found),
        "orders": [_summary(o) for o in found[:limit]],
    }


def _region(country: str) -> dict[str, Any]:
    region, currency, vat = REGIONS[country]
    return {
        "country": country,
        "region": region,
        "currency": currency,
        "vat_rate": vat,
        "ships_internationally": region != "APAC",
    }


def _policy(rng: random.Random, policy_type: str, country: str) -> dict[str, Any]:
    region = REGIONS[country][0]
    policy: dict[str, Any] = {
        "policy_id": f"POL-{region}-{policy_type.upper()}-{rng.randint(1, 9)}",
        "policy_type": policy_type,
        "region": region,
        "max_days": 14 if region == "EU" else 30,
        "restocking_fee_pct": rng.choice([0, 0, 5, 10]),
        "updated_at": (EPOCH - timedelta(days=rng.randint(10, 400))).date().isoformat(),
    }
    if rng.random() < 0.4:
        policy["notes"] = "Items must be unused and in original packaging."
    return policy


def _list_items(order: dict[str, Any]) -> dict[str, Any]:
    items = [
        {
            "order_id": order["order_id"],
            "item_id": i["item_id"],
            "sku": i["sku"],
            "quantity": i["quantity"],
            "unit_price_cents": i["unit_price_cents"],
            "returnable": i["unit_price_cents"] < 15000,
        }
        for i in order["items"]
    ]
    return {"order_id": order["order_id"], "count": len(items), "items": items}


def simulate_task(seed: int, index: int, trials: int) -> list[dict[str, Any]]:
    """Every trial of one commerce task."""
    world_rng = task_rng(seed, DOMAIN, index)
    world = _world(world_rng)
    family = weighted(
        world_rng,
        [("refund", 0.45), ("order_status", 0.25), ("item_lookup", 0.15), ("order_history", 0.15)],
    )
    policy_seed = world_rng.random()
    runs = []
    for trial in range(trials):
        rng = trial_rng(seed, DOMAIN, index, trial)
        rec = Recorder(rng, run_start(index, trial))
        body = {
            "refund": _refund,
            "order_status": _status,
            "item_lookup": _items,
            "order_history": _history,
        }[family]
        instruction, final, reward = body(rec, world, random.Random(policy_seed))
        runs.append(new_run(DOMAIN, index, trial, family, instruction, rec, final, reward))
    return runs


def _refund(rec: Recorder, world: dict[str, Any], prng: random.Random) -> tuple[str, str, float]:
    rng = rec.rng
    target = next(o for o in world["orders"] if o["status"] == "delivered")
    limit = rng.choice([5, 10, 20])
    rec.call(
        "search_orders",
        {"user_id": world["user_id"], "status": "delivered", "limit": limit},
        _search(world, "delivered", limit),
    )
    if rng.random() < 0.15:
        # the agent first tries an id it misread: a legitimate not-found error
        wrong = "#W" + digits(rng, 7)
        rec.call("get_order", {"order_id": wrong}, None, ("not_found", f"no order with id {wrong}"))
    order = with_retry(rec, "get_order", {"order_id": target["order_id"]}, target)
    country = world["country"]
    policy = _policy(prng, "refund", country)
    rec.batch(
        [
            ("fetch_region", {"country": country}, _region(country), None),
            ("fetch_policy", {"policy_type": "refund", "country": country}, policy, None),
        ]
    )
    if rng.random() < 0.1:
        # a failed trial: the agent answers without refunding (tools were still right)
        return _ask(target), "I checked the policy; you should contact support.", 0.0
    refund = {
        "refund_id": "RF-" + upper_token(rng, 8),
        "order_id": order["order_id"],
        "amount_cents": order["total_cents"],
        "currency": order["currency"],
        "status": weighted(rng, [("approved", 0.8), ("pending", 0.2)]),
        "created_at": iso(rec.now),
    }
    rec.call(
        "create_refund",
        {
            "order_id": order["order_id"],
            "amount_cents": order["total_cents"],
            "currency": order["currency"],
            "reason": rng.choice(["damaged", "not_as_described", "changed_mind"]),
        },
        refund,
    )
    return _ask(target), f"Refund {refund['refund_id']} issued for order {order['order_id']}.", 1.0


def _ask(order: dict[str, Any]) -> str:
    return f"I want a refund for my delivered order {order['order_id']}."


def _status(rec: Recorder, world: dict[str, Any], prng: random.Random) -> tuple[str, str, float]:
    order = world["orders"][0]
    with_retry(rec, "get_order", {"order_id": order["order_id"]}, order)
    if rec.rng.random() < 0.5:
        rec.call("fetch_region", {"country": world["country"]}, _region(world["country"]))
    text = f"Order {order['order_id']} is {order['status']}."
    return f"What is the status of order {order['order_id']}?", text, 1.0


def _items(rec: Recorder, world: dict[str, Any], prng: random.Random) -> tuple[str, str, float]:
    order = world["orders"][-1]
    if rec.rng.random() < 0.5:
        rec.batch(
            [
                ("get_order", {"order_id": order["order_id"]}, order, None),
                ("list_items", {"order_id": order["order_id"]}, _list_items(order), None),
            ]
        )
    else:
        rec.call("get_order", {"order_id": order["order_id"]}, order)
        rec.call("list_items", {"order_id": order["order_id"]}, _list_items(order))
    rec.call(
        "fetch_policy",
        {"policy_type": "exchange", "country": world["country"]},
        _policy(prng, "exchange", world["country"]),
    )
    return f"Which items of {order['order_id']} can I exchange?", "Here are the items.", 1.0


def _history(rec: Recorder, world: dict[str, Any], prng: random.Random) -> tuple[str, str, float]:
    rng = rec.rng
    status = rng.choice(STATUSES)
    limit = rng.choice([3, 5, 10])
    page = rec.call(
        "search_orders",
        {"user_id": world["user_id"], "status": status, "limit": limit},
        _search(world, status, limit),
    )
    if page["orders"]:
        first = next(o for o in world["orders"] if o["order_id"] == page["orders"][0]["order_id"])
        rec.call("get_order", {"order_id": first["order_id"]}, first)
    else:
        # empty is a legitimate answer here: no order has that status
        rec.call(
            "search_orders",
            {"user_id": world["user_id"], "limit": limit},
            _search(world, None, limit),
        )
    return f"Show my {status} orders.", f"You have {page['total']} {status} orders.", 1.0
