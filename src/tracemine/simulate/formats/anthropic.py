"""Anthropic Messages conversations, one per line, in the wrapper the OpenAI chat writer
uses:

    {"run_id", "task_id", "trial", "reward", "run_outcome", "family", "system": "...",
     "messages": [
      {"role": "user", "content": "<instruction>"},
      {"role": "assistant", "content": [{"type": "tool_use", "id", "name", "input": {...}}]},
      {"role": "user", "content": [{"type": "tool_result", "tool_use_id",
                                    "content": "<result as a string>", "is_error": false}]},
      ..., {"role": "assistant", "content": [{"type": "text", "text": "<final answer>"}]}]}

Calls of one turn share an assistant message (parallel ``tool_use`` blocks) and their
results one user message, as the Messages API asks. A tool error is a ``tool_result`` with
``is_error: true`` holding the error payload's text; a call without a result has no block;
a result that arrived after the final answer comes after it, in a user message of its own.
``input`` is an object: arguments that were not a JSON object cannot be written here.
"""

from __future__ import annotations

from typing import Any

from tracemine.simulate.formats._common import (
    SYSTEM_PROMPTS,
    domain_of,
    final_text,
    has_result,
    instruction,
    is_late,
    result_text,
)
from tracemine.simulate.formats.openai_chat import turns


def _result_block(call: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": call.get("result_call_id") or call.get("call_id"),
        "content": result_text(call),
        "is_error": call.get("status") == "tool_error",
    }


def _tool_use(call: dict[str, Any]) -> dict[str, Any]:
    arguments = call.get("arguments")
    return {
        "type": "tool_use",
        "id": call.get("call_id"),
        "name": call["tool"],
        "input": arguments if isinstance(arguments, dict) else {},
    }


def write_run(run: dict[str, Any]) -> list[dict[str, Any]]:
    """The one line of a run."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": instruction(run)}]
    late: list[dict[str, Any]] = []
    for group in turns(run["calls"]):
        messages.append({"role": "assistant", "content": [_tool_use(c) for c in group]})
        answered = [c for c in group if has_result(c)]
        now = [_result_block(c) for c in answered if not is_late(run, c)]
        late += [_result_block(c) for c in answered if is_late(run, c)]
        if now:
            messages.append({"role": "user", "content": now})
    messages.append({"role": "assistant", "content": [{"type": "text", "text": final_text(run)}]})
    messages += [{"role": "user", "content": [block]} for block in late]
    return [
        {
            "run_id": run["run_id"],
            "task_id": run.get("task_id"),
            "trial": run.get("trial"),
            "reward": run.get("reward"),
            "run_outcome": run.get("run_outcome"),
            "family": run.get("family"),
            "system": SYSTEM_PROMPTS.get(domain_of(run), "You are a helpful agent with tools."),
            "messages": messages,
        }
    ]
