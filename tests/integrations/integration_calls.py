"""One small contract file for the integration tests, and the calls they make: a get_order
whose result is wrong for the task (another order, no items) and one that is right."""

from __future__ import annotations

from tracemine.model.contract import Contract, ContractFile
from tracemine.monitor import Monitor

ARGS = {"order_id": "#W0000001"}
GOOD = {"order_id": "#W0000001", "items": [{"sku": "lamp", "quantity": 1}]}
BAD = {"order_id": "#W0000002", "items": []}


def order_monitor() -> Monitor:
    contracts = [
        Contract(tool="get_order", side="result", kind="non_empty", paths=["result.items"],
                 status="accepted"),
        Contract(tool="get_order", side="result", kind="equals",
                 paths=["result.order_id", "args.order_id"], status="accepted"),
        Contract(tool="get_order", side="result", kind="non_negative",
                 paths=["result.items[*].quantity"], status="accepted"),
    ]  # fmt: skip
    return Monitor.from_dict(ContractFile(contracts=contracts).model_dump(mode="json"))
