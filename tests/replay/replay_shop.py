"""A scripted agent loop over a small shop, for the replay tests: its tools count the
calls that reach them, and the loop's final state is what a replay must reproduce."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Shop:
    """The live tools. ``calls`` lists every call that reached them."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.orders = {
            "#W1": {"order_id": "#W1", "total_cents": 1250, "currency": "EUR"},
            "#W2": {"order_id": "#W2", "total_cents": 300, "currency": "EUR"},
        }
        self.refunded: dict[str, int] = {}

    def get_order(self, order_id: str) -> dict[str, Any]:
        self.calls.append("get_order")
        if order_id not in self.orders:
            raise KeyError(order_id)
        return dict(self.orders[order_id])

    def search_orders(self, status: str, limit: int = 10) -> dict[str, Any]:
        self.calls.append("search_orders")
        return {"orders": sorted(self.orders)[: int(limit)]}

    def create_refund(self, order_id: str, amount_cents: int) -> dict[str, Any]:
        self.calls.append("create_refund")
        if amount_cents > self.orders[order_id]["total_cents"]:
            raise ValueError(f"refund of {amount_cents} exceeds the order total")
        self.refunded[order_id] = amount_cents
        return {"refund_id": f"rf-{order_id}", "amount_cents": amount_cents}


Tools = dict[str, Callable[..., Any]]


def agent(tools: Tools) -> list[str]:
    """Refund every delivered order in full, and try one refund too many; returns the
    transcript the agent would show."""
    transcript = []
    found = tools["search_orders"](status="delivered", limit=5.0)
    for order_id in found["orders"]:
        order = tools["get_order"](order_id=order_id)
        refund = tools["create_refund"](order_id=order_id, amount_cents=order["total_cents"])
        transcript.append(f"{refund['refund_id']}: {refund['amount_cents']}")
    try:
        tools["create_refund"](order_id="#W2", amount_cents=10_000)
    except ValueError as exc:
        transcript.append(f"refused: {exc}")
    try:
        tools["get_order"](order_id="#W9")
    except KeyError as exc:
        transcript.append(f"unknown: {exc}")
    return transcript


def wrap(deck: Any, shop: Shop) -> Tools:
    """The shop's tools behind a Recorder or Player."""
    names = ("get_order", "search_orders", "create_refund")
    return {name: deck.guard(name)(getattr(shop, name)) for name in names}
