"""BFCL multi-turn replay (skipped without ``bfcl-eval``): a few entries import, ingest
with nothing quarantined, repeat byte for byte, and come with their declared schemas."""

from __future__ import annotations

import gzip
import json
import re
from importlib import metadata
from pathlib import Path

import pytest

pytest.importorskip("bfcl_eval")
pytest.importorskip("mpmath")

from tracemine.importers import import_suite
from tracemine.ingest import ingest

LIMIT = 6


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    first, second = tmp_path_factory.mktemp("first"), tmp_path_factory.mktemp("second")
    for out in (first, second):
        report = import_suite("bfcl", out, limit=LIMIT, compress=True)
        assert report.tasks == report.runs == LIMIT
    return first, second


def _lines(folder: Path) -> list[dict]:
    text = gzip.decompress((folder / "bfcl.jsonl.gz").read_bytes()).decode("utf-8")
    return [json.loads(line) for line in text.splitlines()]


def test_entries_replay_turn_by_turn_against_their_classes(imported: tuple[Path, Path]) -> None:
    lines = _lines(imported[0])
    assert len({line["task_id"] for line in lines}) == LIMIT
    first = [line for line in lines if line["task_id"] == "multi_turn_base_0"]
    assert [line["seq"] for line in first] == list(range(len(first)))
    assert first[0]["tool"] == "cd" and first[0]["arguments"] == {"folder": "document"}
    assert first[0]["server"] == "GorillaFileSystem" and first[0]["turn"] == 0
    assert first[0]["result"] == {"current_working_directory": "document"}
    assert max(line["turn"] for line in first) > 0, "several turns, state kept across them"
    # a positional argument is named from the method's signature
    sort = next(line for line in first if line["tool"] == "sort")
    assert sort["arguments"] == {"file_name": "final_report.pdf"}
    assert sort["arguments_raw"] == "sort('final_report.pdf')"
    assert all(line["status"] == "ok" for line in lines), "the ground truth runs cleanly"


def test_output_ingests_with_nothing_quarantined(
    imported: tuple[Path, Path], tmp_path: Path
) -> None:
    report = ingest([imported[0] / "bfcl.jsonl.gz"], tmp_path / "store.duckdb", validate=True)
    (file,) = report.files
    assert file.source_format == "flat"
    assert file.units_quarantined == 0 and file.items_quarantined == 0
    assert file.runs == LIMIT and file.runs_without_task == 0
    assert file.calls == len(_lines(imported[0]))


def test_two_runs_write_identical_bytes(imported: tuple[Path, Path]) -> None:
    first, second = imported
    for name in ("bfcl.jsonl.gz", "bfcl.functions.json"):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_function_docs_carry_response_schemas(imported: tuple[Path, Path]) -> None:
    docs = json.loads((imported[0] / "bfcl.functions.json").read_text(encoding="utf-8"))
    names = {doc["name"] for doc in docs}
    assert {line["tool"] for line in _lines(imported[0])} <= names
    assert all({"name", "description", "parameters", "response"} <= set(doc) for doc in docs)


def test_committed_data_is_what_the_documented_command_writes(tmp_path: Path) -> None:
    data = Path(__file__).resolve().parents[2] / "data" / "bfcl"
    pinned = re.search(r"bfcl-eval==(\S+)", (data / "README.md").read_text(encoding="utf-8"))
    assert pinned, "data/bfcl/README.md names the version it was made with"
    if metadata.version("bfcl-eval") != pinned.group(1):
        pytest.skip(f"bfcl-eval {metadata.version('bfcl-eval')} is not {pinned.group(1)}")
    import_suite("bfcl", tmp_path, compress=True)
    for name in ("bfcl.jsonl.gz", "bfcl.functions.json"):
        assert (data / name).read_bytes() == (tmp_path / name).read_bytes(), f"{name} is stale"
