"""OpenAI chat conversations, one per line, as evaluation harnesses export them:

    {"run_id", "task_id", "trial", "reward", "run_outcome", "family", "messages": [
      {"role": "system", ...}, {"role": "user", ...},
      {"role": "assistant", "content": null, "tool_calls": [{"id", "type": "function",
        "function": {"name", "arguments": "<JSON as a string>"}}]},
      {"role": "tool", "tool_call_id", "content": "<result as a string>"}, ...,
      {"role": "assistant", "content": "<final answer>"}]}

Calls of one turn share an assistant message (parallel tool calls). A call without a result
has no tool message; a result that arrived after the final answer comes after it.
"""

from __future__ import annotations

from typing import Any

from tracemine.simulate.formats._common import (
    SYSTEM_PROMPTS,
    arguments_text,
    domain_of,
    final_text,
    has_result,
    instruction,
    is_late,
    result_text,
)


def turns(calls: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The calls grouped by turn (one assistant message each), in order."""
    groups: list[list[dict[str, Any]]] = []
    previous: Any = object()
    for call in calls:
        turn = call.get("turn")
        if groups and turn is not None and turn == previous:
            groups[-1].append(call)
        else:
            groups.append([call])
        previous = turn
    return groups


def _tool_message(call: dict[str, Any]) -> dict[str, Any]:
    answered_as = call.get("result_call_id") or call.get("call_id")
    return {"role": "tool", "tool_call_id": answered_as, "content": result_text(call)}


def write_run(run: dict[str, Any]) -> list[dict[str, Any]]:
    """The one line of a run."""
    prompt = SYSTEM_PROMPTS.get(domain_of(run), "You are a helpful agent with tools.")
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": prompt},
        {"role": "user", "content": instruction(run)},
    ]
    late: list[dict[str, Any]] = []
    for group in turns(run["calls"]):
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call.get("call_id"),
                        "type": "function",
                        "function": {"name": call["tool"], "arguments": arguments_text(call)},
                    }
                    for call in group
                ],
            }
        )
        for call in group:
            if not has_result(call):
                continue
            if is_late(run, call):
                late.append(_tool_message(call))
            else:
                messages.append(_tool_message(call))
    messages.append({"role": "assistant", "content": final_text(run)})
    messages.extend(late)
    line: dict[str, Any] = {
        "run_id": run["run_id"],
        "task_id": run.get("task_id"),
        "trial": run.get("trial"),
        "reward": run.get("reward"),
        # as the flat and OTLP writers do: without it the reader takes the reward as the
        # outcome ("1.0"), and --where run_outcome=success would pick runs by format
        "run_outcome": run.get("run_outcome"),
        "family": run.get("family"),
        "messages": messages,
    }
    return [line]
