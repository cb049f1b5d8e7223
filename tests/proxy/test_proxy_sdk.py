"""A real SDK client and server through ``tracemine mcp wrap``: both handshakes, the
session recorded as a transcript that ingests whole with its tasks, and a violating result
that carries its receipt while the client gets the server's content."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from conftest import PY, refund_contracts, sdk_session, wrap
from tracemine.ingest import ingest

CALLS = [
    ("get_order", {"order_id": "#W1"}, {"task_id": "refund-1"}),
    ("refund", {"order_id": "#W1"}, {"task_id": "refund-1"}),
    ("get_order", {"order_id": "#W9"}, {"task_id": "refund-2"}),
    ("refund", {"order_id": "#W9"}, {"task_id": "refund-2"}),
    ("list_tags", {}, {"task_id": "refund-2"}),
    ("cancel", {"order_id": "#W9"}, {"task_id": "refund-2"}),
]


@pytest.fixture(scope="module", params=["initialize", "server/discover"])
def session(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One recorded, monitored session a handshake: (results, transcript, store)."""
    folder = tmp_path_factory.mktemp("session")
    contracts = refund_contracts(folder / "contracts.json")
    modern = request.param == "server/discover"
    # the SDK gives server/discover 10 s: on a loaded machine importing the whole command
    # line can take that long, so the 2026-07-28 session goes through the fast entry point
    command = wrap("--contracts", str(contracts), "--record", str(folder / "sessions"), "--note",
                   fast=modern)  # fmt: skip
    results = sdk_session(command, CALLS, modern=modern)
    (transcript,) = (folder / "sessions").iterdir()
    db = folder / "store.duckdb"
    report = ingest([transcript], db=db)
    return request.param, results, transcript, report, db


def test_the_client_gets_the_servers_results(session: Any) -> None:
    _, results, *_ = session
    assert results[0].structured_content == {"order_id": "#W1", "status": "open", "total": 12.5}
    assert results[3].structured_content == {"order_id": "#W9", "amount": -3.0}
    assert results[5].is_error


def test_a_violating_result_carries_its_receipt_in_meta(session: Any) -> None:
    _, results, transcript, *_ = session
    violated, kept = results[3], results[1]
    receipt = violated.meta["tracemine/receipt"]
    assert receipt["ok"] is False
    assert [(v["kind"], v["path"]) for v in receipt["violations"]] == [
        ("non_negative", "result.amount")
    ]
    assert receipt["note"].startswith("[tracemine] This refund result may be wrong")
    # the content is the server's, with the note as one more text block (--note)
    assert json.loads(violated.content[0].text) == {"order_id": "#W9", "amount": -3.0}
    assert [block.text for block in violated.content[1:]] == [receipt["note"]]
    assert kept.meta["tracemine/receipt"]["ok"] is True and len(kept.content) == 1
    # tools without contracts pass untouched
    assert "tracemine/receipt" not in (results[0].meta or {})
    recorded = [json.loads(line) for line in transcript.read_text("utf-8").splitlines()]
    answer = next(e for e in recorded if e["direction"] == "recv" and "receipt" in e
                  and not e["receipt"]["ok"])  # fmt: skip
    assert "_meta" not in answer["message"]["result"] or (
        "tracemine/receipt" not in answer["message"]["result"]["_meta"]
    )  # the transcript keeps what the server sent


def test_the_recorded_session_ingests_whole_with_its_tasks(session: Any) -> None:
    handshake, _, _, report, db = session
    (file,) = report.files
    assert file.units_read == file.units_stored + file.units_quarantined
    assert (file.units_quarantined, file.items_quarantined, file.runs_without_task) == (0, 0, 0)
    with duckdb.connect(str(db), read_only=True) as con:
        runs = dict(con.execute("SELECT task_id, metadata FROM runs").fetchall())
        calls = con.execute(
            "SELECT r.task_id, c.tool, c.status, c.result::VARCHAR, c.result_raw "
            "FROM calls c JOIN runs r USING (run_id) ORDER BY r.task_id, c.seq"
        ).fetchall()
    assert sorted(runs) == ["refund-1", "refund-2"]
    metadata = json.loads(runs["refund-2"])
    assert metadata["handshake"] == handshake and metadata["server"] == "shop"
    assert metadata["tool_annotations"]["refund"] == {"destructiveHint": True}
    assert [(task, tool, status) for task, tool, status, *_ in calls] == [
        ("refund-1", "get_order", "ok"), ("refund-1", "refund", "ok"),
        ("refund-2", "get_order", "ok"), ("refund-2", "refund", "ok"),
        ("refund-2", "list_tags", "ok"), ("refund-2", "cancel", "tool_error"),
    ]  # fmt: skip
    refund = calls[3]
    assert json.loads(refund[3]) == {"order_id": "#W9", "amount": -3.0}
    assert "[tracemine]" not in refund[4]
    assert json.loads(calls[4][3]) == {"result": ["gift", "sale"]}  # the SDK wraps a list


def test_a_client_log_with_the_proxys_additions_reads_as_the_servers(
    session: Any, tmp_path: Path
) -> None:
    """What the client saw (receipt in _meta, note block) is read as what the server sent."""
    _, results, *_ = session
    lines = []
    for number, result in enumerate(results[:4]):
        request = {
            "jsonrpc": "2.0",
            "id": number,
            "method": "tools/call",
            "params": {"name": CALLS[number][0], "arguments": CALLS[number][1]},
        }
        answer = {
            "jsonrpc": "2.0",
            "id": number,
            "result": result.model_dump(mode="json", by_alias=True, exclude_none=True),
        }
        lines += [json.dumps(request), json.dumps(answer)]  # fmt: skip
    log = tmp_path / "client.jsonl"
    log.write_text("\n".join(lines) + "\n", "utf-8")
    db = tmp_path / "client.duckdb"
    ingest([log], db=db)
    with duckdb.connect(str(db), read_only=True) as con:
        raw = con.execute("SELECT result_raw, result_text FROM calls ORDER BY seq").fetchall()
    assert all("[tracemine]" not in (text or "") + (blocks or "") for blocks, text in raw)


def test_replay_serves_the_recorded_session_to_the_sdk_client(session: Any) -> None:
    handshake, live, transcript, *_ = session
    from mcp.shared.exceptions import MCPError

    entry = ["tracemine.proxy"] if handshake == "server/discover" else ["tracemine", "mcp"]
    replay = [PY, "-m", *entry, "replay", str(transcript)]  # fast entry: as in the fixture
    missed: list[str] = []

    async def after(client: Any) -> None:
        try:
            await client.call_tool("refund", {"order_id": "#W2"})
        except MCPError as exc:
            missed.append(str(exc))

    replayed = sdk_session(replay, CALLS, modern=handshake == "server/discover", then=after)
    assert [r.structured_content for r in replayed] == [r.structured_content for r in live]
    assert [r.is_error for r in replayed] == [r.is_error for r in live]
    # what the server sent, not what the proxy added
    assert "tracemine/receipt" not in (replayed[3].meta or {})
    assert len(replayed[3].content) == 1
    (message,) = missed
    assert "no recorded call answers refund" in message
    assert "nearest recorded: refund#" in message
    assert 'order_id: recorded "#W1", this call "#W2"' in message
