"""Ingest behaviour: idempotence, --replace, atomicity, gzip, folders, task keys, errors."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tracemine.errors import InputError, StoreError, TaskKeyError, UnknownFormatError
from tracemine.ingest import ingest, runs, stats, store, writer
from tracemine.ingest.pipeline import read_traces
from tracemine.ingest.readers.flat import FlatReader


def _write(path: Path, lines: list[dict | str]) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def _calls(n: int, run: str = "run-a-t1", task: str | None = None) -> list[dict]:
    out = []
    for i in range(n):
        line = {"run_id": run, "tool": "get", "call_id": f"c{i}", "arguments": {"i": i},
                "result": {"i": i, "ok": True}}  # fmt: skip
        if task:
            line["task_id"] = task
        out.append(line)
    return out


def _count(db: Path, table: str) -> int:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
    finally:
        con.close()


def test_reingesting_the_same_file_adds_nothing_and_replace_rereads(tmp_path: Path) -> None:
    src = _write(tmp_path / "a.jsonl", _calls(5, task="t"))
    db = tmp_path / "s.duckdb"
    first = ingest([src], db)
    assert first.files[0].outcome == "ingested" and first.files[0].calls == 5
    again = ingest([src], db)
    assert again.files[0].outcome == "skipped" and _count(db, "calls") == 5
    values = _count(db, "json_values")
    replaced = ingest([src], db, replace=True)
    assert replaced.files[0].outcome == "replaced"
    assert _count(db, "calls") == 5 and _count(db, "json_values") == values
    assert _count(db, "ingests") == 1


def test_interrupted_file_leaves_the_store_as_it_was(tmp_path: Path, monkeypatch) -> None:
    db = tmp_path / "s.duckdb"
    ingest([_write(tmp_path / "a.jsonl", _calls(3, task="t"))], db)
    before = (_count(db, "calls"), _count(db, "json_values"), _count(db, "runs"))
    big = _write(tmp_path / "b.jsonl", _calls(50_000, run="run-b", task="t"))
    original = FlatReader.feed
    seen = {"n": 0}

    def feed(self, unit, line, out):
        seen["n"] += 1
        if seen["n"] == 45_000:  # after at least one batch was written
            raise KeyboardInterrupt
        return original(self, unit, line, out)

    monkeypatch.setattr(FlatReader, "feed", feed)
    with pytest.raises(KeyboardInterrupt):
        ingest([big], db)
    assert (_count(db, "calls"), _count(db, "json_values"), _count(db, "runs")) == before
    assert _count(db, "ingests") == 1


def test_gzip_and_folders(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    payload = "".join(json.dumps(x) + "\n" for x in _calls(4, task="t"))
    with gzip.open(folder / "a.jsonl.gz", "wt") as handle:
        handle.write(payload)
    _write(folder / "b.jsonl", _calls(2, run="other", task="u"))
    (folder / "notes.txt").write_text("ignored")
    report = ingest([folder], tmp_path / "s.duckdb")
    assert [f.calls for f in report.files] == [4, 2]


@pytest.mark.parametrize("kept", [40, 0.7], ids=["inside-first-line", "mid-file"])
def test_truncated_gzip_is_quarantined_where_it_breaks(tmp_path: Path, kept: float) -> None:
    whole = gzip.compress("".join(json.dumps(x) + "\n" for x in _calls(60, task="t")).encode())
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole[: int(kept if kept > 1 else len(whole) * kept)])
    report = ingest([cut], tmp_path / "s.duckdb", format="flat")
    (f,) = report.files
    assert f.units_read == f.units_stored + f.units_quarantined
    assert f.units_quarantined == 1 and f.calls == f.units_stored
    con = store.connect(tmp_path / "s.duckdb", read_only=True)
    (reason,) = con.execute("SELECT reason FROM quarantine").fetchall()[0]
    con.close()
    assert "truncated" in reason
    if kept > 1:  # no whole line to detect a format from: the error says why
        with pytest.raises(UnknownFormatError, match="truncated"):
            ingest([cut], tmp_path / "t.duckdb")


def test_values_orjson_cannot_write_are_stored_exactly(tmp_path: Path) -> None:
    """Integers past 64 bits and nesting past 254 levels parse, so they are stored: the
    number as written, NaN as null (JSON has no NaN; the change is quarantined as an item,
    below), the deep value whole."""
    line = json.dumps({"run_id": "r", "tool": "get", "call_id": "c1", "arguments": {}})[:-1]
    big = line + ', "result": {"big": 123456789012345678901234567890, "m": NaN}}'
    deep = line.replace("c1", "c2") + ', "result": ' + "[" * 300 + "]" * 300 + "}"
    report = ingest([_write(tmp_path / "a.jsonl", [big, deep])], tmp_path / "s.duckdb")
    (f,) = report.files
    assert (f.units_read, f.units_stored, f.calls, f.items_quarantined) == (2, 2, 2, 1)
    con = store.connect(tmp_path / "s.duckdb", read_only=True)
    results = con.execute("SELECT result::VARCHAR FROM calls ORDER BY call_key").fetchall()
    assert results[0] == ('{"big":123456789012345678901234567890,"m":null}',)
    assert results[1][0] == "[" * 300 + "]" * 300
    (number,) = con.execute("SELECT num FROM json_values WHERE path = 'result.big'").fetchall()
    con.close()
    assert number[0] == pytest.approx(1.2345678901234568e29)


def test_unpaired_surrogates_and_oversized_integers_are_stored(tmp_path: Path) -> None:
    """An escaped surrogate that pairs with nothing (valid JSON, not valid Unicode) becomes
    U+FFFD; an integer too large for a 32-bit field (seq, trial) is no value for it."""
    lone = '{"run_id": "r", "tool": "get", "call_id": "c1", "result": {"name": "\\ud800x"}}'
    huge = {"run_id": "r", "tool": "get", "call_id": "c2", "seq": 2**40, "trial": 2**63,
            "result": {"n": 2**70}}  # fmt: skip
    report = ingest([_write(tmp_path / "a.jsonl", [lone, huge])], tmp_path / "s.duckdb")
    (f,) = report.files
    assert (f.units_read, f.units_stored, f.calls) == (2, 2, 2)
    con = store.connect(tmp_path / "s.duckdb", read_only=True)
    rows = con.execute("SELECT seq, result ->> '$.name' FROM calls ORDER BY call_key").fetchall()
    trial = con.execute("SELECT trial FROM runs").fetchall()
    con.close()
    assert rows == [(0, "\ufffdx"), (1, None)]
    assert trial == [(None,)]


def test_a_call_that_cannot_be_written_is_quarantined(tmp_path: Path, monkeypatch) -> None:
    real = writer.dumps

    def refusing(value):
        if value == {"boom": 1}:
            raise ValueError("value nested too deeply to store")
        return real(value)

    monkeypatch.setattr(writer, "dumps", refusing)
    lines = _calls(3, task="t")
    lines[1]["result"] = {"boom": 1}
    report = ingest([_write(tmp_path / "a.jsonl", lines)], tmp_path / "s.duckdb")
    (f,) = report.files
    assert (f.units_read, f.units_stored, f.calls, f.items_quarantined) == (3, 3, 2, 1)
    con = store.connect(tmp_path / "s.duckdb", read_only=True)
    rows = con.execute("SELECT source_line, level, reason FROM quarantine").fetchall()
    con.close()
    assert rows == [(2, "item", "call could not be stored: value nested too deeply to store")]


def test_task_key_field_and_regex(tmp_path: Path) -> None:
    lines = [dict(x, run_metadata={"scenario": {"name": "refunds"}}) for x in _calls(2)]
    src = _write(tmp_path / "a.jsonl", lines)
    db = tmp_path / "s.duckdb"
    ingest([src], db, task_key="regex:^run-(?P<task>[a-z]+)-t\\d+$")
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT task_id, task_id_source FROM runs").fetchall() == [
        ("a", "configured")
    ]
    con.close()
    db2 = tmp_path / "s2.duckdb"
    ingest([src], db2, task_key="scenario.name")
    con = duckdb.connect(str(db2), read_only=True)
    assert con.execute("SELECT task_id FROM runs").fetchall() == [("refunds",)]
    con.close()
    with pytest.raises(TaskKeyError):
        ingest([src], db2, task_key="regex:(")


def test_explicit_task_id_and_runs_without_task(tmp_path: Path) -> None:
    src = _write(tmp_path / "a.jsonl", _calls(2, run="r1", task="t1") + _calls(1, run="r2"))
    report = ingest([src], tmp_path / "s.duckdb")
    assert report.files[0].runs == 2 and report.files[0].runs_without_task == 1
    summary = stats(tmp_path / "s.duckdb")
    assert summary.tasks == 1 and summary.runs_without_task == 1 and summary.calls == 3


def test_user_mistakes_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        ingest([tmp_path / "nope.jsonl"], tmp_path / "s.duckdb")
    odd = _write(tmp_path / "odd.jsonl", [{"hello": 1}])
    with pytest.raises(UnknownFormatError, match=r"odd.jsonl.*no reader recognises"):
        ingest([odd], tmp_path / "s.duckdb")
    with pytest.raises(UnknownFormatError, match="unknown format 'xml'"):
        ingest([odd], tmp_path / "s.duckdb", format="xml")
    not_store = tmp_path / "other.duckdb"
    con = duckdb.connect(str(not_store))
    con.execute("CREATE TABLE x (a INT)")
    con.close()
    with pytest.raises(StoreError, match="not a tracemine store"):
        ingest([_write(tmp_path / "a.jsonl", _calls(1))], not_store)
    # a trace file named as the store by mistake is refused, and left as it was
    traces = _write(tmp_path / "b.jsonl", _calls(2))
    before = traces.read_bytes()
    with pytest.raises(StoreError, match=r"b.jsonl: not a DuckDB database"):
        ingest([_write(tmp_path / "c.jsonl", _calls(1))], traces)
    assert traces.read_bytes() == before


def test_quarantine_keeps_file_line_and_reason(tmp_path: Path) -> None:
    src = _write(
        tmp_path / "a.jsonl",
        [*_calls(1, task="t"), "{broken", {"run_id": "r", "arguments": {}}, '"just a string"'],
    )
    report = ingest([src], tmp_path / "s.duckdb")
    f = report.files[0]
    assert (f.units_read, f.units_stored, f.units_quarantined) == (4, 1, 3)
    con = duckdb.connect(str(tmp_path / "s.duckdb"), read_only=True)
    rows = con.execute("SELECT source_line, reason FROM quarantine ORDER BY 1").fetchall()
    con.close()
    assert [r[0] for r in rows] == [2, 3, 4]
    assert "invalid JSON" in rows[0][1]
    assert "tool" in rows[1][1]


def test_unrecognised_files_inside_a_folder_are_skipped_not_fatal(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    _write(folder / "a.jsonl", _calls(2, task="t"))
    (folder / "tools.functions.json").write_text('[{"name": "get", "parameters": {}}]')
    report = ingest([folder], tmp_path / "s.duckdb")
    outcomes = {Path(f.source_file).name: f.outcome for f in report.files}
    assert outcomes == {"a.jsonl": "ingested", "tools.functions.json": "skipped"}
    with pytest.raises(UnknownFormatError):
        ingest([folder / "tools.functions.json"], tmp_path / "s.duckdb")


def _table(db: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_runs_set_aside_past_the_memory_bound_merge_as_if_kept(tmp_path: Path, monkeypatch) -> None:
    # runs interleave, and each says one more thing about itself on a later line
    lines = []
    for i in range(60):
        for run in range(7):
            line = {"run_id": f"r{run}", "tool": "get", "call_id": f"c{i}", "result": i}
            if i == 10 + run:
                line["task_id"] = f"task-{run}"
            if i == 40:
                line["run_metadata"] = {"first": i, "run": run}
            if i == 50:
                line["run_metadata"] = {"first": "later", "second": i}
            lines.append(line)
    src = _write(tmp_path / "runs.jsonl", lines)
    sql = "SELECT run_id, task_id, task_id_source, metadata FROM runs ORDER BY run_id"
    ingest([src], tmp_path / "kept.duckdb")
    monkeypatch.setattr(runs, "RUNS_IN_MEMORY", 3)
    monkeypatch.setattr(writer, "BATCH_CALLS", 5)
    report = ingest([src], tmp_path / "staged.duckdb")
    assert report.files[0].runs == 7
    kept, staged = _table(tmp_path / "kept.duckdb", sql), _table(tmp_path / "staged.duckdb", sql)
    assert staged == kept
    assert kept[2][1] == "task-2" and json.loads(kept[2][3]) == {
        "first": 40,
        "run": 2,
        "second": 50,
    }


def test_values_flattened_beside_the_reader_match_a_single_pass(
    tmp_path: Path, monkeypatch
) -> None:
    # every 40th call has an array past the cap: flagged by the thread as by a single pass
    lines = [dict(x, result={"items": [{"n": i}] * (i % 3), "s": "x" * i,
                             "ids": list(range(1001 if i % 40 == 0 else 2))})
             for i, x in enumerate(_calls(300, task="t"))]  # fmt: skip
    src = _write(tmp_path / "v.jsonl", lines)
    sql = ("SELECT c.call_id, v.side, v.path, v.jtype, v.num, v.str, v.len, v.idx "
           "FROM json_values v JOIN calls c USING (call_key) ORDER BY ALL")  # fmt: skip
    capped = "SELECT call_id FROM calls WHERE list_contains(anomalies, 'values_capped') ORDER BY 1"
    ingest([src], tmp_path / "one.duckdb")
    monkeypatch.setattr(writer, "FLATTEN_CALLS", 7)
    monkeypatch.setattr(writer, "BATCH_CALLS", 3)
    ingest([src], tmp_path / "many.duckdb")
    single = _table(tmp_path / "one.duckdb", sql)
    assert len(single) > 1000
    assert _table(tmp_path / "many.duckdb", sql) == single
    flagged = _table(tmp_path / "one.duckdb", capped)
    assert len(flagged) == 8
    assert _table(tmp_path / "many.duckdb", capped) == flagged


def test_wide_results_are_written_and_flattened_by_bytes(tmp_path: Path, monkeypatch) -> None:
    # results of a few kilobytes: batches and flattened ranges end at the byte caps,
    # long before the call caps, and store what one pass stores
    offers = [{"offer_id": f"OF-{k}", "price": {"amount_cents": k}, "tags": ["a", "b"]}
              for k in range(40)]  # fmt: skip
    lines = [dict(x, result={"offers": offers[: 5 + i % 30]}) for i, x in
             enumerate(_calls(120, task="t"))]  # fmt: skip
    src = _write(tmp_path / "wide.jsonl", lines)
    sql = "SELECT call_key, side, path, jtype, num, str, len, idx FROM json_values ORDER BY ALL"
    ingest([src], tmp_path / "one.duckdb")
    batches, ranges = [], []
    append, submit = store.append, writer.Flattener.submit
    monkeypatch.setattr(writer, "BATCH_BYTES", 20_000)
    monkeypatch.setattr(writer, "FLATTEN_BYTES", 30_000)
    monkeypatch.setattr(store, "append", lambda con, table, columns: (
        batches.append(len(columns["call_key"])) if table == "calls" else None,
        append(con, table, columns)))  # fmt: skip
    monkeypatch.setattr(writer.Flattener, "submit", lambda self, first, last: (
        ranges.append(last - first + 1), submit(self, first, last)))  # fmt: skip
    ingest([src], tmp_path / "bytes.duckdb")
    assert sum(batches) == 120 and len(batches) > 3 and max(batches) < 40
    assert len(ranges) > 2 and max(ranges) < 60
    assert _table(tmp_path / "bytes.duckdb", sql) == _table(tmp_path / "one.duckdb", sql)


def test_a_flatten_failure_leaves_nothing_behind(tmp_path: Path, monkeypatch) -> None:
    db = tmp_path / "s.duckdb"
    ingest([_write(tmp_path / "a.jsonl", _calls(3, task="t"))], db)
    monkeypatch.setattr(writer, "FLATTEN_CALLS", 10)
    monkeypatch.setattr(writer, "BATCH_CALLS", 10)
    monkeypatch.setattr(store, "mark_capped_sql", lambda: "SELECT no_such_column FROM calls")
    with pytest.raises(duckdb.Error):
        ingest([_write(tmp_path / "b.jsonl", _calls(100, run="run-b", task="t"))], db)
    assert (_count(db, "calls"), _count(db, "json_values"), _count(db, "ingests")) == (3, 15, 1)


_KILLED_MID_FILE = """
import os, sys
from tracemine.ingest import pipeline, writer
from tracemine.ingest.readers.flat import FlatReader
writer.BATCH_CALLS = 10
original = FlatReader.feed
def feed(self, unit, line, out):
    if line == 150:  # batches are committed by now; the process dies without cleaning up
        os._exit(9)
    return original(self, unit, line, out)
FlatReader.feed = feed
pipeline.ingest([sys.argv[1]], sys.argv[2])
"""


def test_a_process_killed_mid_file_leaves_rows_that_the_next_open_removes(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.duckdb"
    ingest([_write(tmp_path / "a.jsonl", _calls(3, task="t"))], db)
    big = _write(tmp_path / "b.jsonl", _calls(200, run="run-b", task="t"))
    child = subprocess.run([sys.executable, "-c", _KILLED_MID_FILE, str(big), str(db)],
                           capture_output=True, text=True)  # fmt: skip
    assert child.returncode == 9, child.stderr
    assert _count(db, "calls") > 3  # the dead process's batches are in the file …
    assert stats(db).calls == 3  # … and gone as soon as tracemine opens it, read-only or not
    assert (_count(db, "calls"), _count(db, "json_values"), _count(db, "ingests")) == (3, 15, 1)
    again = ingest([big], db)
    assert again.files[0].calls == 200 and _count(db, "calls") == 203


def test_repeated_call_ids_in_a_flat_file_are_flagged_in_the_store_and_in_memory(
    tmp_path: Path,
) -> None:
    lines = [*_calls(3, task="t"), _calls(2, task="t")[1], *_calls(1, run="other", task="t")]
    src = _write(tmp_path / "repeats.jsonl", lines)
    db = tmp_path / "s.duckdb"
    ingest([src], db)
    stored = _table(db, "SELECT run_id, call_id, anomalies FROM calls ORDER BY call_key")
    in_memory = [(c["run_id"], c["call_id"], c["anomalies"]) for c in read_traces(src).calls]
    assert stored == in_memory
    assert [a for *_, a in in_memory] == [[], [], [], ["duplicate_call_id"], []]


def test_nan_and_infinities_are_stored_as_null_and_each_is_quarantined(tmp_path: Path) -> None:
    """NaN, Infinity and a number past a double's range are no JSON numbers: the call is
    kept with null there, and an item names the line, the place and what was there — in
    the record itself and inside an arguments string the reader parses. A record whose
    line only looked like that while detecting the format is not counted twice."""
    plain = (
        '{"run_id": "r", "task_id": "t", "tool": "get", "call_id": "c1", "arguments": {},'
        ' "result": {"x": 1e400, "y": NaN, "items": [1, -Infinity], "ok": 2}}'
    )
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "tool_calls": [{"id": "k1", "type": "function", "function": {
            "name": "get", "arguments": '{"limit": NaN, "q": "a"}'}}]},
        {"role": "tool", "tool_call_id": "k1", "content": '{"n": 1}'},
    ]  # fmt: skip
    flat = _write(tmp_path / "flat.jsonl", [plain, plain.replace("c1", "c2").replace("NaN", "3")])
    chat = _write(tmp_path / "chat.jsonl", [json.dumps({"messages": messages})])
    report = ingest([flat, chat], tmp_path / "s.duckdb")
    by_file = {Path(f.source_file).name: f for f in report.files}
    assert (by_file["flat.jsonl"].units_stored, by_file["flat.jsonl"].calls) == (2, 2)
    assert by_file["flat.jsonl"].items_quarantined == 5
    assert by_file["chat.jsonl"].items_quarantined == 1
    con = store.connect(tmp_path / "s.duckdb", read_only=True)
    rows = con.execute(
        "SELECT source_file, source_line, source_pointer, reason FROM quarantine"
        " ORDER BY source_file, source_line, source_pointer"
    ).fetchall()
    stored = con.execute("SELECT result::VARCHAR FROM calls ORDER BY call_key LIMIT 1").fetchall()
    args = con.execute("SELECT arguments::VARCHAR FROM calls WHERE source_format = 'openai_chat'")
    (chat_arguments,) = args.fetchall()
    con.close()
    assert chat_arguments == ('{"limit":null,"q":"a"}',)
    assert stored == [('{"x":null,"y":null,"items":[1,null],"ok":2}',)]
    places = [(Path(f).name, line, pointer) for f, line, pointer, _ in rows]
    assert places == [
        ("chat.jsonl", 1, "/limit"),
        ("flat.jsonl", 1, "/result/items/1"), ("flat.jsonl", 1, "/result/x"),
        ("flat.jsonl", 1, "/result/y"),
        ("flat.jsonl", 2, "/result/items/1"), ("flat.jsonl", 2, "/result/x"),
    ]  # fmt: skip
    reasons = {pointer: reason for _, _, pointer, reason in rows}
    assert reasons["/result/y"] == "NaN is not a JSON number; stored as null"
    assert "too large for a double" in reasons["/result/x"]


def test_a_cap_too_small_for_a_commit_is_one_line_and_leaves_the_store_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Out of memory while a batch commits is a transaction or fatal error in DuckDB, not
    an out-of-memory one: it is said as running out of memory all the same."""
    from tracemine.errors import MemoryLimitError
    from tracemine.simulate import simulate, write_traces

    trace = write_traces(simulate("offers", tasks=40, seed=3, trials=1), tmp_path / "w.jsonl",
                         "flat")  # fmt: skip
    db = tmp_path / "small.duckdb"
    monkeypatch.setenv("TRACEMINE_DUCKDB_MEMORY", "8MB")
    with pytest.raises(MemoryLimitError, match=r"ingesting .*w\.jsonl ran out of memory.*=16MB"):
        ingest([trace], db)
    monkeypatch.delenv("TRACEMINE_DUCKDB_MEMORY")
    con = store.connect(db)
    try:
        assert con.execute("SELECT count(*) FROM calls").fetchall() == [(0,)]
    finally:
        con.close()
    assert ingest([trace], db).total("calls") > 0
