"""How a file's records are laid out does not change what is read: a JSON array on one
line is read as the same array over many lines is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tracemine.ingest.detect import detect_format
from tracemine.ingest.pipeline import read_traces
from tracemine.ingest.source import BadUnit, iter_units

FIXTURES = Path(__file__).parent.parent / "fixtures" / "ingest"
# mcp is left out: its reader took a one-line array as a JSON-RPC batch already
ARRAYS = ["openai_chat/conversations.jsonl", "openai_responses/session.jsonl",
          "anthropic/conversations.jsonl", "otlp/genai_spans.jsonl", "calllog/basic.json",
          "flat/basic.jsonl"]  # fmt: skip


def _units(path: Path) -> list:
    units = [unit for _, unit in iter_units(path) if not isinstance(unit, BadUnit)]
    return units[0] if len(units) == 1 and isinstance(units[0], list) else units


def _calls(path: Path) -> list[tuple]:
    found = read_traces(path)
    return [(c["run_id"].split(":")[-1], c["tool"], c["call_id"], c["status"], json.dumps(c["result"]))
            for c in found.calls]  # fmt: skip


@pytest.mark.parametrize("name", ARRAYS)
def test_a_one_line_json_array_is_read_as_the_same_array_over_many_lines(
    name: str, tmp_path: Path
) -> None:
    units = _units(FIXTURES / name)
    one, many = tmp_path / "a.json", tmp_path / "b.json"
    one.write_text(json.dumps(units) + "\n")
    many.write_text(json.dumps(units, indent=2))
    assert detect_format(one) == detect_format(many) == name.split("/")[0]
    calls = _calls(one)
    assert calls and calls == _calls(many)


def test_json_documents_one_after_another_are_read_one_by_one(tmp_path: Path) -> None:
    """What ConsoleSpanExporter prints: pretty-printed objects in a row; a broken one is
    quarantined where it breaks, those before it are kept."""
    calls = [{"run_id": "r", "tool": "get", "call_id": f"c{i}", "arguments": {"i": i},
              "result": {"ok": True}} for i in range(2)]  # fmt: skip
    src = tmp_path / "calls.json"
    src.write_text("".join(json.dumps(c, indent=4) + "\n" for c in calls) + '{\n    "run_id": "r",')
    units = list(iter_units(src))
    assert [(n, u) for n, u in units[:2]] == [(1, calls[0]), (2, calls[1])]
    ((position, bad),) = units[2:]
    assert position == 3 and isinstance(bad, BadUnit) and "document 3" in bad.reason
