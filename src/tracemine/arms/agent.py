"""What an arm asks of an agent: given the conversation so far and the tools, the next
assistant message (OpenAI chat shape: ``content`` or ``tool_calls``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from tracemine.arms.cases import Case


@dataclass(slots=True)
class Reply:
    """One assistant message, and what the endpoint said about producing it."""

    message: dict[str, Any]
    tokens: int | None = None
    details: dict[str, Any] = field(default_factory=dict)  # model, seed, fingerprint …

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        calls = self.message.get("tool_calls")
        return calls if isinstance(calls, list) else []


class Agent(Protocol):
    """An agent under test. ``start`` begins a conversation (``seed`` is the run's)."""

    name: str
    model: str | None

    def start(self, case: Case, seed: int) -> None: ...

    def reply(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply: ...


def tool_call_message(calls: list[tuple[str, str, Any]]) -> dict[str, Any]:
    """An assistant message asking for ``(call id, tool, arguments)`` calls."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": cid,
                "type": "function",
                "function": {"name": tool, "arguments": json.dumps(arguments, ensure_ascii=False)},
            }
            for cid, tool, arguments in calls
        ],
    }


def function_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A case's tools as chat-completions function definitions."""
    return [{"type": "function", "function": tool} for tool in tools]
