"""The injector: every class applied and recorded, only where it changes something, reproducibly."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from tracemine.errors import InputError
from tracemine.faults import FaultClass, FaultGroup, inject, parse_classes
from tracemine.faults.paths import get
from tracemine.simulate import simulate


@pytest.fixture(scope="module")
def nominal() -> list[dict[str, Any]]:
    return simulate("all", tasks=24, seed=21, trials=2)


def by_run(runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {run["run_id"]: run for run in runs}


def value_at(call: dict[str, Any], side: str, path: str, pattern_tokens: list[Any]) -> Any:
    root = call["arguments"] if side == "args" else call["result"]
    try:
        return get(root, pattern_tokens)
    except (KeyError, IndexError, TypeError):
        return "<absent>"


def tokens_of(path: str) -> list[Any]:
    tokens: list[Any] = []
    for part in path.replace("[", ".[").split(".")[1:]:
        tokens.append(int(part[1:-1]) if part.startswith("[") else part)
    return tokens


@pytest.mark.parametrize("fault_class", list(FaultClass))
def test_every_class_is_applied_and_recorded(
    nominal: list[dict[str, Any]], fault_class: FaultClass
) -> None:
    faulty, records = inject(nominal, [fault_class], rate=1.0, seed=3)
    assert records, f"{fault_class} found no site in {len(nominal)} runs"
    assert len({r.fault_id for r in records}) >= len(nominal) // 3
    before, after = by_run(nominal), by_run(faulty)
    for record in records:
        assert record.fault_class == fault_class and record.group == fault_class.group
        assert record.before != record.after, "a fault always changes what it touches"
        index = next(
            i for i, c in enumerate(after[record.run_id]["calls"]) if c["seq"] == record.seq
        )
        old = before[record.run_id]["calls"][index]
        new = after[record.run_id]["calls"][index]
        assert record.tool == new["tool"] and record.call_id == new["call_id"]
        if record.side in ("args", "result") and record.path != "result":
            tokens = tokens_of(record.path)
            assert value_at(old, record.side, record.path, tokens) != value_at(
                new, record.side, record.path, tokens
            )
            assert "[*]" in record.path_pattern or "[" not in record.path
        else:
            assert old != new


def test_completeness_faults_touch_ids_status_and_timing(nominal: list[dict[str, Any]]) -> None:
    faulty, records = inject(nominal, parse_classes("completeness"), rate=1.0, seed=8)
    paths = {r.fault_class: r.path for r in records}
    assert paths[FaultClass.MISSING_RESULT] == "result"
    assert paths[FaultClass.DUPLICATE_CALL_ID] == "call_id"
    assert paths[FaultClass.LATE_RESULT] == "ended_at"
    runs = by_run(faulty)
    for record in records:
        run = runs[record.run_id]
        call = next(c for c in run["calls"] if c["seq"] == record.seq)
        if record.fault_class == FaultClass.MISSING_RESULT:
            assert call["status"] == "missing" and call["result"] is None
        elif record.fault_class == FaultClass.DUPLICATE_CALL_ID:
            assert sum(c["call_id"] == call["call_id"] for c in run["calls"]) == 2
        elif record.fault_class == FaultClass.LATE_RESULT:
            assert call["ended_at"] > run["ended_at"]
        elif record.fault_class == FaultClass.EXECUTION_ERROR:
            assert call["status"] == "tool_error" and run["reward"] in (0.0, 1.0)


def test_one_fault_per_faulted_run_and_the_rest_untouched(nominal: list[dict[str, Any]]) -> None:
    faulty, records = inject(nominal, list(FaultClass), rate=0.5, seed=2)
    faulted = {r.run_id for r in records}
    assert 0 < len(faulted) < len(nominal)
    per_run: dict[str, set[str]] = {}
    for record in records:
        per_run.setdefault(record.run_id, set()).add(record.fault_id)
    assert all(len(ids) == 1 for ids in per_run.values())
    original = by_run(nominal)
    for run in faulty:
        if run["run_id"] not in faulted:
            assert run == original[run["run_id"]]
        else:
            assert run != original[run["run_id"]]


def test_nominal_stays_nominal(nominal: list[dict[str, Any]]) -> None:
    snapshot = copy.deepcopy(nominal)
    faulty, records = inject(nominal, list(FaultClass), rate=0.0, seed=1)
    assert records == [] and faulty == nominal
    inject(nominal, list(FaultClass), rate=1.0, seed=1)
    assert nominal == snapshot, "the input is never modified"


def test_same_seed_same_faults(nominal: list[dict[str, Any]]) -> None:
    first = inject(nominal, list(FaultClass), rate=0.4, seed=9)
    second = inject(nominal, list(FaultClass), rate=0.4, seed=9)
    third = inject(nominal, list(FaultClass), rate=0.4, seed=10)

    def dump(result: tuple[list[dict[str, Any]], list[Any]]) -> str:
        runs, records = result
        return json.dumps([runs, [r.model_dump(mode="json") for r in records]], sort_keys=True)

    assert dump(first) == dump(second)
    assert dump(first) != dump(third)


def test_all_classes_are_drawn_over_a_suite(nominal: list[dict[str, Any]]) -> None:
    _, records = inject(simulate("all", tasks=90, seed=5, trials=2), list(FaultClass), 1.0, 4)
    assert {r.fault_class for r in records} == set(FaultClass)


def test_amount_from_id_prefers_the_refund_arguments() -> None:
    runs = [r for r in simulate("commerce", tasks=30, seed=6) if r["family"] == "commerce.refund"]
    faulty, records = inject(runs, [FaultClass.AMOUNT_FROM_ID], rate=1.0, seed=1)
    refund_records = [r for r in records if r.tool == "create_refund"]
    assert refund_records
    record = refund_records[0]
    assert record.path == "args.amount_cents"
    call = next(c for c in by_run(faulty)[record.run_id]["calls"] if c["seq"] == record.seq)
    digits = int(call["arguments"]["order_id"][2:])
    assert call["arguments"]["amount_cents"] == digits


def test_parse_classes() -> None:
    assert parse_classes("all") == list(FaultClass)
    structural = parse_classes("structural")
    assert structural and all(c.group == FaultGroup.STRUCTURAL for c in structural)
    assert parse_classes("wrong-id, missing_result") == [
        FaultClass.MISSING_RESULT,
        FaultClass.WRONG_ID,
    ]
    for bad in ("nope", " , "):
        with pytest.raises(InputError):
            parse_classes(bad)
    with pytest.raises(InputError, match="rate"):
        inject([], list(FaultClass), rate=1.5)


def _one_call_run(arguments: dict[str, Any], result: Any) -> dict[str, Any]:
    call = {"seq": 0, "tool": "lookup", "status": "ok", "arguments": arguments, "result": result}
    return {"run_id": "r0", "task_id": "t0", "calls": [call]}


# digits of other scripts, superscripts (digits int() refuses) and more digits than int()
# reads: each was once a ValueError in the middle of a mine's detection estimate
AWKWARD_TEXTS = ["46 m²", "1451474²111554", "٣٤ m²", "𝟙𝟚²", "²³", "9" * 5000]


@pytest.mark.parametrize("text", AWKWARD_TEXTS)
def test_wrong_type_turns_any_string_into_another_json_type(text: str) -> None:
    faulty, records = inject([_one_call_run({}, {"area": text})], ["wrong_type"], 1.0, 0)
    assert len(records) == 1
    after = faulty[0]["calls"][0]["result"]["area"]
    assert not isinstance(after, str)
    json.dumps(after, allow_nan=False)  # still a JSON value
    if text == "٣٤ m²":
        assert after == 34  # digits of any script are digits


@pytest.mark.parametrize("text", AWKWARD_TEXTS)
def test_amount_from_id_reads_only_digits_int_accepts(text: str) -> None:
    run = _one_call_run({"order_id": text, "amount_cents": 7}, {"ok": True})
    faulty, records = inject([run], ["amount_from_id"], 1.0, 0)
    amount = faulty[0]["calls"][0]["arguments"]["amount_cents"]
    if text == "²³":
        assert not records and amount == 7  # no digit an amount could come from
    else:
        assert isinstance(amount, int) and 0 < amount < 10**18
