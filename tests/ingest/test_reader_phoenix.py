"""The Phoenix spans dataframe reader, and parquet files as a source of units: detection,
near misses, what a row becomes, the run and its task, and round trips through the
simulator's writer as JSON lines and as parquet."""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest

from tracemine.errors import UnknownFormatError
from tracemine.ingest import ingest
from tracemine.ingest.detect import detect_format
from tracemine.ingest.pipeline import expand_paths
from tracemine.ingest.readers import READERS
from tracemine.ingest.readers.base import BadRecord, Sink
from tracemine.ingest.readers.otlp import OtlpReader
from tracemine.ingest.readers.phoenix import PhoenixReader, attributes_of
from tracemine.ingest.source import BadUnit, iter_units
from tracemine.simulate import simulate, write_traces
from tracemine.simulate.formats import dump_line
from tracemine.simulate.formats import phoenix as writer

from helpers import ingest_snapshot

FIXTURES = Path(__file__).parent.parent / "fixtures" / "ingest" / "phoenix"
TRACE = "5b8efff798038103d269b633813fc60c"


def row(
    span_id: str = "s1", kind: str = "TOOL", trace: str = TRACE, **attrs: Any
) -> dict[str, Any]:
    """A dataframe row: the span columns, then ``attributes.*`` (``__`` for a dot)."""
    unit: dict[str, Any] = {
        "name": attrs.pop("name", "span"),
        "span_kind": kind,
        "parent_id": attrs.pop("parent_id", "root"),
        "start_time": attrs.pop("start_time", 1748772000000),
        "end_time": attrs.pop("end_time", 1748772000250),
        "status_code": attrs.pop("status_code", "OK"),
        "status_message": attrs.pop("status_message", ""),
        "events": attrs.pop("events", []),
        "context.span_id": span_id,
        "context.trace_id": trace,
    }
    unit.update({f"attributes.{k.replace('__', '.')}": v for k, v in attrs.items()})
    return unit


def tool(span_id: str = "s1", name: str = "get_order", **attrs: Any) -> dict[str, Any]:
    attrs.setdefault("input__value", '{"order_id": "A-1"}')
    attrs.setdefault("output__value", '{"status": "shipped"}')
    return row(span_id, "TOOL", tool__name=name, **attrs)


def read(*units: Any) -> Sink:
    reader = PhoenixReader("exports/spans.jsonl")
    sink = Sink()
    for line, unit in enumerate(units, 1):
        reader.feed(unit, line, sink)
    reader.finish(sink)
    return sink


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(dump_line(r) + "\n" for r in rows), encoding="utf-8")
    return path


# -- detection ------------------------------------------------------------------------


def test_sniff_takes_dataframe_rows_of_any_kind() -> None:
    assert PhoenixReader.sniff(tool())
    assert PhoenixReader.sniff(row(kind="LLM"))
    assert not PhoenixReader.sniff({"resourceSpans": []})
    console = {"name": "x", "context": {"trace_id": "0xab", "span_id": "0xcd"}, "attributes": {}}
    assert not PhoenixReader.sniff(console)
    assert not PhoenixReader.sniff({"tool": "get_order", "arguments": {}, "run_id": "r"})
    assert not PhoenixReader.sniff([tool()])


def test_no_other_reader_takes_a_row_and_phoenix_takes_no_otlp() -> None:
    for name, cls in READERS.items():
        if name != "phoenix":
            assert not cls.sniff(tool()), name
            assert not cls.sniff(row(kind="CHAIN", parent_id=None)), name
    assert OtlpReader.sniff({"name": "x", "context": {"span_id": "0x1"}})
    assert not PhoenixReader.sniff({"name": "x", "context": {"span_id": "0x1"}})


def test_fixtures_are_detected() -> None:
    assert detect_format(FIXTURES / "dataframe.parquet") == "phoenix"
    assert detect_format(FIXTURES / "dataframe_records.jsonl") == "phoenix"


def test_near_miss_without_span_kind(tmp_path: Path) -> None:
    unit = tool()
    del unit["span_kind"]
    assert "no span_kind" in (PhoenixReader.near_miss(unit) or "")
    path = write_jsonl(tmp_path / "spans.jsonl", [unit])
    with pytest.raises(UnknownFormatError, match=r"looks like a phoenix export, but .*span_kind"):
        detect_format(path)


def test_near_miss_without_ids() -> None:
    unit = tool()
    del unit["context.span_id"], unit["context.trace_id"]
    said = PhoenixReader.near_miss(unit) or ""
    assert "context.trace_id" in said and "span_kind" in said
    assert PhoenixReader.near_miss(tool()) is None
    assert PhoenixReader.near_miss({"resourceSpans": []}) is None
    assert PhoenixReader.near_miss({"role": "user"}) is None


# -- what a row becomes ---------------------------------------------------------------


def test_tool_row_is_a_call() -> None:
    sink = read(tool(input__mime_type="application/json", tool_call__id="call_1"))
    (call,) = sink.calls
    assert call["tool"] == "get_order"
    assert call["arguments"] == {"order_id": "A-1"}
    assert call["result"] == {"status": "shipped"}
    assert (call["status"], call["call_id"], call["run_id"]) == ("ok", "call_1", TRACE)
    assert call["source_format"] == "phoenix"
    assert call["duration_ms"] == 250.0
    assert call["started_at"].isoformat() == "2025-06-01T10:00:00"


def test_kind_from_the_attribute_when_the_column_is_missing() -> None:
    unit = tool(openinference__span__kind="tool")
    unit["span_kind"] = None
    assert [c["tool"] for c in read(unit).calls] == ["get_order"]


def test_other_spans_are_no_calls() -> None:
    llm = row(
        "l1",
        "LLM",
        llm__output_messages=[
            {
                "message.role": "assistant",
                "message.tool_calls": [
                    {"tool_call.function.name": "get_order", "tool_call.function.arguments": "{}"}
                ],
            }
        ],
    )
    sink = read(llm, row("c1", "CHAIN"), row("a1", "AGENT", parent_id=None))
    assert sink.calls == [] and sink.quarantined == []


def test_text_input_is_kept_as_text() -> None:
    (call,) = read(
        tool(
            input__value="kb-1",
            input__mime_type="text/plain",
            output__value="To reset, open Settings.",
        )
    ).calls
    assert call["arguments"] == "kb-1"
    assert call["result"] == "To reset, open Settings."


def test_error_status_and_exception_event() -> None:
    event = {
        "name": "exception",
        "timestamp": "2025-06-01T10:00:00.200000+00:00",
        "attributes": {"exception.type": "KeyError", "exception.message": "A-1"},
    }
    failed, bare, timed_out = read(
        tool(
            "s1",
            status_code="ERROR",
            status_message="order missing",
            events=[event],
            output__value=None,
        ),
        tool("s2", status_code="ERROR", events=[event], output__value=None),
        tool(
            "s3",
            status_code="ERROR",
            events=[
                {
                    **event,
                    "attributes": {
                        "exception.type": "TimeoutError",
                        "exception.message": "took too long",
                    },
                }
            ],
        ),
    ).calls
    assert (failed["status"], failed["error_type"], failed["error_message"]) == (
        "tool_error",
        "KeyError",
        "order missing",
    )
    assert failed["result"] is None and failed["anomalies"] == []
    assert (bare["error_type"], bare["error_message"]) == ("KeyError", "A-1")
    assert timed_out["status"] == "timeout"


def test_unset_status_is_ok_and_lowercase_codes_are_read() -> None:
    unset, lower = read(tool("s1", status_code="UNSET"), tool("s2", status_code="error")).calls
    assert unset["status"] == "ok"
    assert lower["status"] == "tool_error"


def test_quarantine_reasons() -> None:
    sink = read(row("s1", "TOOL", input__value="{}"))
    assert [q[2] for q in sink.quarantined] == ["openinference tool span without a tool name"]
    reader = PhoenixReader("spans.jsonl")
    with pytest.raises(BadRecord, match="expected a Phoenix spans dataframe row"):
        reader.feed({"name": "x", "span_kind": "TOOL"}, 1, Sink())
    with pytest.raises(BadRecord, match="expected a Phoenix spans dataframe row"):
        reader.feed([tool()], 1, Sink())


def test_quarantine_in_the_store(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "spans.jsonl",
        [tool(), ["not", "a", "row"], row("s2", "TOOL", input__value="{}")],
    )
    ingest([path], tmp_path / "t.duckdb", format="phoenix")
    con = duckdb.connect(str(tmp_path / "t.duckdb"), read_only=True)
    try:
        rows = con.execute(
            "SELECT source_line, level, reason FROM quarantine ORDER BY source_line"
        ).fetchall()
    finally:
        con.close()
    assert [(line, level) for line, level, _ in rows] == [(2, "unit"), (3, "item")]
    assert rows[0][2].startswith("expected a Phoenix spans dataframe row")


def test_nested_custom_attributes_are_joined_back() -> None:
    unit = row(
        kind="AGENT",
        tracemine={"family": "commerce.refund", "reward": 1.0},
        metadata={"task_id": "t-1", "note": None},
        tool__parameters={"type": "object"},
    )
    attrs = attributes_of(unit)
    assert attrs["tracemine.family"] == "commerce.refund"
    assert attrs["tracemine.reward"] == 1.0
    assert attrs["metadata"] == {"task_id": "t-1"}  # nulls of a parquet struct dropped
    assert attrs["tool.parameters"] == {"type": "object"}  # kept whole
    assert attributes_of(row(metadata='{"task_id": "t-2"}'))["metadata"] == {"task_id": "t-2"}
    assert "llm.token_count.total" not in attributes_of(row(llm__token_count__total=float("nan")))


# -- the run and its task -------------------------------------------------------------


def test_run_is_the_trace_task_from_metadata() -> None:
    root = row(
        "r",
        "AGENT",
        parent_id=None,
        session__id="sess-1",
        metadata={"task_id": "refund", "trial": 2},
        tracemine={"family": "commerce"},
    )
    sink = read(tool("s1", session__id="sess-1"), root)
    (run,) = sink.runs
    assert (run["run_id"], run["task_id"], run["trial"], run["family"]) == (
        TRACE,
        "refund",
        2,
        "commerce",
    )
    assert run["session_id"] == "sess-1"
    assert run["metadata"]["task_id_from"] == "metadata"
    assert run["metadata"]["run_id_source"] == "trace_id"


def test_metadata_of_any_span_names_the_task() -> None:
    (run,) = read(tool("s1", metadata={"task_id": "from-tool-span"})).runs
    assert run["task_id"] == "from-tool-span"


def test_task_from_session_when_metadata_has_none() -> None:
    sink = read(
        tool("s1", trace="t1", session__id="ticket-8"),
        tool("s2", trace="t2", session__id="ticket-8"),
    )
    assert sorted(r["run_id"] for r in sink.runs) == ["t1", "t2"]  # a run per trace
    assert {(r["task_id"], r["metadata"]["task_id_from"]) for r in sink.runs} == {
        ("ticket-8", "session.id")
    }


def test_task_id_attribute_and_none() -> None:
    (run,) = read(
        tool("s1", task={"id": "attr-task"}),
        row("r", "CHAIN", parent_id=None, task={"id": "attr-task"}),
    ).runs
    assert (run["task_id"], run["metadata"]["task_id_from"]) == ("attr-task", "attributes")
    (bare,) = read(tool()).runs
    assert bare["task_id"] is None and "task_id_from" not in bare["metadata"]


def test_calls_are_ordered_by_time_not_by_row(tmp_path: Path) -> None:
    late = tool("s2", name="second", start_time=1748772005000, end_time=1748772005100)
    path = write_jsonl(tmp_path / "spans.jsonl", [late, tool("s1", name="first")])
    ingest([path], tmp_path / "t.duckdb")
    con = duckdb.connect(str(tmp_path / "t.duckdb"), read_only=True)
    try:
        assert con.execute("SELECT tool FROM calls ORDER BY seq").fetchall() == [
            ("first",),
            ("second",),
        ]
    finally:
        con.close()


# -- parquet --------------------------------------------------------------------------


def test_parquet_and_jsonl_give_the_same_store(tmp_path: Path) -> None:
    parquet = ingest_snapshot(FIXTURES / "dataframe.parquet", tmp_path / "p.duckdb")
    lines = ingest_snapshot(FIXTURES / "dataframe_records.jsonl", tmp_path / "j.duckdb")
    assert parquet == lines
    assert parquet["counts"]["calls"] == 4
    assert {c["status"] for c in parquet["calls"]} == {"ok", "tool_error"}


def test_parquet_rows_as_units(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    path = tmp_path / "rows.parquet"
    frame = pl.DataFrame(
        {
            "n": list(range(2500)),
            "at": [datetime(2025, 1, 1, tzinfo=UTC)] * 2500,
            "s": [{"a": 1, "b": None}] * 2500,
            "l": [[{"x": "y"}]] * 2500,
            "f": [float("nan")] * 2500,
        }
    )
    frame.write_parquet(path, row_group_size=700)
    units = list(iter_units(path))
    assert [position for position, _ in units] == list(range(1, 2501))
    assert all(unit["n"] == position - 1 for position, unit in units)
    assert units[0][1] == {
        "n": 0,
        "at": "2025-01-01T00:00:00+00:00",
        "s": {"a": 1, "b": None},
        "l": [{"x": "y"}],
        "f": None,
    }


def test_corrupt_parquet_is_one_bad_unit_naming_the_file(tmp_path: Path) -> None:
    good = (FIXTURES / "dataframe.parquet").read_bytes()
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(good[: len(good) // 2])
    ((position, unit),) = list(iter_units(cut))
    assert position == 1 and isinstance(unit, BadUnit) and unit.stops
    assert "parquet file cut.parquet cannot be read" in unit.reason
    with pytest.raises(UnknownFormatError, match=r"cut\.parquet.*parquet file cut\.parquet"):
        detect_format(cut)
    report = ingest([cut], tmp_path / "t.duckdb", format="phoenix")
    (file_report,) = report.files
    assert "cut.parquet" in file_report.stopped
    assert file_report.units_quarantined == 1


def test_gzipped_parquet_is_refused_with_a_reason(tmp_path: Path) -> None:
    import gzip

    path = tmp_path / "spans.parquet.gz"
    path.write_bytes(gzip.compress((FIXTURES / "dataframe.parquet").read_bytes()))
    ((_, unit),) = list(iter_units(path))
    assert isinstance(unit, BadUnit) and "gzip-compressed parquet" in unit.reason


def test_a_folder_picks_up_parquet_files(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "spans.parquet").write_bytes((FIXTURES / "dataframe.parquet").read_bytes())
    assert [p.name for p, _ in expand_paths([tmp_path / "in"])] == ["spans.parquet"]
    report = ingest([tmp_path / "in"], tmp_path / "t.duckdb")
    assert report.total("calls") == 4


# -- round trip through the simulator's writer ----------------------------------------

FIELDS = (
    "seq",
    "tool",
    "call_id",
    "arguments",
    "result",
    "status",
    "error_type",
    "error_message",
    "started_at",
    "ended_at",
)
RUN_FIELDS = ("task_id", "trial", "family", "reward", "run_outcome")


def stored(db: Path, run_ids: dict[str, str] | None = None) -> tuple[list[Any], list[Any]]:
    """Calls and runs of a store, keyed by the simulator's run id."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        calls = con.execute(f"SELECT run_id, {', '.join(FIELDS)} FROM calls").fetchall()
        runs = con.execute(f"SELECT run_id, {', '.join(RUN_FIELDS)} FROM runs").fetchall()
    finally:
        con.close()
    name = (lambda r: run_ids[r]) if run_ids else (lambda r: r)
    calls = sorted((name(c[0]), *c[1:]) for c in calls)
    return calls, sorted((name(r[0]), *r[1:]) for r in runs)


@pytest.fixture(scope="module")
def round_trip(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("phoenix")
    runs = simulate("all", tasks=12, seed=3)
    rows = [unit for run in runs for unit in writer.write_run(run)]
    write_traces(runs, folder / "flat.jsonl", "flat")
    write_jsonl(folder / "spans.jsonl", rows)
    frame = pl.DataFrame(rows, infer_schema_length=None).with_columns(
        pl.col("start_time", "end_time").str.to_datetime(time_zone="UTC")
    )
    frame.write_parquet(folder / "spans.parquet")
    out: dict[str, Any] = {"runs": runs}
    for name in ("flat.jsonl", "spans.jsonl", "spans.parquet"):
        ingest([folder / name], folder / f"{name}.duckdb")
    out["flat"] = stored(folder / "flat.jsonl.duckdb")
    ids = {writer.trace_id(run["run_id"]): run["run_id"] for run in runs}
    out["jsonl"] = stored(folder / "spans.jsonl.duckdb", ids)
    out["parquet"] = stored(folder / "spans.parquet.duckdb", ids)
    return out


def test_round_trip_parquet_equals_jsonl(round_trip: dict[str, Any]) -> None:
    assert round_trip["parquet"] == round_trip["jsonl"]


def test_round_trip_gives_the_flat_calls(round_trip: dict[str, Any]) -> None:
    """The same calls, runs and tasks as the flat lines, but one difference on purpose: an
    exception type that names a timeout makes a timeout (as in OTLP), where the flat line
    says tool_error."""
    flat_calls, flat_runs = round_trip["flat"]
    calls, runs = round_trip["jsonl"]
    assert runs == flat_runs
    assert len(calls) == len(flat_calls) == sum(len(r["calls"]) for r in round_trip["runs"])
    status = FIELDS.index("status") + 1
    differ = collections.Counter()
    for ours, theirs in zip(calls, flat_calls, strict=True):
        if ours != theirs:
            assert ours[:status] + ours[status + 1 :] == theirs[:status] + theirs[status + 1 :]
            assert "timeout" in (theirs[status + 1] or "")
            differ[(theirs[status], ours[status])] += 1
    assert set(differ) <= {("tool_error", "timeout")}
    statuses = {c[status] for c in calls}
    assert {"ok", "tool_error"} <= statuses


def test_parquet_corrupt_part_way_keeps_the_rows_before(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    path = tmp_path / "many.parquet"
    frame = pl.DataFrame({"n": list(range(5000)), "s": [f"value {i}" for i in range(5000)]})
    frame.write_parquet(path, row_group_size=1000)
    data = bytearray(path.read_bytes())
    start = pq.ParquetFile(path).metadata.row_group(3).column(1).data_page_offset + 40
    for i in range(start, start + 200):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))
    units = list(iter_units(path))
    *rows, (position, last) = units
    assert isinstance(last, BadUnit) and last.stops
    assert "parquet file many.parquet is corrupt or truncated after row" in last.reason
    assert 0 < len(rows) < 5000 and position == len(rows) + 1
    assert all(unit["n"] == n for n, (_, unit) in enumerate(rows))
