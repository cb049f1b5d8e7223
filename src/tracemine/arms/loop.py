"""One case in one arm: the agent loop, and the conversation it leaves as a trace record.

The arms differ only in what the harness does with a tool result and with "done":

    status-only          results passed through; the run ends when the agent says done
    guarded              each result checked, the receipt note appended to the tool
                         message; ``finalize`` gates "done" (an incomplete run is reported
                         incomplete, naming what is missing)
    guarded-no-recovery  the same, with the receipt's list of recovery tools removed
    guarded-declared     guarded, with the contracts the tools' schema declares only
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass
from typing import Any

from tracemine.arms.agent import Agent
from tracemine.arms.cases import Case
from tracemine.arms.world import ScheduledFault, ToolWorld
from tracemine.monitor import Monitor

ARMS = ("status-only", "guarded", "guarded-no-recovery", "guarded-declared")
CLEAN = "clean"
_INSTRUCTIONS = (
    " When you are done, state the outcome in one sentence. If you cannot complete the task "
    'with results you can trust, say so, starting with: "{stop}".'
)


@dataclass(slots=True)
class ArmSetup:
    """An arm as the loop runs it: its monitor (none for status-only) and whether the
    receipt keeps its recovery tools; ``contracts`` names the file the monitor read."""

    name: str
    monitor: Monitor | None = None
    recovery: bool = True
    contracts: str | None = None


def system_prompt(case: Case) -> str:
    """The same in every arm."""
    return case.system + _INSTRUCTIONS.format(stop=case.safe_stop)


def run_case(
    case: Case,
    fault: ScheduledFault | None,
    arm: ArmSetup,
    agent: Agent,
    *,
    seed: int,
    order: list[str],
    max_turns: int = 16,
) -> dict[str, Any]:
    """Run ``case`` in ``arm``; the run as one OpenAI-chat trace line (``metadata`` holds
    the arm, case, fault, agent and model, and how the run ended)."""
    world = ToolWorld(case, fault)
    monitor = arm.monitor
    run_id = f"{case.case_id}.{arm.name}"
    run = monitor.start_run(run_id, family=case.family, declared=True) if monitor else None
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system_prompt(case)},
        {"role": "user", "content": case.request},
    ]
    agent.start(case, seed)
    started = time.perf_counter()
    tokens: int | None = None
    details: dict[str, Any] = {}
    end, final = "max-turns", ""
    for _ in range(max_turns):
        reply = agent.reply(messages, case.tools)
        if reply.tokens is not None:
            tokens = (tokens or 0) + reply.tokens
        details = reply.details or details
        messages.append(reply.message)
        if not reply.tool_calls:
            final = str(reply.message.get("content") or "")
            end = "safe-stop" if _norm(case.safe_stop) in _norm(final) else "done"
            break
        for call in reply.tool_calls:
            messages.append(_answer(call, world, arm, run))
    reported, missing = ("done" if end == "done" else "incomplete"), []
    if end == "done" and monitor is not None and run is not None:
        verdict = monitor.finalize(run)
        if not verdict.ok:
            reported = "incomplete"
            missing = [g.message for g in verdict.gaps] + [v.describe() for v in verdict.violations]
    metadata = {
        "arm": arm.name,
        "case": case.case_id,
        "fault": fault.to_dict() if fault else None,
        "fault_class": fault.fault_class if fault else CLEAN,
        "agent": agent.name,
        "model": agent.model,
        "seed": seed,
        "temperature": details.get("temperature"),
        "endpoint": details,
        "arm_order": order,
        "arm_position": order.index(arm.name),
        "contracts": arm.contracts,
        "agent_end": end,
        "reported": reported,
        "missing": missing,
        "final_text": final,
        "tokens": tokens,
        "latency_ms": round((time.perf_counter() - started) * 1000.0, 3),
    }
    return {
        "run_id": run_id,
        "task_id": case.case_id,
        "trial": 0,
        "family": case.family,
        "metadata": metadata,
        "messages": messages,
    }


def _answer(call: dict[str, Any], world: ToolWorld, arm: ArmSetup, run: Any) -> dict[str, Any]:
    """The tool message for one call: malformed JSON arguments are a tool error the agent
    sees (and the trace keeps the raw text)."""
    function: dict[str, Any] = call["function"] if isinstance(call.get("function"), dict) else {}
    call_id = str(call.get("id"))
    tool = str(function.get("name"))
    raw = function.get("arguments")
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError as exc:
        arguments = None
        content = json.dumps(
            {
                "error": {
                    "code": "invalid_arguments",
                    "message": f"arguments are not valid JSON: {exc}",
                }
            }
        )
        status = "tool_error"
    else:
        content, status = world.call(tool, arguments)
    monitor = arm.monitor
    if monitor is not None:
        run.record_call(call_id, tool, arguments)
        receipt = monitor.check(tool, arguments, content, call_id=call_id, run=run, status=status)
        if not arm.recovery:
            receipt = dataclasses.replace(receipt, recovery_tools=())
        content = receipt.annotate(content)
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def _norm(text: str) -> str:
    return " ".join(text.lower().split())
