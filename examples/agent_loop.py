"""An OpenAI-style agent loop with the tracemine monitor between the tools and the model.

Run it with ``python examples/agent_loop.py``. A scripted stand-in plays the model so the
example needs no network; with a real client, ``model.complete(messages)`` becomes
``client.chat.completions.create(model=..., messages=messages, tools=...)``.

The loop does three things for the monitor:

1. declares each tool call the model issues (``run.record_call``),
2. checks each result and appends ``receipt.note()`` to the tool message (the result
   itself is passed on unchanged),
3. asks ``monitor.finalize(run)`` before accepting "done", and tells the model what is
   missing if the run is incomplete.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from tracemine.monitor import Monitor

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
}


class ScriptedModel:
    """Plays the model: asks for one tool call, then answers with what it saw."""

    def __init__(self) -> None:
        self.turn = 0

    def complete(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        self.turn += 1
        if self.turn == 1:
            function = {"name": "get_order", "arguments": '{"order_id": "#W0000001"}'}
            call = {"id": "call_1", "type": "function", "function": function}
            return {"role": "assistant", "content": None, "tool_calls": [call]}
        return {"role": "assistant", "content": "The order has no items."}


def run_agent(monitor: Monitor, model: Any, task: str) -> list[dict[str, Any]]:
    """The loop: model → tool calls → checked results → model, until it answers."""
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
                result, status = TOOLS[name](**arguments), "ok"
            except Exception as exc:
                result, status = {"error": str(exc)}, "tool_error"
            receipt = monitor.check(name, arguments, result, call_id=call["id"], run=run,
                                    status=status)  # fmt: skip
            content = json.dumps(result) + receipt.note()  # the note goes after, result intact
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
    return messages


def main() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "contracts.json"
        path.write_text(json.dumps(CONTRACTS), encoding="utf-8")
        monitor = Monitor.load(path)
    messages = run_agent(monitor, ScriptedModel(), "What is in order #W0000001?")
    for message in messages:
        print(f"{message['role']:>9}: {message.get('content') or message.get('tool_calls')}")
    return messages


if __name__ == "__main__":
    main()
