"""Every fixture under tests/fixtures/ingest/<format>/ is ingested with record validation
on and compared with its golden snapshot (``<name>.golden.json`` beside it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracemine.ingest.detect import detect_format

from helpers import assert_golden, ingest_snapshot

FIXTURES = Path(__file__).parent.parent / "fixtures" / "ingest"
CASES = sorted(
    p
    for p in FIXTURES.rglob("*")
    if p.is_file()
    and not p.name.endswith(".golden.json")
    and p.suffix in (".json", ".jsonl", ".gz", ".parquet")
)


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture_matches_golden(path: Path, tmp_path: Path) -> None:
    expected_format = path.parent.name
    assert detect_format(path) == expected_format
    snapshot = ingest_snapshot(path, tmp_path / "t.duckdb")
    assert_golden(snapshot, path.with_name(path.name.split(".")[0] + ".golden.json"))
