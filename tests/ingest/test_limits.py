"""Limits with names: a record past ``max_record_bytes``, a gzip past ``max_gzip_ratio``
is quarantined with the limit's name, and never read into memory whole; blank lines cost
next to nothing. Small limits keep the files small."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import duckdb

from tracemine.ingest import ingest
from tracemine.ingest.limits import Limits


def _log(task: str) -> str:
    return json.dumps({"task_id": task, "calls": [{"name": "get", "arguments": {}, "ok": True,
                                                   "result": {"task": task}}]})  # fmt: skip


def _quarantine(db: Path) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(
            "SELECT source_line, level, reason, length(excerpt) FROM quarantine ORDER BY 1"
        ).fetchall()
    finally:
        con.close()


def test_a_line_over_the_record_cap_is_quarantined_with_its_length(tmp_path: Path) -> None:
    long_line = '{"task_id": "big", "calls": [], "pad": "' + "x" * (1 << 20) + '"}'
    path = tmp_path / "long.jsonl"
    path.write_text("\n".join([_log("a"), long_line, _log("b")]) + "\n")
    db = tmp_path / "s.duckdb"
    report = ingest([path], db, format="calllog", limits=Limits(max_record_bytes=64 << 10))
    (f,) = report.files
    assert (f.units_read, f.units_stored, f.units_quarantined, f.calls) == (3, 2, 1, 2)
    [(line, level, reason, excerpt_len)] = _quarantine(db)
    assert (line, level) == (2, "unit")
    assert reason == (
        f"record of {len(long_line) + 1} bytes or more, over the 65536-byte limit "
        "(--max-record-bytes)"
    )
    assert excerpt_len <= 401


_MEMORY = """
import gzip, json, resource, sys
from tracemine.ingest import ingest
from tracemine.ingest.limits import Limits
path, db = sys.argv[1], sys.argv[2]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
report = ingest([path], db, format="calllog",
                limits=Limits(max_record_bytes=64 << 10, max_gzip_ratio=1e9))
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
f = report.files[0]
print(json.dumps([f.units_read, f.units_stored, f.units_quarantined, (after - before) // 1024]))
"""


def test_a_gzip_of_one_huge_line_is_read_in_bounded_memory(tmp_path: Path) -> None:
    line_mib = 256
    path = tmp_path / "huge.jsonl.gz"
    with gzip.open(path, "wb", compresslevel=1) as out:
        out.write((_log("a") + "\n").encode() + b'{"task_id": "big", "pad": "')
        chunk = b"x" * (1 << 20)
        for _ in range(line_mib):
            out.write(chunk)
        out.write(b'"}\n' + (_log("b") + "\n").encode())
    done = subprocess.run(
        [sys.executable, "-c", _MEMORY, str(path), str(tmp_path / "s.duckdb")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    read, stored, quarantined, grew_mib = json.loads(done.stdout)
    assert (read, stored, quarantined) == (3, 2, 1)
    # the line is never held whole: the peak grows by buffers, not by the line
    assert grew_mib < line_mib // 4, grew_mib


def test_a_gzip_bomb_stops_at_the_ratio_with_one_quarantine_row(tmp_path: Path) -> None:
    # 2 MiB of lines that hardly compress, then 8 MiB of spaces from a few kB: the ratio
    # of what was read climbs past 5:1 inside the spaces
    good = "".join(_log(os.urandom(800).hex()) + "\n" for _ in range(1300)).encode()
    path = tmp_path / "bomb.jsonl.gz"
    path.write_bytes(gzip.compress(good + b" " * (8 << 20) + b"\n" + _log("b").encode()))
    db = tmp_path / "s.duckdb"
    report = ingest([path], db, format="calllog", limits=Limits(max_gzip_ratio=5))
    (f,) = report.files
    assert f.units_read == f.units_stored + f.units_quarantined
    assert (f.units_stored, f.units_quarantined) == (1300, 1)
    [(line, level, reason, _)] = _quarantine(db)
    assert (line, level) == (1301, "unit")
    assert reason.startswith("gzip expands past 5:1 (")
    assert "--max-gzip-ratio): the rest of the file is not read (after line 1300)" in reason


def test_an_array_element_over_the_cap_ends_the_file_with_one_row(tmp_path: Path) -> None:
    path = tmp_path / "array.json"
    big = {"task_id": "big", "calls": [], "pad": "x" * (4 << 20)}
    path.write_text(json.dumps([json.loads(_log("a")), big, json.loads(_log("b"))], indent=1))
    db = tmp_path / "s.duckdb"
    report = ingest([path], db, format="calllog", limits=Limits(max_record_bytes=64 << 10))
    (f,) = report.files
    assert (f.units_read, f.units_stored, f.units_quarantined) == (2, 1, 1)
    [(line, _, reason, _)] = _quarantine(db)
    assert line == 2
    assert "over the 65536-byte limit (--max-record-bytes)" in reason


def test_a_document_over_the_cap_is_quarantined_unread(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    path.write_text(json.dumps({"task_id": "big", "calls": [], "pad": "x" * (1 << 20)}, indent=1))
    db = tmp_path / "s.duckdb"
    report = ingest([path], db, format="calllog", limits=Limits(max_record_bytes=64 << 10))
    (f,) = report.files
    assert (f.units_read, f.units_stored, f.units_quarantined) == (1, 0, 1)
    [(_, _, reason, _)] = _quarantine(db)
    assert reason == "document over the 65536-byte limit (--max-record-bytes)"


def test_a_run_of_blank_lines_is_skipped_cheaply_and_counted(tmp_path: Path) -> None:
    blank_lines = 60_000_000  # about 100 MB: minutes when each is read as a line
    path = tmp_path / "blank.jsonl.gz"
    with gzip.open(path, "wb", compresslevel=1) as out:
        out.write((_log("a") + "\n").encode())
        block = b"\n" * 999_999 + b"  \r\n"  # blank lines of whitespace count too
        for _ in range(blank_lines // 1_000_000):
            out.write(block)
        out.write(("   " + _log("b") + "\n").encode())  # its indent is not a blank line's
    db = tmp_path / "s.duckdb"
    started = time.perf_counter()
    report = ingest([path], db, format="calllog")
    seconds = time.perf_counter() - started
    (f,) = report.files
    assert (f.units_read, f.units_stored, f.units_quarantined) == (2, 2, 0)
    con = duckdb.connect(str(db), read_only=True)
    lines = con.execute("SELECT source_line FROM calls ORDER BY 1").fetchall()
    con.close()
    assert lines == [(1,), (blank_lines + 2,)]
    assert seconds < 15, seconds


def test_a_first_line_over_the_cap_leaves_the_file_read_as_lines(tmp_path: Path) -> None:
    long_line = '{"task_id": "big", "calls": [], "pad": "' + "x" * (1 << 20) + '"}'
    path = tmp_path / "first.jsonl"
    path.write_text("\n".join([long_line, _log("a"), _log("b")]) + "\n")
    db = tmp_path / "s.duckdb"
    report = ingest([path], db, format="calllog", limits=Limits(max_record_bytes=64 << 10))
    (f,) = report.files
    assert (f.units_read, f.units_stored, f.units_quarantined, f.calls) == (3, 2, 1, 2)
    [(line, _, reason, _)] = _quarantine(db)
    assert line == 1 and "over the 65536-byte limit" in reason
