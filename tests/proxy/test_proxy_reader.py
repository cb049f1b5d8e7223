"""The ``mcp`` reader on the current protocol (2026-07-28) and on what the proxy writes:
no handshake or ``server/discover``, ``resultType``, batches in a logged entry, per-call
task ids in ``_meta`` reached by ingest's ``--task-key``, and the proxy's receipt and
note left out. (Structured content of any JSON type and resource blocks as the result
were already read so and are not repeated here.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb

from tracemine.ingest import ingest
from tracemine.ingest.readers.base import Sink
from tracemine.ingest.readers.mcp import McpReader

VERSION = "io.modelcontextprotocol/protocolVersion"


def read(*units: Any) -> Sink:
    reader = McpReader("traces/session.jsonl")
    sink = Sink()
    for line, unit in enumerate(units, 1):
        reader.feed(unit, line, sink)
    reader.finish(sink)
    return sink


def call(request_id: Any, tool: str = "get_order", meta: Any = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": tool, "arguments": {"order_id": "#W1"}}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def answer(request_id: Any, **result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def test_server_discover_opens_a_session_and_says_who_talks() -> None:
    meta = {VERSION: "2026-07-28", "io.modelcontextprotocol/clientInfo": {"name": "agent"}}
    discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}
    served = {"_meta": {"io.modelcontextprotocol/serverInfo": {"name": "shop"}},
              "supportedVersions": ["2026-07-28"]}  # fmt: skip
    sink = read(
        discover,
        answer(1, **served),
        call(2),
        answer(2, content=text("1")),
        discover | {"id": 3},
        answer(3, **served),
        call(4),
        answer(4, content=text("2")),
    )
    runs: dict[str, dict[str, Any]] = {}
    for run in sink.runs:
        runs.setdefault(run["run_id"], {}).update(run["metadata"])
    assert [c["run_id"] for c in sink.calls] == ["session.jsonl", "session.jsonl#2"]
    assert runs["session.jsonl"] | runs["session.jsonl#2"] == runs["session.jsonl"]
    assert {k: runs["session.jsonl"][k] for k in ("protocol_version", "client", "server",
            "handshake")} == {"protocol_version": "2026-07-28", "client": "agent",
                              "server": "shop", "handshake": "server/discover"}  # fmt: skip


def test_without_a_handshake_the_version_comes_from_the_call() -> None:
    sink = read(call(1, meta={VERSION: "2026-07-28"}), answer(1, content=text("1")))
    assert any(r["metadata"].get("protocol_version") == "2026-07-28" for r in sink.runs)


def test_input_required_is_not_the_calls_result() -> None:
    asked = {"resultType": "input_required", "inputRequests": {"q": {"method": "x"}}}
    sink = read(call(1), answer(1, **asked), call(2), answer(2, content=text('{"a": 1}')))
    first, retry = sink.calls
    assert (first["status"], first["anomalies"], first["result"]) == (
        "unknown", ["input_required"], None)  # fmt: skip
    assert (retry["status"], retry["result"]) == ("ok", {"a": 1})


def test_a_batch_in_a_logged_entry_is_read_message_by_message() -> None:
    sink = read({"direction": "send", "message": [call(1), call(2, "refund")]},
                {"direction": "recv", "message": [answer(2, content=text("2")),
                                                  answer(1, content=text("1"))]})  # fmt: skip
    assert sorted((c["tool"], c["result"], c["source_pointer"]) for c in sink.calls) == [
        ("get_order", 1, "/message/0"), ("refund", 2, "/message/1")]  # fmt: skip
    assert sink.quarantined == []


def test_the_proxys_receipt_and_note_are_not_evidence() -> None:
    note = "[tracemine] This get_order result may be wrong: total: expected >= 0, got -1."
    result = {"content": [*text('{"total": -1}'), {"type": "text", "text": note}],
              "_meta": {"tracemine/receipt": {"ok": False, "note": note}}}  # fmt: skip
    (got,) = read(call(1), answer(1, **result)).calls
    assert got["result"] == {"total": -1}
    assert got["result_text"] == '{"total": -1}'
    assert json.loads(got["result_raw"]) == text('{"total": -1}')


def test_a_sessions_tasks_in_meta_are_runs_of_their_own() -> None:
    sink = read(call(1, meta={"task_id": "t1"}), answer(1, content=text("1")),
                call(2, meta={"task_id": "t2"}), answer(2, content=text("2")),
                call(3, meta={"task_id": "t1"}), answer(3, content=text("3")))  # fmt: skip
    assert [(c["run_id"], c["seq"]) for c in sink.calls] == [
        ("session.jsonl/t1", 0), ("session.jsonl/t2", 0), ("session.jsonl/t1", 1)]  # fmt: skip
    tasks = {r["run_id"]: r["task_id"] for r in sink.runs if r["task_id"]}
    assert tasks == {"session.jsonl/t1": "t1", "session.jsonl/t2": "t2"}


def test_ingest_task_key_reaches_meta(tmp_path: Path) -> None:
    lines = [call(i, meta={"agent": {"task": f"task-{i % 2}"}}) for i in range(4)]
    lines += [answer(i, content=text(str(i))) for i in range(4)]
    log = tmp_path / "client.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    report = ingest([log], db=tmp_path / "store.duckdb", task_key="agent.task")
    assert report.files[0].runs_without_task == 0
    with duckdb.connect(str(tmp_path / "store.duckdb"), read_only=True) as con:
        tasks = con.execute(
            "SELECT r.task_id, count(*) FROM calls JOIN runs r USING (run_id) GROUP BY 1 ORDER BY 1"
        ).fetchall()
    assert tasks == [("task-0", 2), ("task-1", 2)]


def test_the_wrappers_task_is_the_sessions() -> None:
    wrapped = [{"direction": "send", "session_id": "s1", "task_id": "refund-7", "message": call(1,
               meta={"task_id": "ignored"})},
               {"direction": "recv", "session_id": "s1", "task_id": "refund-7",
                "message": answer(1, content=text("1"))}]  # fmt: skip
    sink = read(*wrapped)
    assert [c["run_id"] for c in sink.calls] == ["s1"]
    assert {r["task_id"] for r in sink.runs} == {"refund-7"}


def test_the_wrappers_task_key_names_the_meta_key() -> None:
    sink = read({"direction": "send", "task_key": "job", "message": call(1, meta={"job": "j9"})},
                {"direction": "recv", "message": answer(1, content=text("1"))})  # fmt: skip
    assert [c["run_id"] for c in sink.calls] == ["session.jsonl/j9"]
