"""Literal sets only where the values look closed: the Good–Turing estimate of unseen
mass decides, and the evidence shows it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracemine.ingest import ingest
from tracemine.mine import mine
from tracemine.mine.propose.templates.strings import MAX_UNSEEN_MASS, unseen_mass
from tracemine.model.contract import ContractFile, Kind

SHAPES = Path(__file__).resolve().parents[1] / "data" / "real_shapes" / "shapes.jsonl"


def test_unseen_mass_known_answers() -> None:
    # value -> (calls, tasks): 40 task-values, one value seen in a single task
    assert unseen_mass({"a": (30, 20), "b": (25, 19), "c": (1, 1)}) == pytest.approx(1 / 40)
    assert unseen_mass({"a": (9, 9), "b": (3, 3)}) == 0.0
    assert unseen_mass({f"v{i}": (1, 1) for i in range(10)}) == 1.0
    assert unseen_mass({}) == 1.0


@pytest.fixture(scope="module")
def candidates(tmp_path_factory: pytest.TempPathFactory) -> ContractFile:
    folder = tmp_path_factory.mktemp("closed")
    ingest([SHAPES], folder / "store.duckdb")
    return mine(folder / "store.duckdb", budget=False)


def _sets(found: ContractFile, path: str) -> list:
    return [c for c in found.contracts
            if c.paths == [path] and c.kind in (Kind.ONE_OF, Kind.CONST)]  # fmt: skip


def test_a_closed_set_is_listed_with_its_estimate(candidates: ContractFile) -> None:
    (status,) = _sets(candidates, "result.status")
    assert status.kind == Kind.ONE_OF
    assert sorted(status.params["values"]) == ["cancelled", "delivered", "pending"]
    assert status.evidence is not None and status.evidence.unseen_mass == 0.0
    (color,) = _sets(candidates, "result.variants{*}.options.color")
    assert len(color.params["values"]) == 5


def test_open_values_get_no_set(candidates: ContractFile) -> None:
    # a hundred hotel names over 80 searches: many seen once, so no list of them
    assert not _sets(candidates, "result.results[*].name")
    assert not _sets(candidates, "result.results[*].hotel_id")
    assert all(
        c.evidence is not None and (c.evidence.unseen_mass or 0) <= MAX_UNSEEN_MASS
        for c in candidates.contracts if c.kind in (Kind.ONE_OF, Kind.CONST)
    )  # fmt: skip


def test_a_rare_value_does_not_open_a_set_but_many_do(tmp_path: Path) -> None:
    import json

    tiers = ["gold"] * 30 + ["silver"] * 29 + ["platinum"]
    cities = [f"city{i % 10}" for i in range(52)] + [f"town{i}" for i in range(8)]
    lines = [
        {"run_id": f"r{i}", "task_id": f"t{i}", "seq": 0, "tool": "member", "call_id": f"c{i}",
         "arguments": {}, "result": {"tier": tier, "city": city}, "status": "ok"}
        for i, (tier, city) in enumerate(zip(tiers, cities, strict=True))
    ]  # fmt: skip
    source = tmp_path / "calls.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    ingest([source], tmp_path / "store.duckdb")
    found = mine(tmp_path / "store.duckdb", budget=False)
    (tier,) = _sets(found, "result.tier")
    assert sorted(tier.params["values"]) == ["gold", "platinum", "silver"]
    assert tier.evidence is not None and tier.evidence.unseen_mass == pytest.approx(
        1 / 60, abs=1e-6
    )
    assert not _sets(found, "result.city")  # 8 of 60 seen once: 13% unseen


def test_review_show_says_why_a_set_was_listed(candidates: ContractFile, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tracemine.cli import app

    (status,) = _sets(candidates, "result.status")
    path = tmp_path / "candidates.json"
    path.write_text(candidates.model_dump_json(), encoding="utf-8")
    shown = CliRunner().invoke(app, ["review", "show", "--contracts", str(path), status.id])
    assert shown.exit_code == 0, shown.output
    assert "closed set: a new task brings an unseen value with chance 0.0%" in shown.output
    assert "pooled: family one_of/result/string" in shown.output
