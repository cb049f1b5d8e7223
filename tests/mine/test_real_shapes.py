"""Results shaped as real tool suites return them (tests/data/real_shapes, and the bundled
AgentDojo and BFCL replays): maps keyed by ids, prices as numbers, ids with patterns, paged
lists with counts. Mined on some tasks, checked on the others."""

from __future__ import annotations

import copy
import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tracemine.faults.structural import retyped
from tracemine.ingest import ingest
from tracemine.mine import mine
from tracemine.model.contract import ContractFile, Kind
from tracemine.model.paths import ANY_KEY, WILDCARD, parse
from tracemine.monitor import Monitor

ROOT = Path(__file__).resolve().parents[2]
SHAPES = ROOT / "tests" / "data" / "real_shapes" / "shapes.jsonl"
SUITES = {
    "real_shapes": SHAPES,
    "agentdojo": ROOT / "data" / "agentdojo" / "agentdojo.jsonl.gz",
    "bfcl": ROOT / "data" / "bfcl" / "bfcl.jsonl.gz",
}
VALUE_KINDS = frozenset({
    Kind.TYPE, Kind.NOT_NULL, Kind.RANGE, Kind.NON_NEGATIVE, Kind.POSITIVE, Kind.PATTERN,
    Kind.FORMAT, Kind.ONE_OF, Kind.CONST, Kind.LENGTH, Kind.NON_EMPTY,
})  # fmt: skip
"""Kinds that speak of the value at a path: a field carrying one has a value contract."""


def _read(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _split(records: list[dict[str, Any]]) -> tuple[list[dict], list[dict]]:
    """About 70% of the tasks to mine, the rest to check (every third task, in order)."""
    tasks = sorted({r["task_id"] for r in records})
    fresh = set(tasks[2::3])
    return ([r for r in records if r["task_id"] not in fresh],
            [r for r in records if r["task_id"] in fresh])  # fmt: skip


_MINED: dict[str, dict] = {}


def _mined(name: str, tmp_path_factory: pytest.TempPathFactory) -> dict:
    if name not in _MINED:
        train, fresh = _split(_read(SUITES[name]))
        folder = tmp_path_factory.mktemp(name)
        source = folder / "train.jsonl"
        source.write_text("".join(json.dumps(r) + "\n" for r in train), encoding="utf-8")
        ingest([source], folder / "store.duckdb")
        contracts = mine(folder / "store.duckdb")
        _MINED[name] = {"name": name, "contracts": contracts, "train": train, "fresh": fresh}
    return _MINED[name]


@pytest.fixture(scope="module", params=sorted(SUITES))
def mined(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict:
    return _mined(request.param, tmp_path_factory)


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return _mined("real_shapes", tmp_path_factory)


def _tokens(value: Any, prefix: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    """Every object member below ``value`` with its tokens (keys, and indices in arrays)."""
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for token, inner in items:
        here = (*prefix, token)
        if isinstance(value, dict):
            yield here, inner
        if isinstance(inner, dict | list):
            yield from _tokens(inner, here)


def _matches(steps: tuple, tokens: tuple) -> bool:
    return len(steps) == len(tokens) and all(
        (s is WILDCARD and isinstance(t, int)) or (s is ANY_KEY and isinstance(t, str)) or s == t
        for s, t in zip(steps, tokens, strict=True)
    )


def _put(result: Any, tokens: tuple, value: Any) -> Any:
    out = copy.deepcopy(result)
    target = out
    for token in tokens[:-1]:
        target = target[token]
    target[tokens[-1]] = value
    return out


def _types_seen(records: list[dict], tool: str, steps: tuple) -> set[str]:
    seen = set()
    for record in records:
        if record["tool"] == tool and isinstance(record.get("result"), dict | list):
            for tokens, value in _tokens(record["result"]):
                if _matches(steps, tokens):
                    seen.add(_json_type(value))
    return seen


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return {str: "string", list: "array", dict: "object"}[type(value)]


def test_maps_keyed_by_ids_get_a_wildcard_step(shapes: dict) -> None:
    paths = {c.paths[0] for c in shapes["contracts"].contracts}
    assert "result.variants{*}.price" in paths
    assert "result.payment_methods{*}.id" in paths
    # no contract names one record's key
    assert not [p for p in paths if any(ch.isdigit() for ch in p.split("{*}")[0])]
    # fixed fields with digits in some values stay fields
    assert "result.name.first_name" in paths


def test_a_fault_in_another_records_map_entry_is_caught(shapes: dict) -> None:
    file = json.loads(shapes["contracts"].model_dump_json())
    monitor = Monitor.from_dict(file, include_proposed=True)
    call = next(r for r in shapes["fresh"] if r["tool"] == "get_product_details")
    assert monitor.check(call["tool"], call["arguments"], call["result"]).ok
    key = next(iter(call["result"]["variants"]))
    broken = _put(call["result"], ("variants", key, "price"), -12.5)
    receipt = monitor.check(call["tool"], call["arguments"], broken)
    assert {v.path for v in receipt.violations} == {f'result.variants["{key}"].price'}


def test_a_truncated_page_breaks_its_count(shapes: dict) -> None:
    described = {c.description for c in shapes["contracts"].contracts if c.tool == "search_hotels"}
    assert "len(result.results) == result.count" in described
    file = json.loads(shapes["contracts"].model_dump_json())
    monitor = Monitor.from_dict(file, include_proposed=True)
    call = next(r for r in shapes["fresh"] if r["tool"] == "search_hotels" and r["result"]["count"])
    assert monitor.check(call["tool"], call["arguments"], call["result"]).ok
    cut = {**call["result"], "results": call["result"]["results"][:-1]}
    kinds = {v.kind for v in monitor.check(call["tool"], call["arguments"], cut).violations}
    assert "equals" in kinds


def test_wrong_types_and_nulls_in_fields_with_value_contracts_are_caught(mined: dict) -> None:
    """The oracle check: every fresh call, every field some kept contract speaks of the
    value of, made null and made another JSON type (unless mining saw that type there)."""
    contracts: ContractFile = mined["contracts"]
    file = json.loads(contracts.model_dump_json())
    monitor = Monitor.from_dict(file, include_proposed=True)
    carried = {(c.tool, parse(c.paths[0]).steps) for c in contracts.contracts
               if c.kind in VALUE_KINDS and c.side.value == "result"
               and parse(c.paths[0]).function is None}  # fmt: skip
    seen: dict[tuple, set[str]] = {}
    faults = caught = 0
    missed = []
    for call in mined["fresh"]:
        result, args, tool = call.get("result"), call.get("arguments"), call["tool"]
        if not isinstance(result, dict | list) or not monitor.check(tool, args, result).ok:
            continue
        for tokens, value in _tokens(result):
            steps = next((s for t, s in carried if t == tool and _matches(s, tokens)), None)
            if steps is None:
                continue
            if (tool, steps) not in seen:
                seen[tool, steps] = _types_seen(mined["train"], tool, steps)
            for bad in (None, retyped(value, None)):  # type: ignore[arg-type]
                if _json_type(bad) in seen[tool, steps]:
                    continue  # nominal there: no fault
                faults += 1
                if monitor.check(tool, args, _put(result, tokens, bad)).ok:
                    missed.append((tool, tokens, bad))
                else:
                    caught += 1
    assert faults >= 50, faults
    assert caught / faults >= 0.99, (mined["name"], caught, faults, missed[:10])
