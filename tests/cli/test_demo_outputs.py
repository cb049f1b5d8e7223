"""``make demo`` in a clone leaves the files the repository holds as they are when only
their times differ, and writes those whose content changed."""

from __future__ import annotations

import json
from pathlib import Path

from tracemine.cli._demo import _keep_unchanged, _snapshot


def test_files_that_differ_only_in_times_are_put_back(tmp_path: Path) -> None:
    contracts = tmp_path / "contracts.json"
    report = tmp_path / "report" / "report.md"
    report.parent.mkdir()
    old_json = {"generated_at": "2026-12-03T18:40:30.5Z", "provenance": {"seconds": 6.75,
                "timings": {"reading": 0.1}}, "contracts": [{"id": "c1"}]}  # fmt: skip
    contracts.write_text(json.dumps(old_json), "utf-8")
    report.write_text("# Report\n\nEvaluated in 42.9 s.\n", "utf-8")
    before = _snapshot(tmp_path)
    new_json = {**old_json, "generated_at": "2026-12-06T13:02:47Z",
                "provenance": {"seconds": 2.6, "timings": {"reading": 0.05}}}  # fmt: skip
    contracts.write_text(json.dumps(new_json, indent=2), "utf-8")
    report.write_text("# Report\n\nEvaluated in 17.5 s.\n", "utf-8")
    assert _keep_unchanged(before) == 2
    assert json.loads(contracts.read_text("utf-8")) == old_json
    assert "42.9 s" in report.read_text("utf-8")


def test_a_change_of_content_is_written(tmp_path: Path) -> None:
    contracts = tmp_path / "contracts.json"
    contracts.write_text(json.dumps({"generated_at": "a", "contracts": [{"id": "c1"}]}), "utf-8")
    before = _snapshot(tmp_path)
    changed = {"generated_at": "b", "contracts": [{"id": "c1"}, {"id": "c2"}]}
    contracts.write_text(json.dumps(changed), "utf-8")
    assert _keep_unchanged(before) == 0
    assert json.loads(contracts.read_text("utf-8")) == changed
