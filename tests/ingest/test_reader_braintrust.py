"""The Braintrust spans reader: detection and near misses, what a tool span becomes (its
arguments, its result, its error, no result), the run and its task, the versions of a row
the fetch API pages over, the store's accounting, parquet and arrays, and a round trip
through the simulator's writer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tracemine.errors import UnknownFormatError
from tracemine.faults import FaultClass
from tracemine.faults.inject import inject
from tracemine.ingest import ingest, read_traces
from tracemine.ingest.detect import detect_format
from tracemine.ingest.readers import READERS
from tracemine.ingest.readers.base import Sink
from tracemine.ingest.readers.braintrust import BraintrustReader
from tracemine.ingest.source import BadUnit, iter_units
from tracemine.simulate import simulate, write_traces
from tracemine.simulate.formats import dump_line
from tracemine.simulate.formats.braintrust import write_run

from helpers import read_units, write_jsonl

FIXTURES = Path(__file__).parent.parent / "fixtures" / "ingest"
TRACE = "0cddbf5b008395e55653f4cb4cf4b86c"
ROOT = "d0e61988f54ac1a0"


def tool_span(span_id: str = "8ab6da466c4258dc", name: str | None = "get_order",
              **fields: Any) -> dict[str, Any]:  # fmt: skip
    span: dict[str, Any] = {
        "id": f"row-{span_id}",
        "_xact_id": "1000195000000000200",
        "created": "2025-06-01T10:00:00.100000+00:00",
        "project_id": "p-1",
        "log_id": "g",
        "span_id": span_id,
        "root_span_id": TRACE,
        "span_parents": [ROOT],
        "span_attributes": {"name": name, "type": "tool"},
        "input": {"order_id": "A-1"},
        "output": {"status": "shipped"},
        "metadata": {},
        "metrics": {"start": 1748772000.1, "end": 1748772000.25},
    }
    span.update(fields)
    return span


def root_span(span_id: str = ROOT, kind: str = "task", **metadata: Any) -> dict[str, Any]:
    return {
        "id": f"row-{span_id}", "_xact_id": "1000195000000000100", "span_id": span_id,
        "root_span_id": TRACE, "span_parents": None,
        "span_attributes": {"name": "agent", "type": kind}, "input": "Refund A-1",
        "output": "done", "metadata": metadata,
        "metrics": {"start": 1748772000.0, "end": 1748772001.0},
    }  # fmt: skip


def read(*units: Any) -> Sink:
    return read_units(BraintrustReader("exports/logs.jsonl"), *units)


# -- detection ------------------------------------------------------------------------


def test_only_braintrust_takes_a_span_and_it_takes_no_other_fixture() -> None:
    pages = ({"events": [tool_span()], "cursor": "c1"},
             {"data": [tool_span()], "schema": {}, "cursor": None})  # fmt: skip
    for unit in (tool_span(), root_span(), *pages):
        takers = [name for name, cls in READERS.items() if cls.sniff(unit)]
        assert takers == ["braintrust"], unit
    for path in FIXTURES.rglob("*"):
        if path.parent.name == "braintrust" or not path.is_file():
            continue
        if path.suffix in (".jsonl", ".json", ".gz", ".parquet") and ".golden" not in path.name:
            assert detect_format(path) != "braintrust", path
            first = next(u for _, u in iter_units(path) if not isinstance(u, BadUnit))
            assert BraintrustReader.near_miss(first) is None, path


def test_near_miss_names_what_is_missing(tmp_path: Path) -> None:
    span = tool_span()
    del span["span_id"], span["root_span_id"]
    path = write_jsonl(tmp_path / "a.jsonl", [span])
    with pytest.raises(
        UnknownFormatError,
        match=r"looks like a braintrust export, but its first record has span_attributes "
        r"and no span_id or root_span_id",
    ):
        detect_format(path)
    span = tool_span()
    del span["span_attributes"], span["span_parents"]
    path = write_jsonl(tmp_path / "b.jsonl", [span])
    with pytest.raises(UnknownFormatError, match=r"span_id and root_span_id and no span_attr"):
        detect_format(path)
    span = tool_span()
    del span["root_span_id"]
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"events": [span], "cursor": None}))
    with pytest.raises(UnknownFormatError, match=r"but the first of its events has span_attr"):
        detect_format(path)


# -- a tool span ----------------------------------------------------------------------


def test_tool_span_is_a_call_and_other_spans_are_not() -> None:
    llm = {**tool_span("aa01"), "span_attributes": {"name": "chat", "type": "llm"}}
    score = {**tool_span("aa02"), "span_attributes": {"name": "exact", "type": "score"}}
    sink = read(root_span(task_id="t-1"), tool_span(), llm, score)
    [call] = sink.calls
    assert call["tool"] == "get_order" and call["arguments"] == {"order_id": "A-1"}
    assert call["arguments_raw"] == '{"order_id":"A-1"}'
    assert call["result"] == {"status": "shipped"} and call["status"] == "ok"
    assert call["run_id"] == TRACE and call["task_id"] == "t-1"
    # no call id in its metadata: the span id names the call, paired as inferred
    assert (call["call_id"], call["id_pairing"]) == ("8ab6da466c4258dc", "inferred")
    assert call["duration_ms"] == pytest.approx(150)
    assert call["started_at"].isoformat() == "2025-06-01T10:00:00.100000"
    assert call["source_format"] == "braintrust" and call["source_line"] == 2


def test_call_id_from_metadata_and_text_arguments_and_results() -> None:
    for key in ("tool_call_id", "gen_ai.tool.call.id", "call_id"):
        [call] = read(tool_span(metadata={key: "call_9"})).calls
        assert (call["call_id"], call["result_call_id"], call["id_pairing"]) == (
            "call_9", "call_9", "exact")  # fmt: skip
    # the OpenAI Agents integration logs a function's arguments and result as text
    text = tool_span(input='{"query": "refunds"}', output='{"hits": 2}')
    [call] = read(text).calls
    assert call["arguments"] == {"query": "refunds"}
    assert call["arguments_raw"] == '{"query": "refunds"}'
    assert call["result"] == {"hits": 2} and call["result_text"] == '{"hits": 2}'
    [call] = read(tool_span(input='{"query": "refu')).calls
    assert call["arguments"] is None and "not valid JSON" in call["arguments_error"]
    assert call["arguments_raw"] == '{"query": "refu'


def test_tool_message_output_of_the_langchain_integration() -> None:
    message = {"content": '{"total": 12.5}', "type": "tool", "tool_call_id": "call_3",
               "status": "success", "name": "get_order"}  # fmt: skip
    [call] = read(tool_span(output=message)).calls
    assert call["result"] == {"total": 12.5} and call["call_id"] == "call_3"
    handled = {**message, "content": '{"error": {"message": "no stock"}}', "status": "error"}
    [call] = read(tool_span(output=handled)).calls
    assert call["status"] == "tool_error" and call["error_message"] == "no stock"


def test_errors() -> None:
    trace = ('Traceback (most recent call last):\n  File "tools.py", line 3, in get_order\n'
             '    raise ValueError(f"no such order: {order_id}")\n'
             "ValueError: no such order: A-404\n")  # fmt: skip
    [call] = read(tool_span(error=trace, output=None)).calls
    assert (call["status"], call["error_type"], call["error_message"]) == (
        "tool_error", "ValueError", "no such order: A-404")  # fmt: skip
    assert call["result"] is None and call["result_call_id"] == call["call_id"]
    chained = (trace + "\nDuring handling of the above exception, another exception "
               "occurred:\n\n" + trace.replace("ValueError: no such order: A-404",
                                               "TimeoutError: upstream did not answer"))  # fmt: skip
    [call] = read(tool_span(error=chained, output=None)).calls
    assert (call["status"], call["error_type"]) == ("timeout", "TimeoutError")
    js = "Error: connection reset\n    at lookup (tools.js:3:9)\n    at run (agent.js:1:1)"
    [call] = read(tool_span(error=js, output=None)).calls
    assert (call["error_type"], call["error_message"]) == ("Error", "connection reset")
    [call] = read(tool_span(error="something broke", output=None)).calls
    assert (call["status"], call["error_type"], call["error_message"]) == (
        "tool_error", None, "something broke")  # fmt: skip
    [call] = read(tool_span(error={"name": "CancelledError", "message": "stop"})).calls
    assert (call["status"], call["error_type"], call["error_message"]) == (
        "cancelled", "CancelledError", "stop")  # fmt: skip
    # an error payload it answered with, and the error's text beside it: both kept
    payload = {"error": {"code": "over_total", "message": "amount over total"}}
    [call] = read(tool_span(output=payload, error="amount over total")).calls
    assert call["status"] == "tool_error" and call["result"] == payload
    assert call["error_message"] == "amount over total"
    # a payload alone is an error by the error rule, as everywhere
    [call] = read(tool_span(output=payload)).calls
    assert (call["status"], call["error_type"]) == ("tool_error", "error_payload")


def test_open_span_is_a_missing_result_and_an_ended_one_returned_nothing() -> None:
    open_span = tool_span(output=None, metrics={"start": 1748772000.1})
    del open_span["output"]
    [call] = read(open_span).calls
    assert call["status"] == "missing" and call["result_call_id"] is None
    assert call["ended_at"] is None and call["id_pairing"] == "inferred"
    [call] = read(tool_span(output=None)).calls
    assert call["status"] == "ok" and call["result"] is None


# -- the run and its task -------------------------------------------------------------


def test_task_from_metadata_then_origin_then_eval_input() -> None:
    sink = read(root_span(**{"tracemine.family": "commerce.refund", "reward": 1, "trial": 2,
                             "task_id": "t", "run_outcome": "success"}), tool_span())  # fmt: skip
    [run] = sink.runs
    assert (run["task_id"], run["trial"], run["family"], run["reward"], run["run_outcome"]) == (
        "t", 2, "commerce.refund", 1.0, "success")  # fmt: skip
    assert run["metadata"]["task_id_from"] == "metadata"
    assert run["metadata"]["run_id_source"] == "root_span_id"
    # the tool span's own task id is the call's
    sink = read(root_span(task_id="t"), tool_span(metadata={"task_id": "t-own"}))
    assert sink.calls[0]["task_id"] == "t-own" and sink.runs[0]["task_id"] == "t"
    origin = {"object_type": "dataset", "object_id": "ds-1", "id": "record-7", "_xact_id": "9"}
    sink = read({**root_span(kind="eval"), "origin": origin, "scores": {"exact": 1}}, tool_span())
    [run] = sink.runs
    assert (run["task_id"], run["metadata"]["task_id_from"]) == ("record-7", "origin")
    assert run["metadata"]["origin"]["object_id"] == "ds-1"
    assert run["metadata"]["scores"] == {"exact": 1}
    # an experiment's eval root: its input is the test case
    first = read({**root_span(kind="eval"), "input": {"q": 1}}, tool_span()).runs[0]
    again = read({**root_span(kind="eval"), "input": {"q": 1}}, tool_span()).runs[0]
    other = read({**root_span(kind="eval"), "input": {"q": 2}}, tool_span()).runs[0]
    assert first["task_id"].startswith("input:") and first["task_id"] == again["task_id"]
    assert other["task_id"] != first["task_id"] and first["metadata"]["task_id_from"] == "input"
    # a logged task root's input is the user's, no task: left without one
    sink = read(root_span(), tool_span())
    assert sink.calls[0]["task_id"] is None and sink.runs[0]["task_id"] is None


def test_root_may_come_after_its_spans_and_traces_stay_apart() -> None:
    other = {**tool_span("bb01"), "root_span_id": "f" * 32, "span_parents": ["c" * 16]}
    sink = read(tool_span(), other, root_span(task_id="t-2"))
    by_run = {c["run_id"]: c["task_id"] for c in sink.calls}
    assert by_run == {TRACE: "t-2", "f" * 32: None}
    assert len(sink.runs) == 2


def test_pages_of_the_fetch_api_and_of_btql() -> None:
    sink = read({"events": [root_span(task_id="t-3"), tool_span()], "cursor": "abc"})
    [call] = sink.calls
    assert call["task_id"] == "t-3" and call["source_pointer"] == "/events/1"
    sink = read({"data": [tool_span(), {"span_id": 3}], "schema": {}, "cursor": None})
    assert len(sink.calls) == 1 and sink.calls[0]["source_pointer"] == "/data/0"
    assert sink.quarantined[0][:2] == (1, "/data/1")
    assert "not a Braintrust span" in sink.quarantined[0][2]


def test_the_latest_version_of_a_row_is_read() -> None:
    pending = tool_span(_xact_id="1000195000000000150", metrics={"start": 1748772000.1})
    del pending["output"]
    done = tool_span()
    for units in ([pending, done], [done, pending]):  # pages come newest first, or not
        sink = read(*units)
        [call] = sink.calls
        assert call["status"] == "ok" and call["result"] == {"status": "shipped"}
        [(line, _, reason, _)] = sink.quarantined
        assert units[line - 1] is pending
        assert "row row-8ab6da466c4258dc" in reason and "the latest version is read" in reason
    # a merge row (as the SDK sends them) completes the row of its id
    merge = {"id": done["id"], "_is_merge": True, "span_id": done["span_id"],
             "root_span_id": TRACE, "span_parents": [ROOT],
             "output": {"status": "delivered"}, "metrics": {"end": 1748772000.4}}  # fmt: skip
    [call] = read(pending, merge).calls
    assert call["status"] == "ok" and call["result"] == {"status": "delivered"}
    assert call["duration_ms"] == pytest.approx(300)


def test_quarantine_reasons() -> None:
    sink = read(tool_span("n1", name=None), {"id": "x", "note": "no span"},
                tool_span("n2", span_attributes=["tool"]), tool_span(), tool_span())  # fmt: skip
    reasons = [q[2] for q in sink.quarantined]
    assert "expected a Braintrust span" in reasons[0]
    assert reasons[1] == "span_attributes is not an object"
    assert "repeats a row read before (line 4) with the same _xact_id" in reasons[2]
    assert "tool span without a name" in reasons[3]
    assert len(sink.calls) == 1


# -- files, the store -----------------------------------------------------------------


def test_fixture_store_counts_every_record(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    report = ingest([FIXTURES / "braintrust" / "logs.jsonl"], db)
    with duckdb.connect(str(db), read_only=True) as con:
        calls = con.execute("SELECT tool, status FROM calls ORDER BY run_id, seq").fetchall()
        reasons = [r[0] for r in con.execute("SELECT reason FROM quarantine").fetchall()]
        tasks = dict(con.execute("SELECT run_id, task_id FROM runs").fetchall())
    assert calls == [("get_order", "ok"), ("get_order", "tool_error"), ("refund", "tool_error"),
                     ("track_parcel", "missing"), ("search_docs", "ok")]  # fmt: skip
    assert len(reasons) == 3 and any("earlier _xact_id" in r for r in reasons)
    read_, stored = report.total("units_read"), report.total("units_stored")
    assert read_ == stored + report.total("units_quarantined") and read_ == 11
    assert report.total("units_quarantined") == 1
    assert sorted(tasks.values(), key=lambda t: t or "") == [None, "refund-1"]


def test_experiment_page_gives_one_run_a_trial_and_the_dataset_record() -> None:
    traces = read_traces(FIXTURES / "braintrust" / "experiment_page.json")
    assert [c["tool"] for c in traces.calls] == ["get_order", "get_order"]
    assert {r["task_id"] for r in traces.runs} == {"order-lookup-7"}
    assert len({r["run_id"] for r in traces.runs}) == 2
    assert {r["family"] for r in traces.runs} == {"commerce.lookup"}


def _calls(path: Path) -> list[tuple[Any, ...]]:
    traces = read_traces(path)
    return sorted((c["run_id"], c["tool"], c["call_id"], c["status"], json.dumps(c["result"]),
                   json.dumps(c["arguments"])) for c in traces.calls)  # fmt: skip


def test_an_array_and_parquet_read_as_the_lines_do(tmp_path: Path) -> None:
    import polars as pl

    source = FIXTURES / "braintrust" / "logs.jsonl"
    rows = [json.loads(line) for line in source.read_text().splitlines()]
    array = tmp_path / "logs.json"
    array.write_text(json.dumps(rows, indent=2))
    assert detect_format(array) == "braintrust" and _calls(array) == _calls(source)
    # a dataframe saved as parquet (a BTQL query's fmt: parquet): objects are structs, so
    # a column holds one shape, every key of it in every row
    spans = [root_span(task_id="t-1"), tool_span("a1", metadata={"task_id": None}),
             tool_span("a2", output={"status": "lost"}, metadata={"task_id": "t-2"}),
             tool_span("a3", error="KeyError: 'A-3'", output=None)]  # fmt: skip
    for span in spans:
        span["input"] = {"order_id": "A-1"}
        span["output"] = span["output"] if isinstance(span["output"], dict) else None
    lines, parquet = tmp_path / "spans.jsonl", tmp_path / "spans.parquet"
    write_jsonl(lines, spans)
    pl.DataFrame(spans).write_parquet(parquet)
    assert detect_format(parquet) == "braintrust"
    assert _calls(parquet) == _calls(lines) and len(_calls(lines)) == 3
    statuses = {c["call_id"]: (c["status"], c["task_id"]) for c in read_traces(parquet).calls}
    assert statuses == {"a1": ("ok", "t-1"), "a2": ("ok", "t-2"), "a3": ("tool_error", "t-1")}


# -- the simulator's writer -----------------------------------------------------------


def test_round_trip_gives_the_langsmith_calls(tmp_path: Path) -> None:
    runs, _ = inject(simulate("all", tasks=15, seed=8, trials=2), list(FaultClass), rate=0.6,
                     seed=5)  # fmt: skip
    path = tmp_path / "x.braintrust.jsonl"
    path.write_text("".join(dump_line(unit) + "\n" for run in runs for unit in write_run(run)))
    assert detect_format(path) == "braintrust"
    ours = read_traces(path)
    theirs = read_traces(write_traces(runs, tmp_path / "x.langsmith.jsonl", "langsmith"))
    assert not ours.quarantined

    def keyed(traces: Any) -> dict[tuple[Any, ...], dict[str, Any]]:
        task = {r["run_id"]: (r["task_id"], r["trial"]) for r in traces.runs}
        return {(task[c["run_id"]], c["started_at"], c["tool"]): c for c in traces.calls}

    a, b = keyed(theirs), keyed(ours)
    assert a.keys() == b.keys() and len(ours.calls) == len(theirs.calls) > 50
    assert {c["status"] for c in ours.calls} >= {"ok", "tool_error", "missing"}
    for key, call in a.items():
        for field in ("arguments", "result", "status", "call_id", "error_message", "task_id"):
            assert call[field] == b[key][field], (key, field)
    assert sorted((r["task_id"], r["trial"], r["family"], r["reward"], r["run_outcome"])
                  for r in theirs.runs) == sorted(
        (r["task_id"], r["trial"], r["family"], r["reward"], r["run_outcome"])
        for r in ours.runs)  # fmt: skip
    # in order: the calls of a run come as the run made them
    trial = {r["run_id"]: (r["task_id"], r["trial"]) for r in ours.runs}
    made: dict[tuple[Any, ...], list[str]] = {}
    for call in ours.calls:
        made.setdefault(trial[call["run_id"]], []).append(call["tool"])
    assert made == {(r["task_id"], r["trial"]): [c["tool"] for c in r["calls"]] for r in runs}


def test_writer_rows_are_the_same_for_the_same_run() -> None:
    run = simulate("commerce", tasks=1, seed=3)[0]
    rows = write_run(run)
    assert rows == write_run(run)
    root, *spans = rows
    assert root["span_parents"] is None and root["span_attributes"]["type"] == "task"
    assert len(root["root_span_id"]) == 32 and len(root["span_id"]) == 16
    assert all(s["span_parents"] == [root["span_id"]] for s in spans)
    assert [s["span_attributes"]["name"] for s in spans] == [c["tool"] for c in run["calls"]]
