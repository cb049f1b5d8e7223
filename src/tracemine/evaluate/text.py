"""The same runs judged as an agent loop hands them to the monitor: every result as the
content text of its tool message (``json.dumps`` of the value, as a loop writes it), not
as the value ingest parsed. A monitor that reads a result one way at ingest and another at
run time would alarm on good calls only in production; this measures it per arm."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tracemine.evaluate.model import Rate, TextJudgement
from tracemine.evaluate.score import Alarm


def as_text(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of ``runs`` whose every answered result is its content text."""
    return [{**run, "calls": [_text_call(call) for call in run["calls"]]} for run in runs]


def _text_call(call: dict[str, Any]) -> dict[str, Any]:
    result = call.get("result")
    if isinstance(result, str) or call.get("status") == "missing":
        return call  # a text result is its own content; a missing one has none
    return {**call, "result": json.dumps(result, ensure_ascii=False, default=str)}


def verdicts(runs: list[dict[str, Any]], found: Mapping[str, list[Alarm]]) -> list[Any]:
    """One verdict per call, in run and call order: the alarms that name it."""
    out: list[Any] = []
    for run in runs:
        alarms = found.get(run["run_id"], [])
        for position, call in enumerate(run["calls"]):
            seq = call["seq"] if isinstance(call.get("seq"), int) else position
            out.append(sorted((a.source, a.name) for a in alarms if seq in a.seqs))
    return out


def judge(
    by_value: list[Any], by_text: list[Any], nominal_calls: int, nominal_flagged: int
) -> TextJudgement:
    """Calls whose verdict on the content text equals the verdict on the value, and the
    false alarms on nominal calls when the monitor is given text."""
    same = sum(a == b for a, b in zip(by_value, by_text, strict=True))
    return TextJudgement(
        agreement=Rate.of(same, len(by_value)),
        false_alarms=Rate.of(nominal_flagged, nominal_calls),
    )
