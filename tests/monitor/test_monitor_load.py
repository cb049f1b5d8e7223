"""A contract file the monitor cannot fully trust is refused on load, with a reason."""

from __future__ import annotations

import json
import time
import warnings

import pytest
from monitor_contracts import contract

from tracemine.errors import ContractFileError
from tracemine.monitor import ContractLoadError, Monitor, ProposedContractsIgnored


def _write(tmp_path, data) -> str:
    path = tmp_path / "contracts.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), "utf-8")
    return str(path)


GOOD = {
    "id": "c1",
    "tool": "t",
    "side": "result",
    "kind": "present",
    "paths": ["result.a"],
    "status": "accepted",
}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("not json", "not JSON"),
        ([], "expected a JSON object"),
        ({"contracts": []}, "no schema_version"),
        ({"schema_version": "3", "contracts": []}, "schema_version '3' is not supported"),
        ({"schema_version": "1", "contracts": {}}, "'contracts' must be a list"),
        ({"schema_version": "1", "contracts": [{**GOOD, "kind": "vibes"}]}, "unknown kind 'vibes'"),
        (
            {"schema_version": "1", "contracts": [{**GOOD, "paths": ["output.a"]}]},
            "must start with",
        ),
        (
            {"schema_version": "1", "contracts": [{**GOOD, "kind": "range"}]},
            "params.min and/or max",
        ),
        ({"schema_version": "1", "contracts": [{**GOOD, "kind": "equals"}]}, "exactly two paths"),
        (
            {
                "schema_version": "1",
                "contracts": [{**GOOD, "when": {"path": "result.a", "op": "~"}}],
            },
            "when.op",
        ),
        ({"schema_version": "1", "contracts": [{**GOOD, "id": ""}]}, "'id'"),
        (
            {
                "schema_version": "1",
                "contracts": [
                    {**GOOD, "kind": "bounded_by", "side": "run", "params": {"from_tool": "o"}}
                ],
            },
            "bounded_by needs params.from_path",
        ),
    ],
)
def test_malformed_files_are_refused_with_a_reason(tmp_path, data, message) -> None:
    with pytest.raises(ContractLoadError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Monitor.load(_write(tmp_path, data))


def test_load_error_is_a_contract_file_error(tmp_path) -> None:
    with pytest.raises(ContractFileError):
        Monitor.load(tmp_path / "missing.json")


@pytest.mark.parametrize(
    "regex", [r"(\w)\1", r"(?=a)b", "(?>a+)b", "a++b", "(.*){1,32000}", "a" * 600]
)
def test_unsafe_patterns_are_refused(write_contracts, regex) -> None:
    path = write_contracts(contract("pattern", ["result.id"], params={"regex": regex}))
    with pytest.raises(ContractLoadError, match="refused"):
        Monitor.load(path)


def test_unsafe_pattern_on_a_rejected_contract_does_not_block(write_contracts) -> None:
    item = contract("pattern", ["result.id"], params={"regex": "(a+)+$"}, status="rejected")
    assert Monitor.load(write_contracts(item)).tools == []


def test_long_strings_are_not_matched(make_monitor) -> None:
    monitor = make_monitor(contract("pattern", ["result.id"], params={"regex": "^[a-z]+@[a-z]+$"}))
    started = time.perf_counter()
    receipt = monitor.check("get_order", {}, {"id": "a" * 1_000_000})
    assert time.perf_counter() - started < 0.5
    assert receipt.coverage == "partial" and "longer than" in receipt.not_evaluated[0].reason


def test_file_written_by_the_model_round_trips(make_monitor) -> None:
    monitor = make_monitor(contract("present", ["result.a"]), contract("present", ["args.b"]))
    assert monitor.tools == ["get_order"] and len(monitor.contracts) == 2


def test_a_file_of_proposed_contracts_only_says_that_it_checks_nothing(write_contracts) -> None:
    proposed = [contract("non_empty", ["result.items"], status="proposed"),
                contract("non_negative", ["result.total"], status="proposed")]  # fmt: skip
    path = write_contracts(*proposed)
    with pytest.warns(ProposedContractsIgnored, match=r"2 of 2 contracts are proposed") as told:
        monitor = Monitor.load(path)
    assert len(told) == 1 and "include_proposed=True" in str(told[0].message)
    assert told[0].filename == __file__  # points at the caller's line, not the monitor's
    assert monitor.tools == [] and monitor.ignored_proposed == 2
    assert monitor.notices and str(path) in monitor.notices[0]
    # a decision either way is enough: no warning, and proposed ones enforced when asked
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Monitor.load(path, include_proposed=True).tools == ["get_order"]
        quiet = Monitor.load(path, include_proposed=False)
    assert quiet.tools == [] and quiet.ignored_proposed == 2 and quiet.notices


def test_accepted_contracts_load_without_a_notice(write_contracts) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        monitor = Monitor.load(write_contracts(contract("non_empty", ["result.items"])))
    assert monitor.notices == () and monitor.ignored_proposed == 0


def _twice(first: str, second: str) -> dict:
    one_of = {**GOOD, "id": "c_8b3ccbacafb7", "kind": "one_of", "paths": ["result.status"]}
    return {"schema_version": "1", "contracts": [
        GOOD,
        {**one_of, "params": {"values": ["delivered", "placed", "shipped"]}, "status": first},
        {**one_of, "params": {"values": ["shipped", "delivered", "cancelled"]}, "status": second},
    ]}  # fmt: skip


@pytest.mark.parametrize(("first", "second"), [("accepted", "proposed"), ("accepted", "rejected")])
def test_one_id_for_two_contracts_is_refused(tmp_path, first, second) -> None:
    # a receipt naming c_8b3c… could not say which enum fired; even a rejected twin makes
    # the file ambiguous for the decisions and receipts that name it
    data = _twice(first, second)
    message = r"contract id c_8b3ccbacafb7 is repeated: contracts\[1\] and contracts\[2\]"
    with pytest.raises(ContractLoadError, match="contracts.json: " + message):
        Monitor.load(_write(tmp_path, data))
    with pytest.raises(ContractLoadError, match="^merged: " + message + "$"):
        Monitor.from_dict(data, origin="merged", include_proposed=True)
