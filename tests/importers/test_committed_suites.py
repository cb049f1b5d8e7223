"""The committed AgentDojo and BFCL replays (data/agentdojo, data/bfcl) ingest and mine with
no extra package installed. Facts are counted here from the gzip files with json alone, and
pinned, so a reader or store that loses or invents calls fails."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import pytest

import tracemine

DATA = Path(__file__).resolve().parents[2] / "data"
SUITES = {
    "agentdojo": DATA / "agentdojo" / "agentdojo.jsonl.gz",
    "bfcl": DATA / "bfcl" / "bfcl.jsonl.gz",
}
# what data/*/README.md states, and the files hold: calls, runs, tasks, tools
PINNED = {"agentdojo": (339, 97, 97, 53), "bfcl": (1142, 200, 200, 81)}


def read_lines(suite: str) -> list[dict[str, Any]]:
    with gzip.open(SUITES[suite], "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@pytest.fixture(scope="module", params=sorted(SUITES))
def suite(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict:
    name = request.param
    db = tmp_path_factory.mktemp(name) / "store.duckdb"
    report = tracemine.ingest([SUITES[name]], db)
    return {"name": name, "lines": read_lines(name), "db": db, "report": report}


def test_the_files_hold_what_their_readme_states(suite: dict) -> None:
    lines = suite["lines"]
    counted = (
        len(lines),
        len({line["run_id"] for line in lines}),
        len({line["task_id"] for line in lines}),
        len({line["tool"] for line in lines}),
    )
    assert counted == PINNED[suite["name"]]
    assert all(line["status"] == "ok" for line in lines)


def test_ingest_stores_every_call(suite: dict) -> None:
    lines, db = suite["lines"], suite["db"]
    (file,) = suite["report"].files
    assert file.source_format == "flat"
    assert file.units_read == file.units_stored == len(lines) == PINNED[suite["name"]][0]
    assert file.units_quarantined == file.items_quarantined == 0
    assert file.calls == len(lines)
    assert file.runs == len({line["run_id"] for line in lines}) == PINNED[suite["name"]][1]
    assert file.runs_without_task == 0

    con = duckdb.connect(str(db), read_only=True)
    try:
        per_tool = dict(con.execute("SELECT tool, count(*) FROM calls GROUP BY tool").fetchall())
        tasks = con.execute("SELECT count(DISTINCT task_id) FROM runs").fetchall()[0][0]
        statuses = dict(con.execute("SELECT status, count(*) FROM calls GROUP BY ALL").fetchall())
        per_run = dict(con.execute("SELECT run_id, count(*) FROM calls GROUP BY ALL").fetchall())
    finally:
        con.close()
    assert per_tool == Counter(line["tool"] for line in lines)
    assert len(per_tool) == PINNED[suite["name"]][3]
    assert tasks == len({line["task_id"] for line in lines}) == PINNED[suite["name"]][2]
    assert statuses == {"ok": len(lines)}
    assert per_run == Counter(line["run_id"] for line in lines)


# one structural contract per suite, true of every call of its tool (checked on the data
# below): AgentDojo's transactions carry a numeric amount, BFCL's stock quotes a price
EXPECTED = {
    "agentdojo": ("get_most_recent_transactions", "result[*].amount", "number", 12),
    "bfcl": ("get_stock_info", "result.price", "number", 43),
}


def _values(result: Any, path: str) -> list[Any]:
    if path == "result.price":
        return [result["price"]] if isinstance(result, dict) and "price" in result else [None]
    assert path == "result[*].amount"
    if not isinstance(result, list):
        return [None]
    return [item.get("amount") if isinstance(item, dict) else None for item in result]


def test_mining_finds_a_contract_the_data_obeys(suite: dict) -> None:
    tool, path, wanted, calls = EXPECTED[suite["name"]]
    of_tool = [line for line in suite["lines"] if line["tool"] == tool]
    assert len(of_tool) == calls
    values = [v for line in of_tool for v in _values(line["result"], path)]
    assert values and all(type(v) in (int, float) for v in values), "true of the data"
    assert len({line["task_id"] for line in of_tool}) >= 5, "enough tasks to be mined"

    mined = tracemine.mine(suite["db"], crossfit=False)
    found = {(c.tool, c.kind.value, tuple(c.paths)): c for c in mined.contracts}
    contract = found.get((tool, "type", (path,)))
    assert contract is not None, f"{tool}: {path} is a {wanted} in every call"
    assert contract.params == {"type": wanted}
    assert contract.evidence is not None and contract.evidence.calls == calls
    if "[*]" not in path:
        assert (tool, "present", (path,)) in found
