"""A bad record, a broken file or a second writer cannot take an ingest down: every record
read is stored or quarantined with its reason, and the other files are read."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tracemine.errors import StoreError
from tracemine.ingest import ingest


def _call_log(task: str, calls: int = 3, **extra: Any) -> dict[str, Any]:
    return {
        "task_id": task,
        **extra,
        "calls": [
            {"name": "get", "arguments": {"i": i}, "ok": True, "result": {"n": i}}
            for i in range(calls)
        ],
    }


def _write(path: Path, *lines: str | bytes) -> Path:
    path.write_bytes(b"".join((x if isinstance(x, bytes) else x.encode()) + b"\n" for x in lines))
    return path


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _balanced(report: Any) -> None:
    for f in report.files:
        assert f.units_read == f.units_stored + f.units_quarantined, f


# -- one writer a store ------------------------------------------------------------------


def test_a_second_writer_thread_fails_and_leaves_the_first_ones_rows(tmp_path: Path) -> None:
    first = _write(tmp_path / "a.jsonl", *(json.dumps(_call_log(f"a{i}")) for i in range(50)))
    second = _write(tmp_path / "b.jsonl", *(json.dumps(_call_log(f"b{i}")) for i in range(7)))
    db = tmp_path / "s.duckdb"
    outcome: dict[str, Any] = {}

    def second_writer() -> None:
        try:
            outcome["second"] = ingest([second], db)
        except StoreError as exc:
            outcome["second"] = exc

    def first_writer() -> None:
        started: list[bool] = []

        def progress(name: str, done: int, size: int) -> None:
            # the second ingest runs, whole, while the first is reading its file
            if not started:
                started.append(True)
                other = threading.Thread(target=second_writer)
                other.start()
                other.join()

        outcome["first"] = ingest([first], db, progress=progress)

    thread = threading.Thread(target=first_writer)
    thread.start()
    thread.join()
    assert isinstance(outcome["second"], StoreError)
    assert "in use by another ingest or mine" in str(outcome["second"])
    assert outcome["first"].files[0].calls == 150
    assert _rows(db, "SELECT count(*), count(DISTINCT ingest_id) FROM calls") == [(150, 1)]
    # the lease is given back: the second file is read once the first ingest is done
    again = ingest([second], db)
    assert again.files[0].outcome == "ingested"
    assert _rows(db, "SELECT count(*) FROM calls") == [(171,)]


_HOLDER = """
import sys, duckdb
con = duckdb.connect(sys.argv[1])
print("open", flush=True)
sys.stdin.read()
"""


def test_a_writer_in_another_process_gets_the_same_message(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.jsonl", json.dumps(_call_log("a")))
    db = tmp_path / "s.duckdb"
    ingest([path], db)
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        with pytest.raises(StoreError) as raised:
            ingest([_write(tmp_path / "b.jsonl", json.dumps(_call_log("b")))], db)
    finally:
        holder.communicate("", timeout=60)
    assert str(raised.value) == (
        f"{db}: the store is in use by another ingest or mine (process {holder.pid}); "
        "one writes to a store at a time: wait for it to finish, or name another --db"
    )


# -- single bad records ------------------------------------------------------------------


def test_a_record_nested_a_thousand_deep_is_quarantined_with_an_excerpt(tmp_path: Path) -> None:
    deep = '{"task_id": "t", "calls": ' + "[" * 1000 + "]" * 1000 + "}"
    path = _write(tmp_path / "deep.jsonl", json.dumps(_call_log("t1")), deep,
                  json.dumps(_call_log("t2")))  # fmt: skip
    db = tmp_path / "s.duckdb"
    report = ingest([path], db, format="calllog")
    _balanced(report)
    f = report.files[0]
    # the unit is stored, its one "call" (an array of arrays) is quarantined as an item
    assert (f.units_read, f.units_stored, f.items_quarantined, f.calls) == (3, 3, 1, 6)
    [(line, pointer, excerpt)] = _rows(
        db, "SELECT source_line, source_pointer, excerpt FROM quarantine"
    )
    assert (line, pointer) == (2, "/calls/0")
    assert excerpt.startswith("[[[") and len(excerpt) <= 401


def test_json_text_nested_past_the_parser_inside_arguments_and_results(tmp_path: Path) -> None:
    text = "[" * 1100 + "]" * 1100
    log = {"task_id": "t", "calls": [{"name": "get", "arguments": text, "ok": True,
                                      "result": text}]}  # fmt: skip
    path = _write(tmp_path / "text.jsonl", json.dumps(log), json.dumps(_call_log("t2")))
    db = tmp_path / "s.duckdb"
    report = ingest([path], db, format="calllog")
    _balanced(report)
    assert report.files[0].calls == 4
    [(error, result_text)] = _rows(
        db, "SELECT arguments_error, result_text FROM calls WHERE arguments IS NULL"
    )
    assert "nested deeper than 1024" in error
    assert result_text == text  # kept as the text it was


def test_run_metadata_too_deep_to_store_is_quarantined_and_the_run_kept(tmp_path: Path) -> None:
    line = json.dumps(_call_log("t1", metadata="M"))
    deep = line.replace('"M"', '{"k": ' * 1000 + '"x"' + "}" * 1000)
    path = _write(tmp_path / "meta.jsonl", deep, json.dumps(_call_log("t2")))
    db = tmp_path / "s.duckdb"
    report = ingest([path], db, format="calllog")
    _balanced(report)
    assert (report.files[0].runs, report.files[0].calls) == (2, 6)
    [(pointer, reason)] = _rows(db, "SELECT source_pointer, reason FROM quarantine")
    assert pointer == "/metadata" and "nested deeper than 400" in reason


def _corrupt_gzip(path: Path, lines: int) -> Path:
    # random text, so that the corrupted byte lies well past the first megabyte read
    body = "".join(json.dumps(_call_log(os.urandom(150).hex())) + "\n" for _ in range(lines))
    data = bytearray(gzip.compress(body.encode()))
    data[len(data) * 3 // 4] ^= 0xFF  # one byte inside the deflate stream
    path.write_bytes(bytes(data))
    return path


def test_a_corrupt_gzip_in_a_folder_is_quarantined_and_the_next_files_read(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "traces"
    folder.mkdir()
    _corrupt_gzip(folder / "a.jsonl.gz", 5000)
    _write(folder / "b.jsonl", json.dumps(_call_log("b")))
    db = tmp_path / "s.duckdb"
    report = ingest([folder], db)
    _balanced(report)
    broken, good = report.files
    assert broken.outcome == good.outcome == "ingested"
    # the corrupted stream may yield garbled lines before zlib notices: quarantined too
    assert 0 < broken.units_stored < 5000 and broken.units_quarantined >= 1
    assert good.calls == 3
    rows = _rows(db, "SELECT source_file, source_line, reason FROM quarantine ORDER BY 2")
    assert len(rows) == broken.units_quarantined
    file, line, reason = rows[-1]  # the one row of the break, at the line it broke in
    assert file.endswith("a.jsonl.gz") and line == broken.units_read
    assert "truncated or corrupt near compressed byte" in reason


# -- task-key suggestions ------------------------------------------------------------------


@pytest.mark.parametrize("key", ["", " ", "regex:("])
def test_an_unusable_metadata_key_is_left_out_of_the_suggestions(tmp_path: Path, key: str) -> None:
    call = {"name": "get", "arguments": {}, "ok": True, "result": 1}
    lines = [
        json.dumps({"run_id": f"r{i}-trial{j}", "metadata": {key: f"v{i}"}, "calls": [call]})
        for i in range(3)
        for j in range(2)
    ]
    path = _write(tmp_path / "runs.jsonl", *lines)
    report = ingest([path], tmp_path / "s.duckdb", format="calllog")
    assert report.files[0].calls == 6
    assert report.task_key_suggestions  # the run ids' counter is still suggested
    assert all(repr(key) not in s for s in report.task_key_suggestions)


def test_a_first_line_too_deep_to_parse_is_one_line_of_the_file(tmp_path: Path) -> None:
    deep = "[" + "[" * 1100 + "]" * 1100 + ', {"task_id": "x", "calls": []}]'
    path = _write(tmp_path / "deep.jsonl", deep, json.dumps(_call_log("a")))
    db = tmp_path / "s.duckdb"
    report = ingest([path], db, format="calllog")
    (f,) = report.files
    # read as two lines, not as an array file of the first line's elements
    assert (f.units_read, f.units_stored, f.units_quarantined, f.calls) == (2, 1, 1, 3)
    [(line, reason)] = _rows(db, "SELECT source_line, reason FROM quarantine")
    assert line == 1 and "nested deeper than 1024" in reason
