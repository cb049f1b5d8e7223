"""An OpenAI-style agent loop with the tracemine monitor between the tools and the model.

Run it with ``python examples/agent_loop.py``. A scripted stand-in plays the model so the
example needs no network; with a real client, ``model.complete(messages)`` becomes
``client.chat.completions.create(model=..., messages=messages, tools=...)``.

The same loop runs against a cassette (``tracemine.replay``)::

    python examples/agent_loop.py record --cassette run.jsonl   # call the tools, record them
    python examples/agent_loop.py replay --cassette run.jsonl   # answer every call from it
    python examples/agent_loop.py cut --cassette run.jsonl --live search_orders
        # search_orders live, get_order from the record; the run goes to run.live.jsonl

The loop does three things for the monitor:

1. declares each tool call the model issues (``run.record_call``),
2. checks each result's content text and puts the note after it with
   ``receipt.annotate(content)`` (the result text is passed on unchanged; the note is a
   trailer that ingest and ``tracemine check`` cut off when they read the conversation),
3. asks ``monitor.finalize(run)`` before accepting "done", and tells the model what is
   missing if the run is incomplete.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from tracemine.monitor import Monitor
from tracemine.replay import Player, Recorder

CONTRACTS = {
    "schema_version": "1",
    "contracts": [
        {"id": "c_items", "tool": "get_order", "side": "result", "kind": "non_empty",
         "paths": ["result.items"], "status": "accepted",
         "recovery": {"tools": ["search_orders"], "hint": "The order may exist under another id."}},
        {"id": "c_echo", "tool": "get_order", "side": "result", "kind": "equals",
         "paths": ["result.order_id", "args.order_id"], "status": "accepted"},
        {"id": "c_qty", "tool": "get_order", "side": "result", "kind": "non_negative",
         "paths": ["result.items[*].quantity"], "status": "accepted"},
    ],
}  # fmt: skip

TOOLS = {
    # a tool that answers "200 OK" with a payload that is wrong for the task
    "get_order": lambda order_id: {"order_id": "#W0000002", "items": []},
    "search_orders": lambda order_id: {
        "orders": [{"order_id": order_id, "items": [{"sku": "lamp", "quantity": 1}]}]
    },
}


def _call(number: int, name: str, arguments: str) -> dict[str, Any]:
    call = {"id": f"call_{number}", "type": "function",
            "function": {"name": name, "arguments": arguments}}  # fmt: skip
    return {"role": "assistant", "content": None, "tool_calls": [call]}


class ScriptedModel:
    """Plays the model: asks for the order; when the note points to another tool, asks
    that one; then answers with what it saw."""

    def __init__(self) -> None:
        self.turn = 0

    def complete(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        self.turn += 1
        if self.turn == 1:
            return _call(1, "get_order", '{"order_id": "#W0000001"}')
        if self.turn == 2 and "search_orders" in messages[-1]["content"]:
            return _call(2, "search_orders", '{"order_id": "#W0000001"}')
        seen = json.loads(messages[-1]["content"].split("\n", 1)[0])
        items = [i["sku"] for o in seen.get("orders", [seen]) for i in o.get("items", [])]
        return {"role": "assistant", "content": f"The order holds: {items or 'nothing'}."}


def run_agent(
    monitor: Monitor, model: Any, task: str, tools: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The loop: model → tool calls → checked results → model, until it answers."""
    tools = TOOLS if tools is None else tools
    messages: list[dict[str, Any]] = [{"role": "user", "content": task}]
    run = monitor.start_run("example", declared=True)
    for _ in range(8):
        reply = model.complete(messages)
        messages.append(reply)
        calls = reply.get("tool_calls") or []
        if not calls:
            verdict = monitor.finalize(run)
            if not verdict.ok:  # the run claims "done" without the evidence
                messages.append({"role": "user", "content": verdict.note()})
            return messages
        for call in calls:
            name, raw = call["function"]["name"], call["function"]["arguments"]
            arguments = json.loads(raw)
            run.record_call(call["id"], name, arguments)
            try:
                result, status = tools[name](**arguments), "ok"
            except Exception as exc:
                result, status = {"error": str(exc)}, "tool_error"
            content = json.dumps(result)  # what the model gets; the monitor reads it the same
            receipt = monitor.check(name, arguments, content, call_id=call["id"], run=run,
                                    status=status)  # fmt: skip
            messages.append({"role": "tool", "tool_call_id": call["id"],
                             "content": receipt.annotate(content)})  # fmt: skip
    return messages


def main(argv: list[str] | tuple[str, ...] = ()) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description="An agent loop with the tracemine monitor.")
    parser.add_argument(
        "mode",
        nargs="?",
        default="live",
        choices=("live", "record", "replay", "cut"),
        help="live tools (default); record them into the cassette; answer "
        "every call from it; or cut: --live tools live, the rest from it",
    )
    parser.add_argument("--cassette", type=Path, default=Path("agent_loop.cassette.jsonl"))
    parser.add_argument("--live", action="append", default=None, metavar="TOOL",
                        help="with cut: a tool called live (default search_orders)")  # fmt: skip
    args = parser.parse_args(list(argv))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "contracts.json"
        path.write_text(json.dumps(CONTRACTS), encoding="utf-8")
        monitor = Monitor.load(path)
    deck: Recorder | None = None
    if args.mode == "record":
        deck = Recorder(args.cassette, task_id="order-contents")
    elif args.mode == "replay":
        deck = Player(args.cassette)
    elif args.mode == "cut":
        deck = Player(args.cassette, live=set(args.live or ["search_orders"]))
    tools = TOOLS if deck is None else {name: deck.guard(name)(fn) for name, fn in TOOLS.items()}
    messages = run_agent(monitor, ScriptedModel(), "What is in order #W0000001?", tools)
    for message in messages:
        print(f"{message['role']:>9}: {message.get('content') or message.get('tool_calls')}")
    if deck is not None:
        written = deck.close()
        print(f"[{args.mode}] {deck.live_calls} live calls, {deck.replayed_calls} replayed"
              + (f"; wrote {written}" if written else ""))  # fmt: skip
    return messages


if __name__ == "__main__":
    main(sys.argv[1:])
