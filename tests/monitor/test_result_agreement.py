"""One view of every result: for each simulated suite and each format the simulator writes,
the monitor's verdict on a call is the same whether it is given the parsed result, the text
``json.dumps`` makes of it, or the text the trace format carries, and the same as what
``tracemine check`` finds reading the trace file — call for call, faulted calls included."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tracemine.faults import inject
from tracemine.gate import check
from tracemine.ingest import ingest, read_traces
from tracemine.mine import mine
from tracemine.monitor import Monitor, replay
from tracemine.simulate import simulate, write_traces
from tracemine.simulate.formats import FORMATS

FAULTS = ["execution_error", "field_omitted", "field_null", "wrong_type", "negative_quantity",
          "empty_match", "html_error_page", "unit_mismatch", "unknown_enum"]  # fmt: skip
Key = tuple[str, int]


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Monitor]:
    """Contracts mined from the three suites (``all`` deals tasks to each), accepted."""
    folder = tmp_path_factory.mktemp("agreement")
    trace = write_traces(simulate("all", tasks=45, seed=1, trials=2), folder / "t.jsonl", "flat")
    ingest([trace], folder / "t.duckdb")
    document = mine(folder / "t.duckdb", where="run_outcome=success", min_tasks=5)
    data = document.model_dump(mode="json")
    for item in data["contracts"]:
        item["status"] = "accepted"
    path = folder / "contracts.json"
    path.write_text(json.dumps(data), "utf-8")
    assert {item["tool"].split("_")[0] for item in data["contracts"]} > {"get", "search"}
    return path, Monitor.from_dict(data)


@pytest.fixture(scope="module")
def evaluation() -> list[dict[str, Any]]:
    """Held-out runs of every suite, most of them faulted."""
    runs = simulate("all", tasks=18, seed=2, trials=1)
    faulted, truth = inject(runs, FAULTS, rate=0.7, seed=3)
    assert len({record.fault_class for record in truth}) >= 6
    return faulted


def violated(receipt: Any) -> frozenset[str]:
    return frozenset(v.contract_id for v in receipt.violations)


def content_of(result: Any) -> str:
    """What an agent loop puts in the tool message."""
    return result if isinstance(result, str) else json.dumps(result)


@pytest.mark.parametrize("format", sorted(FORMATS))
def test_every_view_of_a_result_gets_the_same_verdict(
    format: str, mined: tuple[Path, Monitor], evaluation: list[dict[str, Any]], tmp_path: Path
) -> None:
    contracts, monitor = mined
    trace = write_traces(evaluation, tmp_path / f"eval.{format}.jsonl", format)
    read = read_traces(trace)
    # a platform names a run by its trace id: the simulator's run id through task and trial
    ours = {(run["task_id"], run["trial"]): run["run_id"] for run in evaluation}
    name = {r["run_id"]: ours[(r["task_id"], r["trial"])] for r in read.runs}
    records = {(name[c["run_id"]], c["seq"]): c for c in read.calls}
    parsed: dict[Key, frozenset[str]] = {}
    for run in evaluation:
        for call in run["calls"]:
            if call["status"] == "missing":
                continue
            key, args = (run["run_id"], call["seq"]), call["arguments"]
            tool, result, status = call["tool"], call["result"], call["status"]
            parsed[key] = violated(monitor.check(tool, args, result, status=status))
            as_text = violated(monitor.check(tool, args, content_of(result), status=status))
            assert as_text == parsed[key], (key, tool)
            # the text the format carries, and the status it flags (chat messages flag none)
            record = records[key]
            carried = record["result_text"] if record["result_text"] is not None else result
            flagged = "ok" if format == "openai_chat" else status
            assert violated(monitor.check(tool, args, carried, status=flagged)) == parsed[key]
    replayed = {(name[o.run_id], o.seq): violated(o.receipt)
                for r in replay(monitor, records.values()) for o in r.calls if o.receipt}  # fmt: skip
    assert replayed == parsed
    found = Counter(cid for ids in parsed.values() for cid in ids)
    # faults are found, not only silence agreed on: counted in calls, since a result of
    # another type is one alarm, not one more for each key a schema's member expected
    assert sum(1 for ids in parsed.values() if ids) >= 5
    report = check(trace, contracts)
    assert {c.contract_id: c.violated for c in report.contracts if c.violated} == dict(found)
