"""Review cards: every contract of a file in exactly one item, items few per tool, item
ids that survive re-mining, statuses that say what was decided, and item ids the CLI
decides by."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from review_samples import sample_contracts

from tracemine import build_cards, cards_json, ingest, load_reviewed, mine, simulate, write_traces
from tracemine.model.contract import ContractFile, MergeLabel, save_contracts
from tracemine.review import decide, save_review

ROOT = Path(__file__).resolve().parents[2]
SUITES = {
    "agentdojo": ROOT / "data" / "agentdojo" / "agentdojo.jsonl.gz",
    "bfcl": ROOT / "data" / "bfcl" / "bfcl.jsonl.gz",
}
_STORES: dict[tuple[str, int], Path] = {}
_MINED: dict[tuple[str, int], ContractFile] = {}


def _store(name: str, factory: pytest.TempPathFactory, seed: int = 0) -> Path:
    """The simulator's runs are drawn again with another seed (new tasks, a re-mine on
    new data); a real suite is the same file, mined again with another seed."""
    key = (name, seed if name == "commerce" else 0)
    if key not in _STORES:
        folder = factory.mktemp(name)
        if name == "commerce":
            runs = simulate("commerce", tasks=40, seed=seed)
            traces = write_traces(runs, folder / "t.jsonl", "flat")
        else:
            traces = SUITES[name]
        ingest([traces], folder / "store.duckdb")
        _STORES[key] = folder / "store.duckdb"
    return _STORES[key]


def _mined(name: str, factory: pytest.TempPathFactory, seed: int = 0) -> ContractFile:
    if (name, seed) not in _MINED:
        _MINED[name, seed] = mine(_store(name, factory, seed), seed=seed, run_level=True)
    return _MINED[name, seed]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["commerce", "agentdojo", "bfcl"])
def test_card_json_holds_every_contract_exactly_once(
    name: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    contracts = _mined(name, tmp_path_factory)
    shown = cards_json(build_cards(contracts))
    ids = Counter(cid for tool in shown["tools"] for item in tool["items"]
                  for cid in item["contracts"])  # fmt: skip
    assert ids == Counter(c.id for c in contracts.contracts)
    assert set(shown) == {"tools"}
    for tool in shown["tools"]:
        assert set(tool) == {"tool", "items"}
        for item in tool["items"]:
            assert set(item) == {"item", "text", "contracts", "status"}
            assert item["contracts"] and item["status"] == "undecided" and item["text"]
    # a person reads a handful of items per tool, not one line per contract
    per_tool = sorted(len(t["items"]) for t in shown["tools"] if t["items"])
    assert per_tool[len(per_tool) // 2] <= 10


@pytest.mark.slow
@pytest.mark.parametrize("name", ["commerce", "agentdojo"])
def test_item_ids_survive_a_re_mine_with_another_seed(
    name: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    first, second = _mined(name, tmp_path_factory), _mined(name, tmp_path_factory, seed=7)

    def items(contracts: ContractFile) -> dict[str, str]:
        return {cid: item.item for card in build_cards(contracts) for item in card.items
                for cid in item.contracts}  # fmt: skip

    before, after = items(first), items(second)
    role = {c.id: (c.implied_by, c.folded_into is None) for c in first.contracts}
    # a contract mined both times, in the same role both times (standing on its own, or
    # folded into its side's schema), sits in the same item; one a schema covered in one
    # mine and not the other changed role, and its item says "changed"
    same = [c.id for c in second.contracts
            if c.id in before and role[c.id] == (c.implied_by, c.folded_into is None)]  # fmt: skip
    assert len(same) > len(before) // 2
    assert {cid: after[cid] for cid in same} == {cid: before[cid] for cid in same}
    assert {c.id for c in first.contracts} != {c.id for c in second.contracts}  # it did move


def test_statuses_say_what_was_decided(candidates: Path) -> None:
    contracts, review, path = load_reviewed(candidates)
    (card, _) = build_cards(contracts)
    structure = card.items[0]
    assert structure.kind == "structure" and structure.status == "undecided"
    members = [c for c in contracts.contracts if c.id in structure.contracts]
    decide(review, members[:1], "accepted", reviewer="t")
    save_review(review, path)
    assert build_cards(load_reviewed(candidates)[0])[0].items[0].status == "changed"
    decide(review, members, "accepted", reviewer="t")
    save_review(review, path)
    assert build_cards(load_reviewed(candidates)[0])[0].items[0].status == "accepted"
    decide(review, members[:1], "rejected", reason="no", reviewer="t")
    save_review(review, path)
    assert build_cards(load_reviewed(candidates)[0])[0].items[0].status == "mixed"


def _tracemine(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracemine", *args], cwd=cwd, text=True,
                          capture_output=True, env={**os.environ, "COLUMNS": "80"})  # fmt: skip


def test_review_cards_cli_and_deciding_by_item_id(candidates: Path) -> None:
    shown = _tracemine(candidates.parent, "review", "cards", "-c", candidates.name)
    assert shown.returncode == 0, shown.stderr
    assert all(len(line) <= 80 for line in shown.stdout.splitlines())
    listed = json.loads(_tracemine(candidates.parent, "review", "cards", "-c", candidates.name,
                                   "--tool", "get_order", "--json").stdout)  # fmt: skip
    (tool,) = listed["tools"]
    values = next(i for i in tool["items"] if len(i["contracts"]) > 1)
    assert values["item"] in shown.stdout and values["item"].startswith("i_")
    done = _tracemine(candidates.parent, "review", "reject", values["item"][:8], "-c",
                      candidates.name, "--reason", "too tight")  # fmt: skip
    assert done.returncode == 0, done.stderr
    reviewed, _, _ = load_reviewed(candidates)
    statuses = {c.id: c.status.value for c in reviewed.contracts}
    assert {statuses[cid] for cid in values["contracts"]} == {"rejected"}
    assert sum(s == "rejected" for s in statuses.values()) == len(values["contracts"])
    unknown = _tracemine(candidates.parent, "review", "accept", "i_0000", "-c", candidates.name)
    assert unknown.returncode == 2 and "item id 'i_0000' matches no item" in unknown.stderr
    wrong = _tracemine(candidates.parent, "review", "cards", "-c", candidates.name, "--tool", "x")
    assert wrong.returncode == 2 and "--tool x: no such tool" in wrong.stderr


def test_a_contradicted_declaration_is_an_item_of_its_own(tmp_path: Path) -> None:
    contracts = sample_contracts()
    contracts.contracts[3].label = MergeLabel.OBSERVED_VIOLATES_DECLARED
    path = save_contracts(contracts, tmp_path / "c.json")
    cards = build_cards(load_reviewed(path)[0])
    alone = [i for card in cards for i in card.items if contracts.contracts[3].id in i.contracts]
    assert [(i.kind, i.contracts) for i in alone] == [("contradicted", [contracts.contracts[3].id])]


def test_a_card_reads_structure_then_values_then_runs_then_declarations(
    candidates: Path,
) -> None:
    order, search = build_cards(load_reviewed(candidates)[0])
    assert [(i.kind, i.field) for i in order.items] == [
        ("structure", ""), ("values", "result"), ("declared", ""),
    ]  # fmt: skip
    structure, values, declared = order.items
    assert structure.text.splitlines()[1:] == ["result.order_id  always present",
                                               "result.total  integer"]  # fmt: skip
    assert values.text.splitlines()[1] == "range(result.total)  (30 tasks, 2 held-out viol.)"
    assert declared.title.startswith("result declared by a spec only")
    # a conditional non-empty is a value claim; the call cap is the tool's run-level item
    assert [i.kind for i in search.items] == ["values", "runs"]
    assert len({i.item for card in (order, search) for i in card.items}) == 5


@pytest.mark.slow
def test_the_not_kept_line_adds_up(tmp_path_factory: pytest.TempPathFactory) -> None:
    contracts = _mined("commerce", tmp_path_factory)
    said = [card for card in build_cards(contracts) if card.not_kept]
    assert any("kept all the same as checks of a schema" in card.not_kept for card in said)
    for card in said:
        numbers = [int(n) for n in re.findall(r"\d+", card.not_kept)]
        if "less" in card.not_kept:
            dropped, _, unproven, priced, folded = numbers
            assert unproven + priced - folded == dropped, card.not_kept
        counts = contracts.provenance["summary"][card.tool]
        assert numbers[:2] == [counts["dropped"], counts["candidates"]], card.not_kept
