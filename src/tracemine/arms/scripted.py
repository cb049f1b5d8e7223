"""The scripted agent: a deterministic policy that reads what a model would read.

It follows the case's plan (which tool next, where each argument comes from) and sees only
the conversation: the request and the tool messages, results and receipt notes alike. Its
policy on a tool message:

- a receipt note with ``Consider calling: …``: call those recovery tools with the same
  arguments, then the tool again (once);
- a receipt note without recovery tools, or an error result: call the tool again (once);
- still wrong after that: stop safely with the case's safe-stop message;
- a result that lacks what the next step needs: stop safely as well.

With no receipt (the status-only arm) it takes every result at its word. It never sees the
fault schedule or the oracle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tracemine.arms.agent import Reply, tool_call_message
from tracemine.arms.cases import Case, Ref, resolve
from tracemine.model.result import NOTE_MARK, is_error_payload, result_value

_RECOVERY = "Consider calling: "


@dataclass(slots=True)
class _Pending:
    step: int
    kind: str  # "step" or "refresh"


@dataclass(slots=True)
class _State:
    case: Case
    results: list[Any]
    turn: int = -1
    waiting: dict[str, _Pending] = field(default_factory=dict)
    attempts: dict[int, int] = field(default_factory=dict)
    queue: list[list[tuple[str, dict[str, Any], _Pending]]] = field(default_factory=list)
    stop: str | None = None
    counter: int = 0


class ScriptedAgent:
    """A deterministic stand-in for a model, for tests and CI (see the module docstring)."""

    name = "scripted"
    model: str | None = None

    def __init__(self) -> None:
        self._state: _State | None = None

    def start(self, case: Case, seed: int) -> None:
        self._state = _State(case, [None] * len(case.plan))

    def reply(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        state = self._state
        assert state is not None, "start() first"
        self._read(state, messages)
        if state.stop is not None:
            return Reply({"role": "assistant", "content": state.stop})
        if not state.queue and not state.waiting and not self._advance(state):
            return Reply({"role": "assistant", "content": self._claim(state)})
        if state.stop is not None:
            return Reply({"role": "assistant", "content": state.stop})
        batch = state.queue.pop(0)
        calls = []
        for tool, arguments, pending in batch:
            state.counter += 1
            call_id = f"call_{state.case.case_id}_{state.counter}"
            state.waiting[call_id] = pending
            calls.append((call_id, tool, arguments))
        return Reply(tool_call_message(calls))

    def _read(self, state: _State, messages: list[dict[str, Any]]) -> None:
        for message in messages:
            pending = state.waiting.pop(str(message.get("tool_call_id")), None)
            if message.get("role") != "tool" or pending is None or pending.kind != "step":
                continue
            content = message.get("content")
            text = content if isinstance(content, str) else ""
            note = text[text.find(NOTE_MARK) :] if NOTE_MARK in text else ""
            value = result_value(text)
            failed = isinstance(value, dict) and is_error_payload(value)
            if not note and not failed:
                state.results[pending.step] = value
                continue
            step = state.case.plan[pending.step]
            if state.attempts.get(pending.step, 0) >= 1:
                why = note.removeprefix(NOTE_MARK).split(". ")[0] if note else "it failed"
                state.stop = f"{state.case.safe_stop}: {step.tool} still looked wrong ({why})."
                return
            state.attempts[pending.step] = 1
            arguments = self._arguments(state, pending.step)
            if arguments is None:
                return
            recovery = _recovery_tools(note)
            if recovery:
                state.queue.append(
                    [
                        (tool, dict(arguments), _Pending(pending.step, "refresh"))
                        for tool in recovery
                    ]
                )
            state.queue.append([(step.tool, arguments, _Pending(pending.step, "step"))])

    def _advance(self, state: _State) -> bool:
        """Queue the next turn's calls; ``False`` when the plan is done."""
        state.turn += 1
        steps = [i for i, s in enumerate(state.case.plan) if s.turn == state.turn]
        if not steps:
            return False
        batch = []
        for index in steps:
            arguments = self._arguments(state, index)
            if arguments is None:
                return True
            batch.append((state.case.plan[index].tool, arguments, _Pending(index, "step")))
        state.queue.append(batch)
        return True

    def _arguments(self, state: _State, index: int) -> dict[str, Any] | None:
        step = state.case.plan[index]
        arguments = {}
        for name, value in step.arguments.items():
            found, resolved = resolve(value, state.results)
            if not found:
                state.stop = f"{state.case.safe_stop}: no {name} to call {step.tool} with."
                return None
            arguments[name] = resolved
        return arguments

    def _claim(self, state: _State) -> str:
        parts = []
        for part in state.case.claim:
            if isinstance(part, Ref):
                found, value = resolve(part, state.results)
                if not found:
                    return f"{state.case.safe_stop}: a result lacked what the answer needs."
                parts.append(str(value))
            else:
                parts.append(part)
        return "".join(parts)


def _recovery_tools(note: str) -> list[str]:
    """The tools a receipt note names after ``Consider calling:``."""
    at = note.find(_RECOVERY)
    if at < 0:
        return []
    listed = note[at + len(_RECOVERY) :].split(".", 1)[0]
    return [name.strip() for name in listed.split(",") if name.strip()]
