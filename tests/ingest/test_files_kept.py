"""What ingest keeps: a file is known by its path and its content, so a copy elsewhere is
read as runs of its own, ``--replace`` touches only the file named, and a reading that
stored nothing blocks nobody."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb

import tracemine as tracemine_package
from tracemine.ingest import ingest

FIXTURES = Path(__file__).parent.parent / "fixtures" / "ingest"
STDIO = FIXTURES / "mcp" / "stdio_session.jsonl"  # one MCP session, 8 tool calls


def tracemine(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command line as a user runs it, on the tracemine these tests import."""
    env = {"COLUMNS": "200", "PATH": "", "NO_COLOR": "1",
           "PYTHONPATH": str(Path(tracemine_package.__file__).parents[1])}  # fmt: skip
    return subprocess.run([sys.executable, "-m", "tracemine", *args], capture_output=True,
                          text=True, cwd=cwd, env=env)  # fmt: skip


def _rows(db: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _trials(tmp_path: Path, second: bytes | None = None) -> Path:
    """Per-trial MCP logs of one name: the second a byte-identical copy unless given."""
    logs = tmp_path / "logs"
    for trial in ("trial1", "trial2"):
        (logs / trial).mkdir(parents=True)
    shutil.copy(STDIO, logs / "trial1" / "session.jsonl")
    (logs / "trial2" / "session.jsonl").write_bytes(second or STDIO.read_bytes())
    return logs


def test_a_byte_identical_copy_at_another_path_is_read_as_runs_of_its_own(tmp_path: Path) -> None:
    logs, db = _trials(tmp_path), tmp_path / "s.duckdb"
    first = ingest([logs], db)
    assert [f.outcome for f in first.files] == ["ingested", "ingested"]
    assert "same content as" in first.files[1].detail
    runs = _rows(db, "SELECT run_id, count(*) FROM calls GROUP BY 1 ORDER BY 1")
    assert runs == [("session.jsonl", 8), ("session.jsonl@" + first.files[1].source_file, 8)]
    (meta,) = _rows(db, "SELECT metadata ->> 'run_id_in_file' FROM runs WHERE run_id LIKE '%@%'")
    assert meta == ("session.jsonl",)
    again = ingest([logs], db)
    assert [f.outcome for f in again.files] == ["skipped", "skipped"]
    assert _rows(db, "SELECT count(*), count(DISTINCT run_id) FROM calls") == [(16, 2)]


def test_replace_rereads_only_the_file_named_and_the_summary_is_what_the_store_holds(
    tmp_path: Path,
) -> None:
    logs, db = _trials(tmp_path), tmp_path / "s.duckdb"
    replaced = ingest([logs], db, replace=True)
    assert replaced.total("calls") == 16
    assert _rows(db, "SELECT count(*), count(DISTINCT run_id) FROM calls") == [(16, 2)]
    again = ingest([logs / "trial2"], db, replace=True)  # trial 1's rows are not its own
    assert [f.outcome for f in again.files] == ["replaced"]
    assert _rows(db, "SELECT source_file, count(*) FROM calls GROUP BY 1 ORDER BY 1") == [
        (f.source_file, 8) for f in replaced.files
    ]
    assert _rows(db, "SELECT count(*) FROM ingests") == [(2,)]


def test_files_of_one_name_in_two_folders_keep_their_runs_apart(tmp_path: Path) -> None:
    """Run ids made from a file's name are the same for two files of that name: the
    second trial's run does not take the first's calls as its own."""
    shorter = b"".join(STDIO.read_bytes().splitlines(keepends=True)[:20])
    logs, db = _trials(tmp_path, second=shorter), tmp_path / "s.duckdb"
    report = ingest([logs], db)
    assert [f.calls for f in report.files] == [8, 8]
    assert _rows(db, "SELECT run_id, source_file, count(*) FROM calls GROUP BY ALL ORDER BY 1") == [
        ("session.jsonl", report.files[0].source_file, 8),
        ("session.jsonl@" + report.files[1].source_file, report.files[1].source_file, 8),
    ]
    # every call numbered once within its run
    assert _rows(db, "SELECT count(*) FROM (SELECT run_id, seq FROM calls GROUP BY ALL "
                     "HAVING count(*) > 1)") == [(0,)]  # fmt: skip


def test_a_wrongly_forced_format_is_refused_with_the_reader_that_fits(tmp_path: Path) -> None:
    shutil.copy(STDIO, tmp_path / "session.jsonl")
    wrong = tracemine("ingest", "session.jsonl", "--db", "s.duckdb", "--format", "openai_chat",
                      cwd=tmp_path)  # fmt: skip
    assert wrong.returncode == 2, wrong.stdout
    assert wrong.stderr.strip().splitlines() == [
        "error: session.jsonl: --format openai_chat found no tool calls in its 25 records "
        "(25 quarantined); it looks like mcp: run without --format, or with --format mcp. "
        "Nothing of it was stored"
    ]
    right = tracemine("ingest", "session.jsonl", "--db", "s.duckdb", "--json", cwd=tmp_path)
    assert right.returncode == 0, right.stderr
    (read,) = json.loads(right.stdout)["files"]
    assert (read["outcome"], read["source_format"], read["calls"]) == ("ingested", "mcp", 8)


def test_a_reading_that_stored_no_calls_does_not_block_the_right_one(tmp_path: Path) -> None:
    """A file no reader recognises from its first records (five conversations without
    tools) is read under the --format given; one that found nothing is no ingest."""
    plain = [{"messages": [{"role": "user", "content": "hi"},
                           {"role": "assistant", "content": "hello"}]}] * 5  # fmt: skip
    tools = {"messages": [
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
                                             "function": {"name": "get", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "{\"ok\": true}"}]}  # fmt: skip
    src = tmp_path / "chats.jsonl"
    src.write_text("".join(json.dumps(x) + "\n" for x in [*plain, tools]))
    db = tmp_path / "s.duckdb"
    wrong = ingest([src], db, format="flat")
    assert wrong.total("calls") == 0 and wrong.files[0].outcome == "ingested"
    right = ingest([src], db, format="openai_chat")
    (f,) = right.files
    assert (f.outcome, f.calls) == ("replaced", 1)
    assert "earlier reading as flat stored no calls" in f.detail
    assert _rows(db, "SELECT source_format, calls_stored FROM ingests") == [("openai_chat", 1)]
    assert _rows(db, "SELECT count(*) FROM quarantine WHERE reason LIKE '%tool%'") == [(0,)]


def test_records_without_calls_are_a_warning_and_with_no_other_calls_a_failure(
    tmp_path: Path,
) -> None:
    """Chat spans recorded without their messages (content capture off) hold no call: the
    summary says which reader ran and what it reads; the exit code fails the ingest when
    no file gave a call."""
    chat = {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "chat gpt-4o-mini",
            "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}]}  # fmt: skip
    spans = tmp_path / "spans.jsonl"
    spans.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [chat]}]}]}) + "\n")
    alone = tracemine("ingest", "spans.jsonl", "--db", "a.duckdb", cwd=tmp_path)
    assert alone.returncode == 1, alone.stdout + alone.stderr
    out = " ".join(alone.stdout.split())
    assert "spans.jsonl: the otlp reader found no tool calls in 1 record; it reads GenAI " \
           "execute_tool spans" in out  # fmt: skip
    assert "gen_ai.input.messages" in out
    assert "warning: spans.jsonl: no tool calls stored from its 1 record" in out
    shutil.copy(STDIO, tmp_path / "session.jsonl")
    beside = tracemine("ingest", "spans.jsonl", "session.jsonl", "--db", "b.duckdb", cwd=tmp_path)
    assert beside.returncode == 0, beside.stdout + beside.stderr
    assert "warning: spans.jsonl: no tool calls stored" in beside.stdout


def test_a_file_an_older_reader_found_nothing_in_is_read_again(tmp_path: Path) -> None:
    """A store that read chat spans before their messages were read (OTLP reader 1)
    holds the file with no calls: ingesting it again reads it, not skips it."""
    src = FIXTURES / "otlp" / "chat_spans.jsonl"
    db = tmp_path / "s.duckdb"
    ingest([src], db)
    con = duckdb.connect(str(db))
    try:  # what the first version of the reader left: the file, its runs, no call
        con.execute("DELETE FROM json_values")
        con.execute("DELETE FROM calls")
        con.execute("UPDATE ingests SET adapter_version = '1', calls_stored = 0")
    finally:
        con.close()
    (again,) = ingest([src], db).files
    assert (again.outcome, again.calls) == ("replaced", 5)
    assert "earlier reading as otlp stored no calls" in again.detail
    assert ingest([src], db).files[0].outcome == "skipped"
