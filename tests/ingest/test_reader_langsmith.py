"""The LangSmith runs reader: detection and near misses, what a tool run becomes (its
arguments, its result or ToolMessage, its error), the run and its task, runs traced live
by ``langchain-core``, the store's accounting, and a round trip through the simulator's
writer."""

from __future__ import annotations

import contextlib
import uuid
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tracemine.errors import UnknownFormatError
from tracemine.ingest import ingest, read_traces
from tracemine.ingest.detect import detect_format
from tracemine.ingest.readers import READERS
from tracemine.ingest.readers.base import Sink
from tracemine.ingest.readers.langsmith import LangSmithReader
from tracemine.simulate import simulate, write_traces

from helpers import read_units, write_jsonl

FIXTURES = Path(__file__).parent.parent / "fixtures" / "ingest"
TRACE = "0195d4a1-0000-7000-8000-000000000001"


def tool_run(
    run_id: str = "0195d4a1-0000-7000-8000-000000000002", name: str | None = "get_order", **fields: Any
) -> dict[str, Any]:  # fmt: skip
    run: dict[str, Any] = {
        "id": run_id,
        "name": name,
        "run_type": "tool",
        "start_time": "2025-06-01T10:00:00.100000Z",
        "end_time": "2025-06-01T10:00:00.250000Z",
        "extra": {"metadata": {}},
        "error": None,
        "inputs": {"order_id": "A-1"},
        "outputs": {"output": {"status": "shipped"}},
        "parent_run_id": TRACE,
        "trace_id": TRACE,
        "reference_example_id": None,
    }
    run.update(fields)
    return run


def root_run(run_id: str = TRACE, **metadata: Any) -> dict[str, Any]:
    return {
        "id": run_id, "name": "agent", "run_type": "chain", "inputs": {"input": "hi"},
        "outputs": {"output": "done"}, "error": None, "parent_run_id": None,
        "trace_id": run_id, "extra": {"metadata": metadata}, "reference_example_id": None,
        "start_time": "2025-06-01T10:00:00Z", "end_time": "2025-06-01T10:00:01Z",
    }  # fmt: skip


def read(*units: Any) -> Sink:
    return read_units(LangSmithReader("exports/runs.jsonl"), *units)


# -- detection ------------------------------------------------------------------------


def test_only_langsmith_takes_a_run_and_it_takes_no_other_fixture() -> None:
    for unit in (tool_run(), root_run(), {"runs": [tool_run()], "cursors": {}}):
        takers = [name for name, cls in READERS.items() if cls.sniff(unit)]
        assert takers == ["langsmith"], unit
    for path in FIXTURES.rglob("*"):
        if path.parent.name in ("langsmith",) or not path.is_file():
            continue
        if path.suffix in (".jsonl", ".json", ".gz", ".parquet") and ".golden" not in path.name:
            assert detect_format(path) != "langsmith", path


def test_the_issue_s_export_is_read(tmp_path: Path) -> None:
    """A runs export whose first record has end_time, error, extra, id, inputs, name,
    outputs, parent_run_id … was refused; it is a LangSmith export."""
    path = write_jsonl(tmp_path / "runs.jsonl", [dict(sorted(tool_run().items()))])
    assert detect_format(path) == "langsmith"


def test_near_miss_names_what_is_missing(tmp_path: Path) -> None:
    run = tool_run()
    del run["run_type"]
    path = write_jsonl(tmp_path / "runs.jsonl", [run])
    with pytest.raises(
        UnknownFormatError, match=r"looks like a langsmith export, but .*no run_type"
    ):
        detect_format(path)
    run = tool_run()
    del run["inputs"], run["outputs"]
    path = write_jsonl(tmp_path / "runs2.jsonl", [run])
    with pytest.raises(UnknownFormatError, match=r"run_type and no inputs or outputs"):
        detect_format(path)


# -- a tool run -----------------------------------------------------------------------


def test_tool_run_is_a_call_and_other_runs_are_not() -> None:
    sink = read(root_run(task_id="t-1"), tool_run(), {**tool_run("x2"), "run_type": "llm"})
    [call] = sink.calls
    assert call["tool"] == "get_order" and call["arguments"] == {"order_id": "A-1"}
    assert call["result"] == {"status": "shipped"} and call["status"] == "ok"
    assert call["run_id"] == TRACE and call["task_id"] == "t-1"
    # no tool_call_id: the LangSmith run id names the call, paired as inferred
    assert call["call_id"] == "0195d4a1-0000-7000-8000-000000000002"
    assert call["id_pairing"] == "inferred" and call["duration_ms"] == pytest.approx(150)


def test_tool_message_output_gives_content_and_call_id() -> None:
    message = {"content": '{"total": 12.5}', "type": "tool", "tool_call_id": "call_9",
               "status": "success", "name": "get_order"}  # fmt: skip
    [call] = read(tool_run(outputs={"output": message})).calls
    assert call["result"] == {"total": 12.5} and call["result_text"] == '{"total": 12.5}'
    assert call["call_id"] == "call_9" and call["id_pairing"] == "exact"
    constructor = {"lc": 1, "type": "constructor",
                   "id": ["langchain", "schema", "messages", "ToolMessage"],
                   "kwargs": {"content": "no stock", "tool_call_id": "call_3", "status": "success"}}  # fmt: skip
    [call] = read(tool_run(outputs={"output": constructor})).calls
    assert call["result"] == "no stock" and call["call_id"] == "call_3"


def test_traceable_tool_output_object_is_the_result() -> None:
    [call] = read(tool_run(outputs={"order_id": "A-1", "total": 3})).calls
    assert call["result"] == {"order_id": "A-1", "total": 3}


def test_errors() -> None:
    trace = ("ValueError('no such order: A-404')Traceback (most recent call last):\n\n\n"
             '  File "tools.py", line 3, in run\n\n\nValueError: no such order: A-404')  # fmt: skip
    [call] = read(tool_run(error=trace, outputs={})).calls
    assert (call["status"], call["error_type"], call["error_message"]) == (
        "tool_error", "ValueError", "no such order: A-404")  # fmt: skip
    [call] = read(tool_run(error="TimeoutError('slow')", outputs={})).calls
    assert (call["status"], call["error_type"]) == ("timeout", "TimeoutError")
    [call] = read(tool_run(error="something broke", outputs={})).calls
    assert (call["status"], call["error_type"], call["error_message"]) == (
        "tool_error", None, "something broke")  # fmt: skip
    handled = {"content": '{"error": {"message": "amount over total"}}', "type": "tool",
               "tool_call_id": "c1", "status": "error"}  # fmt: skip
    [call] = read(tool_run(outputs={"output": handled})).calls
    assert call["status"] == "tool_error" and call["error_message"] == "amount over total"
    assert call["result"] == {"error": {"message": "amount over total"}}


def test_open_run_is_a_missing_result() -> None:
    [call] = read(tool_run(outputs=None, end_time=None, status="pending")).calls
    assert call["status"] == "missing" and call["result_call_id"] is None


def test_epoch_millisecond_times_of_the_js_sdk() -> None:
    [call] = read(tool_run(start_time=1748772000000, end_time=1748772000400)).calls
    assert call["started_at"].isoformat() == "2025-06-01T10:00:00"
    assert call["duration_ms"] == pytest.approx(400)


# -- the run and its task -------------------------------------------------------------


def test_task_from_metadata_then_example_then_thread() -> None:
    example = str(uuid.uuid4())
    sink = read({**root_run(), "reference_example_id": example}, tool_run())
    assert sink.calls[0]["task_id"] == example
    assert sink.runs[0]["metadata"]["task_id_from"] == "reference_example_id"
    sink = read(root_run(thread_id="th-1"), tool_run())
    assert sink.calls[0]["task_id"] == "th-1" and sink.calls[0]["session_id"] == "th-1"
    assert sink.runs[0]["metadata"]["task_id_from"] == "thread"
    sink = read(root_run(**{"tracemine.family": "commerce.refund", "reward": 1, "trial": 2,
                            "task_id": "t"}), tool_run())  # fmt: skip
    [run] = sink.runs
    assert (run["family"], run["reward"], run["trial"], run["task_id"]) == (
        "commerce.refund",
        1.0,
        2,
        "t",
    )
    sink = read(tool_run())
    assert sink.calls[0]["task_id"] is None and sink.runs[0]["run_id"] == TRACE


def test_trace_from_dotted_order_or_parents_when_no_trace_id() -> None:
    child = tool_run(trace_id=None, dotted_order=f"20250601T100000000000Z{TRACE}.20250601T100000100000Zabc")  # fmt: skip
    assert read(child).calls[0]["run_id"] == TRACE
    root = {**root_run(task_id="t-2"), "trace_id": None}
    orphan = tool_run(trace_id=None)
    [call] = read(orphan, root).calls  # the root comes after its child
    assert call["run_id"] == TRACE and call["task_id"] == "t-2"


def test_nested_child_runs_and_a_runs_page() -> None:
    root = {**root_run(task_id="t-3"), "child_runs": [tool_run(parent_run_id=None)]}
    [call] = read({"runs": [root], "cursors": {"next": None}}).calls
    assert call["run_id"] == TRACE and call["task_id"] == "t-3"
    assert call["source_pointer"] == "/runs/0/child_runs/0"


def test_quarantine_reasons() -> None:
    sink = read(tool_run("n", name=None), {"id": "x", "note": "no run"}, tool_run(), tool_run(),
                tool_run("y", inputs=[1, 2]))  # fmt: skip
    reasons = [q[2] for q in sink.quarantined]
    assert "tool run without a name" in reasons[0]
    assert "expected a LangSmith run" in reasons[1]
    assert "repeats a run read before" in reasons[2]
    assert "inputs are not an object" in reasons[3]
    assert len(sink.calls) == 1


# -- files, the store, real runs ------------------------------------------------------


def test_fixture_store_counts_every_record(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    report = ingest([FIXTURES / "langsmith" / "runs.jsonl"], db)
    with duckdb.connect(str(db), read_only=True) as con:
        calls = con.execute("SELECT count(*) FROM calls").fetchone()
        quarantined = con.execute("SELECT count(*) FROM quarantine").fetchone()
        tasks = dict(con.execute("SELECT run_id, task_id FROM runs").fetchall())
    assert calls == (5,) and quarantined == (3,)
    read_, stored = report.total("units_read"), report.total("units_stored")
    assert read_ == stored + report.total("units_quarantined") and read_ == 10
    assert sorted(t for t in tasks.values() if t) and "refund-1" in tasks.values()


def test_calls_are_ordered_by_time_not_by_row(tmp_path: Path) -> None:
    later = tool_run("b", name="refund", start_time="2025-06-01T10:00:02Z")
    earlier = tool_run("a", name="get_order", start_time="2025-06-01T10:00:01Z")
    db = tmp_path / "t.duckdb"
    ingest([write_jsonl(tmp_path / "runs.jsonl", [later, earlier])], db)
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT tool FROM calls ORDER BY seq").fetchall()
    assert [r[0] for r in rows] == ["get_order", "refund"]


def test_runs_traced_live_by_langchain_core(tmp_path: Path) -> None:
    from langchain_core.runnables import RunnableLambda
    from langchain_core.tools import tool
    from langchain_core.tracers.base import BaseTracer

    class Collect(BaseTracer):
        def __init__(self) -> None:
            super().__init__()
            self.records: list[dict[str, Any]] = []

        def _persist_run(self, run: Any) -> None:
            def walk(r: Any) -> None:
                record = r.model_dump(mode="json")
                record.pop("child_runs", None)
                self.records.append(record)
                for child in r.child_runs:
                    walk(child)

            walk(run)

    @tool
    def lookup(sku: str) -> dict[str, Any]:
        """Stock of a product."""
        if sku == "none":
            raise KeyError(sku)
        return {"sku": sku, "in_stock": 4}

    def agent(sku: str) -> str:
        lookup.invoke({"type": "tool_call", "name": "lookup", "id": "call_7", "args": {"sku": sku}})
        with contextlib.suppress(KeyError):
            lookup.invoke({"sku": "none"})
        return "ok"

    tracer = Collect()
    RunnableLambda(agent).with_config(metadata={"task_id": "stock-1"}).invoke(
        "S-1", config={"callbacks": [tracer]}
    )
    path = write_jsonl(tmp_path / "runs.jsonl", tracer.records)
    assert detect_format(path) == "langsmith"
    traces = read_traces(path)
    first, second = traces.calls
    assert (first["tool"], first["arguments"], first["result"]) == (
        "lookup", {"sku": "S-1"}, {"sku": "S-1", "in_stock": 4})  # fmt: skip
    assert first["call_id"] == "call_7" and first["status"] == "ok"
    assert (second["status"], second["error_type"]) == ("tool_error", "KeyError")
    assert [r["task_id"] for r in traces.runs] == ["stock-1"]


def test_round_trip_gives_the_flat_calls(tmp_path: Path) -> None:
    runs = simulate("all", tasks=9, seed=5, trials=2)
    flat = read_traces(write_traces(runs, tmp_path / "x.flat.jsonl", "flat"))
    ours = read_traces(write_traces(runs, tmp_path / "x.langsmith.jsonl", "langsmith"))

    def keyed(traces: Any) -> dict[tuple[Any, ...], dict[str, Any]]:
        task = {r["run_id"]: (r["task_id"], r["trial"]) for r in traces.runs}
        return {(task[c["run_id"]], c["started_at"], c["tool"]): c for c in traces.calls}

    a, b = keyed(flat), keyed(ours)
    assert a.keys() == b.keys() and len(a) > 20
    for key, call in a.items():
        other = b[key]
        for field in ("arguments", "result", "status", "call_id", "error_message"):
            assert call[field] == other[field], (key, field)
    assert sorted((r["task_id"], r["trial"], r["family"], r["reward"], r["run_outcome"])
                  for r in flat.runs) == sorted(
        (r["task_id"], r["trial"], r["family"], r["reward"], r["run_outcome"])
        for r in ours.runs)  # fmt: skip
