"""A cassette is a trace file: it ingests and checks like one. A corrupt cassette is a
user's mistake, reported with its file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from replay_shop import Shop, agent, wrap

import tracemine
from tracemine.replay import CassetteError, Player, Recorder


@pytest.fixture
def cassette(tmp_path: Path) -> Path:
    path = tmp_path / "shop.jsonl"
    with Recorder(path, task_id="refund-all") as recorder:
        agent(wrap(recorder, Shop()))
    return path


def test_the_cassette_ingests_as_a_flat_trace(cassette: Path, tmp_path: Path) -> None:
    report = tracemine.ingest([cassette], tmp_path / "store.duckdb")
    (file,) = report.files
    assert file.source_format == "flat" and file.items_quarantined == 0
    assert (file.units_read, file.units_stored, file.units_quarantined) == (8, 8, 0)
    assert file.calls == 7 and file.runs == 1
    traces = tracemine.read_traces(cassette)
    assert [c["status"] for c in traces.calls] == ["ok", "ok", "ok", "ok", "ok", "tool_error",
                                                   "tool_error"]  # fmt: skip
    assert traces.calls[5]["error_type"] == "ValueError"
    assert traces.runs[0]["task_id"] == "refund-all"


def test_the_cassette_checks_against_contracts(cassette: Path, tmp_path: Path) -> None:
    contracts = tmp_path / "contracts.json"
    contracts.write_text(json.dumps({"schema_version": "1", "contracts": [
        {"id": "c_total", "tool": "get_order", "side": "result", "kind": "positive",
         "paths": ["result.total_cents"], "status": "accepted"}]}))  # fmt: skip
    report = tracemine.check([cassette], contracts)
    assert report.calls == 7 and report.quarantined == 0
    (summary,) = report.contracts
    assert (summary.checked, summary.violated) == (2, 0)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", r"bad\.jsonl:2: not JSON"),
        ("[1, 2]", r"bad\.jsonl:2: expected one call per line as an object, got list"),
        ('{"arguments": {}}', r"bad\.jsonl:2: field 'tool': expected the tool's name, got None"),
        ('{"tool": "t", "arguments": [1]}', r"bad\.jsonl:2: field 'arguments': expected an object"),
        (
            '{"tool": "t", "status": "fine", "result": 1}',
            r"bad\.jsonl:2: field 'status': expected one of ok",
        ),
        (
            '{"tool": "t", "arguments": {}}',
            r"bad\.jsonl:2: field 'result': a call with status 'ok' needs a result",
        ),
        (
            '{"tracemine_cassette": 7}',
            r"bad\.jsonl:2: field 'tracemine_cassette': cassette format 7",
        ),
        (
            '{"tracemine_cassette": 1, "ignore": ["x"]}',
            r"bad\.jsonl:2: field 'ignore': expected an object",
        ),
    ],
)
def test_a_corrupt_cassette_names_file_line_and_field(
    tmp_path: Path, line: str, message: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"tracemine_cassette": 1}\n' + line + "\n")
    with pytest.raises(CassetteError, match=message):
        Player(path)


def test_a_cassette_that_is_a_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="cannot read cassette"):
        Player(tmp_path)
