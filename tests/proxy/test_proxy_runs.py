"""The live proxy cuts runs where ingest cuts them: a session that served twenty tasks,
named in each call's ``params._meta``, is mined as twenty runs and checked as twenty, so
the per-run contracts mined from it (call caps above all) hold on the same traffic."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path
from typing import Any

from conftest import PY, sdk_session, wrap
from tracemine.model.contract import Contract, ContractFile
from tracemine.monitor import Monitor
from tracemine.proxy._checker import Checker

CALLS = [
    (tool, arguments, {"task_id": f"task-{task}"})
    for task in range(20)
    for tool, arguments in (
        ("get_order", {"order_id": f"#W{100 + task}"}),
        ("refund", {"order_id": f"#W{100 + task}"}),
        ("list_tags", {}),
    )
]


def _violations(results: list[Any]) -> list[dict[str, Any]]:
    receipts = [r.meta["tracemine/receipt"] for r in results
                if r.meta and "tracemine/receipt" in r.meta]  # fmt: skip
    return [v for receipt in receipts for v in receipt["violations"]]


def test_a_mined_proxy_session_replayed_through_wrap_gives_no_alarm(tmp_path: Path) -> None:
    sdk_session(wrap("--record", str(tmp_path / "sessions")), CALLS, modern=False)
    (transcript,) = (tmp_path / "sessions").iterdir()
    tm = [PY, "-m", "tracemine"]
    db, contracts = tmp_path / "store.duckdb", tmp_path / "contracts.json"
    subprocess.run([*tm, "ingest", str(transcript), "--db", str(db)], check=True,
                   capture_output=True)  # fmt: skip
    subprocess.run([*tm, "mine", "--db", str(db), "--out", str(contracts), "--run-level",
                    "--all-eligible"], check=True, capture_output=True)  # fmt: skip
    mined = json.loads(contracts.read_text("utf-8"))["contracts"]
    caps = {c["tool"] for c in mined if c["kind"] == "call_cap"}
    assert {"get_order", "refund"} <= caps  # the contracts a whole-session run breaks
    results = sdk_session(wrap("--contracts", str(contracts), "--include-proposed"), CALLS,
                          modern=False)  # fmt: skip
    checked = [r for r in results if r.meta and "tracemine/receipt" in r.meta]
    assert len(checked) == len(CALLS)
    assert _violations(results) == []


def _cap_monitor() -> Monitor:
    cap = Contract(tool="get_order", side="run", kind="call_cap", paths=[], params={"max": 1},
                   status="accepted")  # fmt: skip
    return Monitor.from_dict(json.loads(ContractFile(contracts=[cap]).model_dump_json()))


def _call(checker: Checker, number: int, meta: dict[str, Any] | None) -> dict[str, Any] | None:
    params: dict[str, Any] = {"name": "get_order", "arguments": {"order_id": "#W1"}}
    if meta is not None:
        params["_meta"] = meta
    checker.request({"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params})
    answer = {"jsonrpc": "2.0", "id": number,
              "result": {"content": [{"type": "text", "text": "{}"}], "isError": False}}  # fmt: skip
    return checker.check(answer)


def test_runs_follow_the_task_key_and_a_session_task_overrides_it() -> None:
    log = io.StringIO()
    by_key = Checker(_cap_monitor(), "s1", note=False, log=log, task_key="ctx.task")
    seen = [_call(by_key, n, {"ctx": {"task": f"t{n}"}}) for n in range(3)]
    assert [m["ok"] for m in seen if m] == [True, True, True]  # three runs, one call each
    assert sorted(by_key.task_runs) == ["t0", "t1", "t2"]
    assert by_key.task_runs["t1"].run_id == "s1/t1"
    # calls naming no task share the session's run, as ingest reads them
    untasked = [_call(by_key, 10 + n, None) for n in range(2)]
    assert [m["ok"] for m in untasked if m] == [True, False]
    # a session with a task of its own (--task) is one run whatever the calls say
    fixed = Checker(_cap_monitor(), "s2", note=False, log=log, task="whole")
    said = [_call(fixed, n, {"task_id": f"t{n}"}) for n in range(2)]
    assert [m["ok"] for m in said if m] == [True, False]
    assert fixed.task_runs == {}
