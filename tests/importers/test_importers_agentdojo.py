"""AgentDojo replay (skipped without ``agentdojo``). One test, so that the slow part — two
imports in child processes, each loading the package — runs once even under xdist."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

pytest.importorskip("agentdojo")

from tracemine.importers import import_suite
from tracemine.ingest import ingest

SUITES = {"banking", "slack", "travel", "workspace"}


@pytest.mark.slow
def test_ground_truth_replays_ingest_and_repeat_byte_for_byte(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    report = import_suite("agentdojo", first, limit=1, compress=True)
    import_suite("agentdojo", second, limit=1, compress=True)

    # a few tasks import: the first user task of every suite, each judged by its own check
    assert report.tasks == report.runs == len(SUITES)
    assert report.outcomes == {"success": len(SUITES)}
    text = gzip.decompress((first / "agentdojo.jsonl.gz").read_bytes()).decode("utf-8")
    lines = [json.loads(line) for line in text.splitlines()]
    assert {line["family"] for line in lines} == SUITES
    assert {line["task_id"] for line in lines} == {f"{s}/user_task_0" for s in SUITES}
    assert all(line["status"] == "ok" for line in lines)
    assert any(isinstance(line["result"], list | dict) for line in lines), "models dumped"

    # the output ingests with nothing quarantined
    stored = ingest([first / "agentdojo.jsonl.gz"], tmp_path / "store.duckdb", validate=True)
    (file,) = stored.files
    assert file.source_format == "flat" and file.calls == len(lines) == report.calls
    assert file.units_quarantined == 0 and file.items_quarantined == 0
    assert file.runs_without_task == 0

    # two runs give identical bytes, declared schemas included
    for name in ("agentdojo.jsonl.gz", "agentdojo.functions.json"):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    docs = json.loads((first / "agentdojo.functions.json").read_text(encoding="utf-8"))
    assert {line["tool"] for line in lines} <= {doc["name"] for doc in docs}
    assert all("$ref" not in json.dumps(doc) for doc in docs), "schemas stand alone"
