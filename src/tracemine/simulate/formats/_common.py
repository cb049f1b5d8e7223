"""What the format writers share: timing, argument and result text."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from tracemine.simulate._core import EPOCH

SYSTEM_PROMPTS = {
    "commerce": "You are a customer-support agent for an online shop. Use the tools to look "
    "up orders and policies before acting.",
    "search": "You are a research assistant. Search the documentation and scan directories "
    "with the tools; report what you could not cover.",
    "travel": "You are a travel agent. Search flights, convert currencies and manage bookings "
    "with the tools.",
}


def to_datetime(value: Any) -> datetime | None:
    """A call's time as an aware datetime, from an ISO string or a (naive UTC) datetime."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, str) and value:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    return None


def call_times(
    run: dict[str, Any], call: dict[str, Any], position: int
) -> tuple[datetime, datetime]:
    """Start and end of a call; a source without timing gets one second per call."""
    start = to_datetime(call.get("started_at"))
    end = to_datetime(call.get("ended_at"))
    if start is None:
        origin = to_datetime(run.get("started_at")) or EPOCH
        start = origin + timedelta(seconds=position + 1)
    if end is None:
        end = start + timedelta(milliseconds=100)
    return start, end


def run_end(run: dict[str, Any]) -> datetime | None:
    return to_datetime(run.get("ended_at"))


def is_late(run: dict[str, Any], call: dict[str, Any]) -> bool:
    """A result that arrived after the run's final answer."""
    end, done = to_datetime(call.get("ended_at")), run_end(run)
    return end is not None and done is not None and end > done


def raw_says_more(call: dict[str, Any]) -> bool:
    """The raw arguments are not just the parsed ones written as JSON: text no reader could
    parse, or parsed as something else."""
    raw = call.get("arguments_raw")
    if not isinstance(raw, str):
        return False
    try:
        return bool(json.loads(raw) != call.get("arguments"))
    except ValueError:
        return True


def arguments_text(call: dict[str, Any]) -> str:
    """The arguments as the JSON text a tool call carries: the model's own text when it is
    that JSON (its spacing kept) or when nothing was parsed from it; otherwise the parsed
    arguments, since a JSON field cannot carry another syntax (BFCL's ``cd(folder='x')``,
    which its reader parsed, would be read back as text that is not JSON)."""
    raw = call.get("arguments_raw")
    arguments = call.get("arguments")
    if isinstance(raw, str) and (arguments is None or not raw_says_more(call)):
        return raw
    return json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)


def result_text(call: dict[str, Any]) -> str:
    """A tool result as the text a tool message carries: strings as they are, JSON dumped."""
    result = call.get("result")
    if isinstance(result, str):
        return result
    return json.dumps(result, ensure_ascii=False)


def has_result(call: dict[str, Any]) -> bool:
    return call.get("status") != "missing"


def domain_of(run: dict[str, Any]) -> str:
    family = run.get("family") or ""
    return family.split(".", 1)[0]


def instruction(run: dict[str, Any]) -> str:
    return run.get("instruction") or "Complete the task with the tools available."


def final_text(run: dict[str, Any]) -> str:
    return run.get("final_text") or "Done."
