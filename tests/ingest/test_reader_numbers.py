"""Numbers and times written as text: what is not one a reader can use is no number (or no
time), never the end of the record. "²" is a digit to ``str.isdigit`` but not to ``int``,
and ``int`` reads no more than a few thousand digits: each once sent a whole record to
quarantine as "unreadable"."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from tracemine.ingest import ingest

ODD = ["²", "12²", "9" * 5000]
NAMES = ["superscript", "digits-then-superscript", "5000-digits"]


def stored(tmp_path: Path, record: dict, reader: str) -> list[tuple]:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    report = ingest([path], tmp_path / "s.duckdb", format=reader)
    assert (report.files[0].units_stored, report.files[0].units_quarantined) == (1, 0)
    with duckdb.connect(str(tmp_path / "s.duckdb"), read_only=True) as con:
        return con.execute("SELECT tool, seq, started_at FROM calls").fetchall()


@pytest.mark.parametrize("text", [*ODD, "-²"], ids=[*NAMES, "minus-superscript"])
def test_an_index_that_is_no_number_falls_back_to_the_position(tmp_path: Path, text: str) -> None:
    record = {"task_id": "t", "trial": text,
              "calls": [{"index": text, "name": "get", "arguments": {}, "ok": True, "result": 1}]}  # fmt: skip
    assert stored(tmp_path, record, "calllog") == [("get", 0, None)]


@pytest.mark.parametrize("when", [*ODD, 10**400], ids=[*NAMES, "int-past-float"])
def test_a_time_that_is_no_time_is_none(tmp_path: Path, when: object) -> None:
    record = {"run_id": "r", "tool": "get", "arguments": {}, "result": 1,
              "started_at": when, "ended_at": when}  # fmt: skip
    assert stored(tmp_path, record, "flat") == [("get", 0, None)]
