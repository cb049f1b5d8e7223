"""The W&B Weave calls reader: detection and near misses, what a tool call becomes (its
arguments, its result, its exception, a call still running), which calls are tool calls,
the run and its task, the store's accounting, a dataframe saved as parquet, and a round
trip through the simulator's writer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tracemine.errors import UnknownFormatError
from tracemine.ingest import ingest, read_traces
from tracemine.ingest.detect import detect_format
from tracemine.ingest.readers import READERS
from tracemine.ingest.readers.base import Sink
from tracemine.ingest.readers.weave import WeaveReader, op_name_of
from tracemine.simulate import simulate, write_traces
from tracemine.simulate.formats import dump_line
from tracemine.simulate.formats.weave import write_run

from helpers import read_units, write_jsonl

FIXTURES = Path(__file__).parent.parent / "fixtures" / "ingest"
TRACE = "0195d4a1-0000-7000-8000-000000000001"
OP = "weave:///acme/support/op/{}:Wm9TqH1nXkJ3p8sVYcR2dFgL5aZ7bEoN4uIwQxTyAhC"


def tool_call(
    call_id: str = "0195d4a1-0000-7000-8000-000000000002", name: str = "get_order", **fields: Any
) -> dict[str, Any]:  # fmt: skip
    call: dict[str, Any] = {
        "id": call_id,
        "project_id": "acme/support",
        "op_name": OP.format(name),
        "display_name": None,
        "trace_id": TRACE,
        "parent_id": TRACE,
        "thread_id": None,
        "started_at": "2025-06-01T10:00:00.100000Z",
        "attributes": {"weave": {"kind": "tool", "client_version": "0.54.0"}},
        "inputs": {"order_id": "A-1"},
        "ended_at": "2025-06-01T10:00:00.250000Z",
        "exception": None,
        "output": {"status": "shipped"},
        "summary": {"weave": {"status": "success", "latency_ms": 150}},
    }
    call.update(fields)
    return call


def root_call(call_id: str = TRACE, **attributes: Any) -> dict[str, Any]:
    return {
        "id": call_id, "project_id": "acme/support", "op_name": OP.format("agent"),
        "trace_id": TRACE, "parent_id": None, "thread_id": None, "inputs": {"q": "hi"},
        "output": "done", "exception": None, "started_at": "2025-06-01T10:00:00Z",
        "ended_at": "2025-06-01T10:00:01Z",
        "attributes": {"weave": {"kind": "agent"}, **attributes},
    }  # fmt: skip


def read(*units: Any) -> Sink:
    return read_units(WeaveReader("exports/calls.jsonl"), *units)


# -- detection ------------------------------------------------------------------------


def test_only_weave_takes_a_call_and_it_takes_no_other_fixture() -> None:
    for unit in (tool_call(), root_call(), {"calls": [tool_call()]}):
        takers = [name for name, cls in READERS.items() if cls.sniff(unit)]
        assert takers == ["weave"], unit
    for path in FIXTURES.rglob("*"):
        if path.parent.name == "weave" or not path.is_file() or ".golden" in path.name:
            continue
        if path.suffix in (".jsonl", ".json", ".gz", ".parquet"):
            assert detect_format(path) != "weave", path


def test_every_fixture_shape_is_detected() -> None:
    for name in ("calls.jsonl", "calls_dataframe.jsonl", "calls_dicts.json"):
        assert detect_format(FIXTURES / "weave" / name) == "weave"


def test_near_miss_names_what_is_missing(tmp_path: Path) -> None:
    call = tool_call()
    del call["trace_id"]
    path = write_jsonl(tmp_path / "calls.jsonl", [call])
    with pytest.raises(UnknownFormatError, match=r"looks like a weave export, but .*no trace_id"):
        detect_format(path)
    call = tool_call()
    del call["op_name"]
    path = write_jsonl(tmp_path / "calls2.jsonl", [call])
    with pytest.raises(UnknownFormatError, match=r"trace_id, inputs and output and no op_name"):
        detect_format(path)


# -- a tool call ----------------------------------------------------------------------


def test_op_name_of_a_ref_and_of_a_plain_name() -> None:
    assert op_name_of(OP.format("get_order")) == "get_order"
    assert op_name_of("weave:///acme/support/op/Inventory.lookup:v3") == "Inventory.lookup"
    assert op_name_of("simple_trace") == "simple_trace"


def test_tool_call_is_a_call_and_other_calls_are_not() -> None:
    llm = {**tool_call("x2", "choose"), "attributes": {"weave": {"kind": "llm"}}}
    plain = {**tool_call("x3", "helper"), "attributes": {"weave": {}}}
    sink = read(root_call(task_id="t-1"), tool_call(), llm, plain)
    [call] = sink.calls
    assert call["tool"] == "get_order" and call["arguments"] == {"order_id": "A-1"}
    assert call["result"] == {"status": "shipped"} and call["status"] == "ok"
    assert call["run_id"] == TRACE and call["task_id"] == "t-1"
    # Weave keeps no model tool call id: the Weave call id names the call, inferred
    assert call["call_id"] == "0195d4a1-0000-7000-8000-000000000002"
    assert call["id_pairing"] == "inferred" and call["duration_ms"] == pytest.approx(150)


def test_method_self_is_no_argument_and_text_output_is_parsed() -> None:
    [call] = read(tool_call(inputs={"self": "<Inventory object>", "sku": "S-1"},
                            output='{"in_stock": 4}')).calls  # fmt: skip
    assert call["arguments"] == {"sku": "S-1"}
    assert call["result"] == {"in_stock": 4} and call["result_text"] == '{"in_stock": 4}'
    [call] = read(tool_call(output="no stock")).calls
    assert call["result"] == "no stock"


def test_tool_call_id_from_attributes_pairs_exactly() -> None:
    attributes = {"weave": {"kind": "tool"}, "tool_call_id": "call_9"}
    [call] = read(tool_call(attributes=attributes)).calls
    assert call["call_id"] == "call_9" and call["id_pairing"] == "exact"


def test_exceptions_of_the_sdk_and_as_text() -> None:
    sdk = json.dumps({"type": "ValueError", "message": "no such order: A-404",
                      "traceback": [{"filename": "tools.py", "line_number": 3}]})  # fmt: skip
    [call] = read(tool_call(exception=sdk, output=None)).calls
    assert (call["status"], call["error_type"], call["error_message"]) == (
        "tool_error", "ValueError", "no such order: A-404")  # fmt: skip
    assert call["result"] is None
    timeout = json.dumps({"type": "TimeoutError", "message": "slow"})
    [call] = read(tool_call(exception=timeout, output=None)).calls
    assert (call["status"], call["error_type"]) == ("timeout", "TimeoutError")
    [call] = read(tool_call(exception="KeyError: 'A-9'", output=None)).calls
    assert (call["status"], call["error_type"], call["error_message"]) == (
        "tool_error", "KeyError", "'A-9'")  # fmt: skip
    [call] = read(tool_call(exception="something broke", output=None)).calls
    assert (call["status"], call["error_type"], call["error_message"]) == (
        "tool_error", None, "something broke")  # fmt: skip
    payload = {"error": {"code": "not_found", "message": "no order"}}
    [call] = read(tool_call(exception=json.dumps({"type": "not_found", "message": "no order"}),
                            output=payload)).calls  # fmt: skip
    assert call["status"] == "tool_error" and call["result"] == payload
    # the exception, not the payload's error shape, says what went wrong
    assert (call["error_type"], call["error_message"]) == ("not_found", "no order")


def test_inputs_saved_as_cut_json_text_are_kept_with_the_reason() -> None:
    [call] = read(tool_call(inputs='{"order_id": "A-1"')).calls
    assert call["arguments"] is None and call["arguments_raw"] == '{"order_id": "A-1"'
    assert "not valid JSON" in call["arguments_error"]


def test_running_call_is_a_missing_result() -> None:
    [call] = read(tool_call(ended_at=None, output=None,
                            summary={"weave": {"status": "running"}})).calls  # fmt: skip
    assert call["status"] == "missing" and call["result_call_id"] is None
    [call] = read(tool_call(output=None)).calls  # ended, returned None: a result of None
    assert call["status"] == "ok" and call["result"] is None


def test_epoch_millisecond_times_of_a_dataframe() -> None:
    [call] = read(tool_call(started_at=1748772000000, ended_at=1748772000400)).calls
    assert call["started_at"].isoformat() == "2025-06-01T10:00:00"
    assert call["duration_ms"] == pytest.approx(400)


def test_openai_agents_function_span() -> None:
    """What the OpenAI Agents SDK integration logs for a function span."""
    span = tool_call(
        op_name=OP.format("openai_agent_function"), display_name="get_weather",
        inputs={"name": "get_weather"},
        attributes={"weave": {}, "type": "function", "agent_span_id": "span_1"},
        output={"output": "sunny", "metrics": {}, "metadata": {}, "error": None},
    )  # fmt: skip
    failed = {**span, "id": "x9", "output": {"output": None, "metrics": {}, "metadata": {},
              "error": {"message": "Error running tool", "data": {}}}}  # fmt: skip
    first, second = read(span, failed).calls
    assert (first["tool"], first["result"], first["status"]) == ("get_weather", "sunny", "ok")
    assert first["arguments"] is None
    assert (second["status"], second["error_message"]) == ("tool_error", "Error running tool")


def test_langchain_and_claude_agent_sdk_integrations() -> None:
    message = {"content": "4 left", "type": "tool", "tool_call_id": "call_3", "status": "success"}
    lc = tool_call(op_name=OP.format("langchain.Tool.lookup"),
                   attributes={"weave": {"kind": "tool"}, "lc_name": "lookup"},
                   output={"output": message})  # fmt: skip
    claude = tool_call("c2", op_name=OP.format("claude_agent_sdk.tool_use.Read"),
                       attributes={"kind": "tool"}, output={"content": "text"})  # fmt: skip
    first, second = read(lc, claude).calls
    assert (first["tool"], first["result"], first["call_id"]) == ("lookup", "4 left", "call_3")
    assert second["tool"] == "Read"


# -- the run and its task -------------------------------------------------------------


def test_task_from_attributes_then_thread() -> None:
    sink = read(root_call(**{"tracemine.family": "commerce.refund", "reward": 1, "trial": 2,
                             "task_id": "t"}), tool_call())  # fmt: skip
    [run] = sink.runs
    assert (run["family"], run["reward"], run["trial"], run["task_id"]) == (
        "commerce.refund", 1.0, 2, "t")  # fmt: skip
    assert run["metadata"]["task_id_from"] == "attributes"
    nested = root_call(metadata={"task_id": "t-nested"})
    assert read(nested, tool_call()).calls[0]["task_id"] == "t-nested"
    sink = read({**root_call(), "thread_id": "th-1"}, tool_call(thread_id="th-1"))
    assert sink.calls[0]["task_id"] == "th-1" and sink.calls[0]["session_id"] == "th-1"
    assert sink.runs[0]["metadata"]["task_id_from"] == "thread_id"
    sink = read(tool_call())
    assert sink.calls[0]["task_id"] is None and sink.runs[0]["run_id"] == TRACE


def test_a_page_of_the_calls_query_and_a_root_after_its_child() -> None:
    [call] = read({"calls": [tool_call(), root_call(task_id="t-3")]}).calls
    assert call["task_id"] == "t-3" and call["source_pointer"] == "/calls/0"


def test_quarantine_reasons() -> None:
    sink = read(tool_call("n", op_name=""), {"id": "x", "note": "no call"}, tool_call(),
                tool_call(), tool_call("y", inputs=[1, 2]))  # fmt: skip
    reasons = [q[2] for q in sink.quarantined]
    assert "tool call without an op name" in reasons[0]
    assert "expected a Weave call" in reasons[1]
    assert "repeats a call read before" in reasons[2]
    assert "inputs are not an object" in reasons[3]
    assert len(sink.calls) == 1


# -- files, the store, parquet, round trip --------------------------------------------


def test_fixture_store_counts_every_record(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    report = ingest([FIXTURES / "weave" / "calls.jsonl"], db)
    with duckdb.connect(str(db), read_only=True) as con:
        calls = con.execute("SELECT tool, status FROM calls ORDER BY run_id, seq").fetchall()
        quarantined = con.execute("SELECT count(*) FROM quarantine").fetchone()
        tasks = sorted(r[0] for r in con.execute("SELECT task_id FROM runs").fetchall())
    assert len(calls) == 6 and quarantined == (3,)
    assert ("reserve_stock", "missing") in calls and ("get_order", "tool_error") in calls
    read_, stored = report.total("units_read"), report.total("units_stored")
    assert read_ == stored + report.total("units_quarantined") and read_ == 12
    assert tasks == ["refund-1", "thread-9", "thread-9"]


def test_the_three_saved_shapes_give_the_same_call() -> None:
    found = [read_traces(FIXTURES / "weave" / name).calls
             for name in ("calls_dataframe.jsonl", "calls_dicts.json")]  # fmt: skip
    (a,), (b,) = found
    for field in ("tool", "arguments", "result", "status", "task_id", "started_at", "run_id"):
        assert a[field] == b[field], field


def test_a_dataframe_saved_as_parquet(tmp_path: Path) -> None:
    import polars as pl

    rows = [tool_call(f"c{i}", inputs=json.dumps({"order_id": f"A-{i}"}),
                      output=json.dumps({"total": i}), attributes=json.dumps(
                          {"weave": {"kind": "tool"}, "task_id": "t-p"}),
                      started_at=f"2025-06-01T10:00:0{i}Z", summary=None)
            for i in range(3)]  # fmt: skip
    jsonl = write_jsonl(tmp_path / "calls.jsonl", rows)
    parquet = tmp_path / "calls.parquet"
    pl.DataFrame(rows).write_parquet(parquet)
    assert detect_format(parquet) == "weave"
    key = [(c["tool"], c["arguments"], c["result"], c["task_id"], c["seq"])
           for c in read_traces(parquet).calls]  # fmt: skip
    assert key == [(c["tool"], c["arguments"], c["result"], c["task_id"], c["seq"])
                   for c in read_traces(jsonl).calls]  # fmt: skip
    assert key[2] == ("get_order", {"order_id": "A-2"}, {"total": 2}, "t-p", 2)


def test_round_trip_gives_the_langsmith_calls(tmp_path: Path) -> None:
    runs = simulate("all", tasks=30, seed=5, trials=2)  # one tool error among them
    path = tmp_path / "x.weave.jsonl"
    path.write_text("".join(dump_line(u) + "\n" for run in runs for u in write_run(run)))
    assert detect_format(path) == "weave"
    ours = read_traces(path)
    theirs = read_traces(write_traces(runs, tmp_path / "x.langsmith.jsonl", "langsmith"))

    def keyed(traces: Any) -> dict[tuple[Any, ...], dict[str, Any]]:
        task = {r["run_id"]: (r["task_id"], r["trial"]) for r in traces.runs}
        return {(task[c["run_id"]], c["seq"]): c for c in traces.calls}

    a, b = keyed(theirs), keyed(ours)
    assert a.keys() == b.keys() and len(a) > 20
    assert any(c["status"] == "tool_error" for c in a.values())
    for key, call in a.items():
        other = b[key]
        for field in ("tool", "arguments", "result", "status", "call_id", "error_message",
                      "task_id", "started_at"):  # fmt: skip
            assert call[field] == other[field], (key, field)
    facts = ("task_id", "trial", "family", "reward", "run_outcome")
    assert sorted(tuple(r[k] for k in facts) for r in theirs.runs) == sorted(
        tuple(r[k] for k in facts) for r in ours.runs
    )


def test_a_json_array_on_one_line_or_many_reads_as_the_lines_do(tmp_path: Path) -> None:
    lines = (FIXTURES / "weave" / "calls.jsonl").read_text(encoding="utf-8").splitlines()
    units = [json.loads(line) for line in lines]
    one, many = tmp_path / "one.json", tmp_path / "many.json"
    one.write_text(json.dumps(units) + "\n", encoding="utf-8")
    many.write_text(json.dumps(units, indent=2), encoding="utf-8")

    def calls(path: Path) -> list[tuple[Any, ...]]:
        assert detect_format(path) == "weave"
        return [(c["run_id"], c["tool"], c["call_id"], c["status"], json.dumps(c["result"]))
                for c in read_traces(path).calls]  # fmt: skip

    expected = calls(FIXTURES / "weave" / "calls.jsonl")
    assert len(expected) == 6 and calls(one) == expected and calls(many) == expected
