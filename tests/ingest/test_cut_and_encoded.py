"""Files as they arrive when something went wrong on the way: a gzip download cut short,
a JSONL export saved as UTF-16 or UTF-32 by an editor or a Windows shell."""

from __future__ import annotations

import codecs
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tracemine.ingest import ingest


def _record(i: int) -> dict[str, Any]:
    # random text, so that the compressed stream is about as long as the plain one
    return {
        "task_id": f"t{i}",
        "calls": [{"name": "get", "arguments": {"i": i, "pad": os.urandom(40).hex()},
                   "ok": True, "result": {"n": i}}],
    }  # fmt: skip


def _lines(n: int) -> bytes:
    return "".join(json.dumps(_record(i)) + "\n" for i in range(n)).encode()


def _cut_gzip(path: Path, records: int, keep: float) -> Path:
    data = gzip.compress(_lines(records))
    path.write_bytes(data[: int(len(data) * keep)])
    return path


def _quarantine(db: Path) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT source_line, reason FROM quarantine ORDER BY 1").fetchall()
    finally:
        con.close()


def test_a_gzip_cut_at_sixty_percent_keeps_every_record_before_the_cut(tmp_path: Path) -> None:
    path = _cut_gzip(tmp_path / "export.jsonl.gz", 1500, 0.6)
    db = tmp_path / "s.duckdb"
    report = ingest([path], db, format="calllog")
    (f,) = report.files
    assert f.units_read == f.units_stored + f.units_quarantined
    # all the lines the kept bytes hold whole are stored (one record may sit in
    # zlib's window past the cut), the cut one is the one quarantined row
    assert 880 <= f.units_stored <= 900 and f.units_quarantined == 1
    assert f.calls == f.units_stored
    [(line, reason)] = _quarantine(db)
    assert line == f.units_stored + 1
    assert reason.startswith("file cut: the gzip stream ends before its end")
    assert f"after line {f.units_stored}" in reason
    assert f.stopped == reason


def test_the_cli_says_a_cut_file_was_not_read_to_its_end(tmp_path: Path) -> None:
    folder = tmp_path / "traces"
    folder.mkdir()
    _cut_gzip(folder / "a.jsonl.gz", 1500, 0.6)
    (folder / "b.jsonl").write_bytes(_lines(3))
    out = subprocess.run(
        [sys.executable, "-m", "tracemine", "ingest", str(folder), "--db",
         str(tmp_path / "s.duckdb"), "--format", "calllog"],
        capture_output=True, text=True, env={**os.environ, "COLUMNS": "400"},
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    told = " ".join(out.stdout.split())
    assert "a.jsonl.gz: not read to its end: file cut" in told
    assert "no reader recognises" not in told  # the cut file was read, not skipped


def test_a_gzip_cut_inside_its_first_line_is_one_quarantined_line(tmp_path: Path) -> None:
    data = gzip.compress(json.dumps(_record(0)).encode() * 50 + b"\n")
    path = tmp_path / "one.jsonl.gz"
    path.write_bytes(data[: len(data) // 2])
    db = tmp_path / "s.duckdb"
    (f,) = ingest([path], db, format="calllog").files
    assert (f.units_read, f.units_stored, f.units_quarantined) == (1, 0, 1)
    [(_, reason)] = _quarantine(db)
    assert reason.startswith("file cut")


def test_a_whole_gzip_is_not_said_to_be_cut(tmp_path: Path) -> None:
    path = tmp_path / "whole.jsonl.gz"
    # two members one after another, as ``cat a.gz b.gz`` makes them
    path.write_bytes(gzip.compress(_lines(300)) + gzip.compress(_lines(200)))
    (f,) = ingest([path], tmp_path / "s.duckdb", format="calllog").files
    assert (f.units_stored, f.units_quarantined, f.stopped) == (500, 0, "")


@pytest.mark.parametrize(
    ("encoding", "bom"),
    [
        ("utf-16-le", codecs.BOM_UTF16_LE),
        ("utf-16-be", codecs.BOM_UTF16_BE),
        ("utf-16-le", b""),
        ("utf-16-be", b""),
        ("utf-32-le", codecs.BOM_UTF32_LE),
        ("utf-32-be", b""),
        ("utf-8", codecs.BOM_UTF8),
    ],
)
def test_a_jsonl_file_saved_as_utf16_or_utf32_is_read_whole(
    tmp_path: Path, encoding: str, bom: bytes
) -> None:
    text = _lines(40).decode().replace('"t1"', '"t1 é 東京 🚀"')  # past ASCII and the BMP
    path = tmp_path / "export.jsonl"
    path.write_bytes(bom + text.encode(encoding))
    db = tmp_path / "s.duckdb"
    (f,) = ingest([path], db, format="calllog").files
    assert (f.units_read, f.units_stored, f.units_quarantined) == (40, 40, 0)
    con = duckdb.connect(str(db), read_only=True)
    try:
        tasks = {r[0] for r in con.execute("SELECT task_id FROM runs").fetchall()}
    finally:
        con.close()
    assert "t1 é 東京 🚀" in tasks and len(tasks) == 40
