"""``tracemine merge`` run as a user runs it: a subprocess, files in, a summary out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tracemine.cli import app
from tracemine.model.contract import (
    Contract,
    ContractFile,
    Kind,
    MergeLabel,
    Side,
    load_contracts,
    save_contracts,
)

FIXTURES = Path(__file__).parent.parent / "fixtures" / "openapi"


def tracemine(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tracemine", *map(str, args)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def candidates(tmp_path: Path) -> Path:
    contracts = ContractFile(
        contracts=[
            Contract(tool="get_order", side=Side.RESULT, kind=Kind.RANGE,
                     paths=["result.total_cents"], params={"min": 0, "max": 900}),
            Contract(tool="search", side=Side.RESULT, kind=Kind.NON_EMPTY, paths=["result.hits"]),
        ]
    )  # fmt: skip
    return save_contracts(contracts, tmp_path / "candidates.json")


def test_merge_writes_labelled_contracts_and_reports_unmapped(tmp_path: Path) -> None:
    out = tmp_path / "out" / "merged.json"
    done = tracemine(
        "merge", "--candidates", candidates(tmp_path), "--spec", FIXTURES / "orders-3.0.yaml",
        "--spec", FIXTURES / "mcp-tools.json", "--map", FIXTURES / "tools.map.yaml", "--out", out,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "observed-tighter" in done.stdout and "declared-unexercised" in done.stdout
    assert "tools with no operation: search" in done.stdout
    assert "operations with no tool:" in done.stdout and "listCategories" in done.stdout
    merged = load_contracts(out)
    labels = {c.label.value for c in merged.contracts if c.label}
    assert {"observed-tighter", "observed-only", "declared-unexercised"} <= labels
    assert {c.tool for c in merged.contracts} >= {"get_order", "list_orders", "refund", "search"}
    assert merged.provenance["merge"]["unmapped_tools"] == ["search"]


def test_merge_json_summary(tmp_path: Path) -> None:
    done = tracemine(
        "merge", "--candidates", candidates(tmp_path), "--spec", FIXTURES / "orders-3.0.yaml",
        "--out", tmp_path / "merged.json", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["tools"] == {"get_order": "getOrder"}  # get_order ↔ getOrder by name
    assert summary["labels"]["observed-tighter"] == 1


def test_a_broken_ref_is_one_line_and_exit_2(tmp_path: Path) -> None:
    mapping = tmp_path / "map.yaml"
    mapping.write_text("get_order: listThings\n")
    done = tracemine(
        "merge", "--candidates", candidates(tmp_path), "--spec", FIXTURES / "broken-ref.yaml",
        "--map", mapping, "--out", tmp_path / "merged.json",
    )  # fmt: skip
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "broken-ref.yaml#/paths/~1things" in line and "#/components/schemas/Thing" in line
    assert not (tmp_path / "merged.json").exists()


def test_user_errors_in_process(tmp_path: Path) -> None:
    runner = CliRunner()
    done = runner.invoke(app, ["merge", "--candidates", str(candidates(tmp_path)), "--spec",
                               str(FIXTURES / "not-openapi.yaml"), "--out", str(tmp_path / "m.json")])  # fmt: skip
    assert done.exit_code == 2 and "not-openapi.yaml: not a schema document" in done.output
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    done = runner.invoke(app, ["merge", "--candidates", str(bad), "--spec",
                               str(FIXTURES / "orders-3.0.yaml"), "--out", str(tmp_path / "m.json")])  # fmt: skip
    assert done.exit_code == 2 and "bad.json" in done.output
    done = runner.invoke(app, ["merge", "--help"])
    assert done.exit_code == 0 and "--spec" in done.output and "--db" in done.output


STALE_SPEC = """\
openapi: 3.0.3
info: {title: Orders, version: "1.0"}
paths:
  /orders/{order_id}:
    get:
      operationId: getOrder
      responses:
        "200":
          description: The order (the document predates the "placed" state).
          content:
            application/json:
              schema:
                type: object
                properties:
                  status: {type: string, enum: [shipped, delivered, cancelled]}
"""


def order_traces(path: Path) -> Path:
    """40 tasks of three get_order calls whose status is delivered, placed or shipped."""
    statuses = ["delivered", "placed", "shipped"]
    runs = []
    for task in range(40):
        calls = [{"index": i, "name": "get_order", "ok": True,
                  "arguments": {"order_id": f"#W{task:03d}{i:04d}"},
                  "result": {"id": f"#W{task:03d}{i:04d}", "status": statuses[(task + i) % 3],
                             "total_cents": 100 + 7 * task + i}}
                 for i in range(3)]  # fmt: skip
        runs.append(json.dumps({"task_id": f"t{task}", "calls": calls}))
    path.write_text("\n".join(runs) + "\n")
    return path


@pytest.mark.slow
def test_a_stale_declared_enum_is_reviewed_apart_from_the_mined_one(tmp_path: Path) -> None:
    db, spec = tmp_path / "traces.duckdb", tmp_path / "orders.yaml"
    spec.write_text(STALE_SPEC)
    candidates, merged = tmp_path / "candidates.json", tmp_path / "merged.json"
    for args in (
        ["ingest", order_traces(tmp_path / "traces.jsonl"), "--db", db],
        ["mine", "--db", db, "--out", candidates, "--all-eligible"],
        ["merge", "--candidates", candidates, "--spec", spec, "--db", db, "--out", merged],
        ["validate-contracts", merged],
    ):
        done = tracemine(*args)
        assert done.returncode == 0, (args[0], done.stderr)
    contracts = load_contracts(merged).contracts
    assert len({c.id for c in contracts}) == len(contracts)
    enums = {tuple(c.sources): c for c in contracts
             if c.paths == ["result.status"] and c.kind == Kind.ONE_OF}  # fmt: skip
    assert set(enums) == {("mined",), ("declared",)}
    mined, stale = enums[("mined",)], enums[("declared",)]
    assert mined.params["values"] == ["delivered", "placed", "shipped"]
    assert stale.label == MergeLabel.OBSERVED_VIOLATES_DECLARED
    (was,) = [c for c in load_contracts(candidates).contracts if c.kind == Kind.ONE_OF]
    assert mined.id == was.id  # the mined id a review file knows is kept

    c = ["--contracts", merged]
    done = tracemine("review", "reject", *c, stale.id, "--reason", "predates placed")
    assert done.returncode == 0 and "rejected 1 contracts" in done.stdout, done.stderr
    shown = {}
    for contract in (mined, stale):
        done = tracemine("review", "show", *c, contract.id, "--json")
        assert done.returncode == 0, done.stderr
        shown[contract.id] = json.loads(done.stdout)
    assert shown[stale.id]["status"] == "rejected"
    assert shown[stale.id]["params"]["values"] == ["shipped", "delivered", "cancelled"]
    assert shown[mined.id]["status"] == "proposed" and shown[mined.id]["decision"] is None
    listed = tracemine("review", "list", *c, "--kind", "one_of", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {row["id"]: row["status"] for row in json.loads(listed.stdout)}
    assert rows == {mined.id: "proposed", stale.id: "rejected"}
