"""The Langfuse reader: detection and near misses, what a tool observation becomes (its
arguments, its result or ToolMessage, its error, a missing result), the run and its task,
the three layouts (traces with observations, an observations page, blob storage rows),
the store's accounting, and a round trip through the simulator's writer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from tracemine.errors import UnknownFormatError
from tracemine.ingest import ingest, read_traces
from tracemine.ingest.detect import detect_format
from tracemine.ingest.readers import READERS
from tracemine.ingest.readers.base import Sink
from tracemine.ingest.readers.langfuse import LangfuseReader
from tracemine.simulate import simulate, write_traces
from tracemine.simulate.formats import dump_line
from tracemine.simulate.formats.langfuse import trace_id, write_run

from helpers import read_units, write_jsonl

FIXTURES = Path(__file__).parent.parent / "fixtures" / "ingest"
TRACE = "5b8efff798038103d269b633813fc60c"
ROOT = "a1b2c3d4e5f60718"


def tool(obs_id: str = "00f067aa0ba902b4", name: str | None = "get_order", **fields: Any) -> dict[str, Any]:  # fmt: skip
    obs: dict[str, Any] = {
        "id": obs_id, "traceId": TRACE, "type": "TOOL", "name": name,
        "startTime": "2025-06-01T10:00:00.100Z", "endTime": "2025-06-01T10:00:00.250Z",
        "input": {"order_id": "A-1"}, "output": {"status": "shipped"}, "metadata": {},
        "level": "DEFAULT", "statusMessage": None, "parentObservationId": ROOT,
    }  # fmt: skip
    obs.update(fields)
    return obs


def root(**fields: Any) -> dict[str, Any]:
    return {**tool(ROOT, "agent", type="AGENT", parentObservationId=None), **fields}


def trace(*observations: Any, **fields: Any) -> dict[str, Any]:
    record = {"id": TRACE, "timestamp": "2025-06-01T10:00:00.000Z", "name": "agent",
              "sessionId": None, "metadata": {}, "observations": list(observations),
              "scores": [], "htmlPath": f"/project/p/traces/{TRACE}"}  # fmt: skip
    record.update(fields)
    return record


def read(*units: Any) -> Sink:
    return read_units(LangfuseReader("exports/langfuse.jsonl"), *units)


# -- detection ------------------------------------------------------------------------


def test_only_langfuse_takes_its_records_and_it_takes_no_other_fixture() -> None:
    page = {"data": [tool()], "meta": {"page": 1, "limit": 50, "totalItems": 1, "totalPages": 1}}
    blob = {"id": "e1", "trace_id": TRACE, "type": "TOOL", "name": "x", "input": "{}",
            "start_time": "2025-06-03 08:00:01.000000"}  # fmt: skip
    for unit in (tool(), root(), trace(root(), tool()), trace(), page, blob):
        takers = [name for name, cls in READERS.items() if cls.sniff(unit)]
        assert takers == ["langfuse"], unit
    for path in FIXTURES.rglob("*"):
        if path.parent.name == "langfuse" or not path.is_file():
            continue
        if path.suffix in (".jsonl", ".json", ".gz", ".parquet") and ".golden" not in path.name:
            assert detect_format(path) != "langfuse", path


def test_near_misses_name_what_is_missing(tmp_path: Path) -> None:
    obs = tool()
    del obs["traceId"]
    with pytest.raises(UnknownFormatError, match=r"looks like a langfuse export, but .*"
                       r"type TOOL and no traceId"):  # fmt: skip
        detect_format(write_jsonl(tmp_path / "a.jsonl", [obs]))
    listed = trace("00f067aa0ba902b4")
    with pytest.raises(UnknownFormatError, match=r"observations by id only"):
        detect_format(write_jsonl(tmp_path / "b.jsonl", [listed]))
    page = {"data": [{**obs, "startTime": None}], "meta": {}}
    del page["data"][0]["startTime"]
    with pytest.raises(UnknownFormatError, match=r"in its data page, .*no traceId or startTime"):
        detect_format(write_jsonl(tmp_path / "c.jsonl", [page]))


# -- a tool observation ---------------------------------------------------------------


def test_tool_observation_is_a_call_and_others_are_not() -> None:
    generation = tool("g1", "ChatOpenAI", type="GENERATION", model="gpt-4o")
    span = tool("s1", "retrieve", type="SPAN")
    sink = read(trace(root(), tool(), generation, span, metadata={"task_id": "t-1"}))
    [call] = sink.calls
    assert call["tool"] == "get_order" and call["arguments"] == {"order_id": "A-1"}
    assert call["result"] == {"status": "shipped"} and call["status"] == "ok"
    assert call["run_id"] == TRACE and call["task_id"] == "t-1"
    # no tool_call_id: the observation id names the call, paired as inferred
    assert call["call_id"] == "00f067aa0ba902b4" and call["id_pairing"] == "inferred"
    assert call["duration_ms"] == pytest.approx(150)


def test_span_marked_as_an_opentelemetry_tool_is_a_call() -> None:
    attributes = {"gen_ai.tool.name": "lookup", "gen_ai.tool.call.id": "call_5"}
    span = tool("s1", None, type="SPAN", metadata={"attributes": attributes})
    [call] = read(span).calls
    assert (call["tool"], call["call_id"], call["id_pairing"]) == ("lookup", "call_5", "exact")


def test_what_the_sdk_and_the_langchain_handler_record() -> None:
    # @observe(as_type="tool"): keyword arguments under "kwargs"
    [call] = read(tool(input={"args": [], "kwargs": {"order_id": "A-7"}})).calls
    assert call["arguments"] == {"order_id": "A-7"} and call["arguments_error"] is None
    # positional arguments cannot be named: kept as recorded
    [call] = read(tool(input={"args": ["A-7"], "kwargs": {}})).calls
    assert call["arguments"] == {"args": ["A-7"], "kwargs": {}}
    # the LangChain handler: str() of the arguments, a ToolMessage, the model's call id
    message = {"content": '{"total": 12.5}', "type": "tool", "tool_call_id": "call_9",
               "status": "success"}  # fmt: skip
    [call] = read(tool(input="{'order_id': 'A-1', 'n': 2}", output=message,
                       metadata={"tool_call_id": "call_9"})).calls  # fmt: skip
    assert call["arguments"] == {"order_id": "A-1", "n": 2}
    assert call["arguments_raw"] == "{'order_id': 'A-1', 'n': 2}"
    assert call["result"] == {"total": 12.5} and call["result_text"] == '{"total": 12.5}'
    assert call["call_id"] == "call_9" and call["id_pairing"] == "exact"
    # text that is neither JSON nor a literal stays an argument error
    [call] = read(tool(input="order A-1")).calls
    assert call["arguments"] is None and "not valid JSON" in call["arguments_error"]


def test_errors() -> None:
    [call] = read(tool(level="ERROR", statusMessage="no such order: A-404", output=None)).calls
    assert (call["status"], call["error_type"], call["error_message"]) == (
        "tool_error", None, "no such order: A-404")  # fmt: skip
    [call] = read(tool(level="ERROR", statusMessage="TimeoutError: slow", output=None)).calls
    assert (call["status"], call["error_type"], call["error_message"]) == (
        "timeout", "TimeoutError", "slow")  # fmt: skip
    handled = {"content": '{"error": {"message": "amount over total"}}', "type": "tool",
               "tool_call_id": "c1", "status": "error"}  # fmt: skip
    [call] = read(tool(output=handled)).calls
    assert call["status"] == "tool_error" and call["error_message"] == "amount over total"
    # what makes it an error is the message's status, not its content
    said = {"content": "amount over total", "type": "tool", "tool_call_id": "c1"}
    [call] = read(tool(output={**said, "status": "error"})).calls
    assert (call["status"], call["error_message"]) == ("tool_error", "amount over total")
    [call] = read(tool(output={**said, "status": "success"})).calls
    assert (call["status"], call["error_message"]) == ("ok", None)
    [call] = read(tool(level="WARNING", statusMessage="slow answer")).calls
    assert call["status"] == "ok"


def test_open_observation_is_a_missing_result() -> None:
    [call] = read(tool(output=None, endTime=None)).calls
    assert call["status"] == "missing" and call["result_call_id"] is None


# -- the run and its task -------------------------------------------------------------


def test_task_from_metadata_then_observations_then_session() -> None:
    sink = read(trace(root(), tool(), sessionId="ticket-7", metadata={"task_id": "t-1"}))
    assert sink.calls[0]["task_id"] == "t-1" and sink.calls[0]["session_id"] == "ticket-7"
    sink = read(tool(), root(metadata={"task_id": "t-2", "tracemine.family": "shop.refund"}))
    [run] = sink.runs
    assert (run["task_id"], run["family"]) == ("t-2", "shop.refund")
    assert run["metadata"]["task_id_from"] == "metadata"
    sink = read(trace(root(), tool(), sessionId="ticket-7"))
    assert sink.calls[0]["task_id"] == "ticket-7"
    assert sink.runs[0]["metadata"]["task_id_from"] == "sessionId"
    score = {"name": "reward", "value": 0.5, "dataType": "NUMERIC"}
    sink = read(trace(root(), tool(), metadata={"trial": 2, "run_outcome": "failure"},
                      scores=[score]))  # fmt: skip
    [run] = sink.runs
    assert (run["trial"], run["run_outcome"], run["reward"]) == (2, "failure", 0.5)
    assert read(tool()).calls[0]["task_id"] is None


def test_observations_apart_from_their_trace_and_in_any_order() -> None:
    later = tool("b", "refund", startTime="2025-06-01T10:00:02Z")
    row = {k: v for k, v in trace(sessionId="s-9").items() if k != "observations"}
    sink = read(later, tool(), row)  # the trace row (traces/ export) comes last
    assert [c["task_id"] for c in sink.calls] == ["s-9", "s-9"]
    assert {c["run_id"] for c in sink.calls} == {TRACE}


def test_blob_storage_rows() -> None:
    row = {"id": "e1", "trace_id": TRACE, "type": "TOOL", "name": "book",
           "parent_observation_id": "", "start_time": "2025-06-03 08:00:01.000000",
           "end_time": "2025-06-03 08:00:01.400000", "input": '{"flight": "TP-1"}',
           "output": "", "level": "ERROR", "status_message": "sold out",
           "metadata": "{\"task_id\": \"trip-1\"}", "session_id": ""}  # fmt: skip
    [call] = read(row).calls
    assert call["arguments"] == {"flight": "TP-1"} and call["result"] is None
    assert (call["status"], call["error_message"], call["task_id"]) == (
        "tool_error", "sold out", "trip-1")  # fmt: skip
    assert call["duration_ms"] == pytest.approx(400)


def test_quarantine_reasons() -> None:
    sink = read(tool("n", name=None), {"id": "x", "note": "no record"}, tool(), tool(),
                trace(root(), {"id": "o", "note": "no observation"}))  # fmt: skip
    reasons = [q[2] for q in sink.quarantined]
    assert "tool observation without a name" in reasons[0]
    assert "expected a Langfuse observation or trace" in reasons[1]
    assert "repeats an observation read before" in reasons[2]
    assert "not a Langfuse observation" in reasons[3] and sink.quarantined[3][1] == (
        "/observations/1")  # fmt: skip
    assert len(sink.calls) == 1


# -- files, the store, the simulator --------------------------------------------------


def test_fixture_store_counts_every_record(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    report = ingest([FIXTURES / "langfuse" / "traces.jsonl"], db)
    with duckdb.connect(str(db), read_only=True) as con:
        calls = con.execute("SELECT tool, status FROM calls ORDER BY run_id, seq").fetchall()
        quarantined = con.execute("SELECT count(*) FROM quarantine").fetchone()
        tasks = sorted(r[0] for r in con.execute("SELECT task_id FROM runs").fetchall())
    assert len(calls) == 6 and quarantined == (3,)
    assert [s for _, s in calls].count("missing") == 1
    read_, stored = report.total("units_read"), report.total("units_stored")
    assert read_ == stored + report.total("units_quarantined") and read_ == 5
    assert tasks == ["refund-1", "thread-9"]


def _write(runs: list[dict[str, Any]], path: Path) -> Path:
    path.write_text("".join(dump_line(u) + "\n" for r in runs for u in write_run(r)),
                    encoding="utf-8")  # fmt: skip
    return path


def test_round_trip_gives_the_langsmith_calls(tmp_path: Path) -> None:
    runs = simulate("all", tasks=9, seed=5, trials=2)
    theirs = read_traces(write_traces(runs, tmp_path / "x.langsmith.jsonl", "langsmith"))
    path = _write(runs, tmp_path / "x.langfuse.jsonl")
    assert detect_format(path) == "langfuse"
    ours = read_traces(path)

    def keyed(traces: Any) -> dict[tuple[Any, ...], dict[str, Any]]:
        task = {r["run_id"]: (r["task_id"], r["trial"]) for r in traces.runs}
        return {(task[c["run_id"]], c["started_at"], c["tool"]): c for c in traces.calls}

    a, b = keyed(theirs), keyed(ours)
    assert a.keys() == b.keys() and len(a) > 20
    for key, call in a.items():
        for field in ("arguments", "result", "status", "call_id", "error_message", "task_id"):
            assert call[field] == b[key][field], (key, field)

    def facts(traces: Any) -> list[tuple[Any, ...]]:
        return sorted((r["task_id"], r["trial"], r["family"], r["reward"], r["run_outcome"])
                      for r in traces.runs)  # fmt: skip

    assert facts(theirs) == facts(ours)
    assert {r["run_id"] for r in ours.runs} == {trace_id(r["run_id"]) for r in runs}


def test_writer_keeps_errors_and_missing_results(tmp_path: Path) -> None:
    [run] = simulate("commerce", tasks=1, seed=3, trials=1)
    first, second, third = run["calls"][:3]
    first.update(status="timeout", error_type=None, error_message="took too long", result=None)
    second.update(status="missing", result=None, result_call_id=None)
    payload = {"error": {"code": "internal_error", "message": "unhandled exception"}}
    third.update(status="tool_error", error_type="internal_error",
                 error_message="unhandled exception", result=payload)  # fmt: skip
    calls = read_traces(_write([run], tmp_path / "e.jsonl")).calls
    assert [(c["status"], c["error_message"]) for c in calls[:3]] == [
        ("timeout", "took too long"), ("missing", None), ("tool_error", "unhandled exception")]  # fmt: skip
    assert calls[0]["error_type"] == "TimeoutError" and calls[2]["result"] == payload
