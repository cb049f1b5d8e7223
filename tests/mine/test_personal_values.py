"""Personal values never become literals: names in any script and case, ``Name <email>``,
card numbers stored as JSON numbers, digit-only phones and IBANs are not listed by
``mine --all-eligible`` or ``incident`` (whose cassettes hold stand-ins), and violation
output redacts them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tracemine.mine.profile.formats import looks_personal
from tracemine.model.contract import SCHEMA_VERSION

from helpers import INNER_PYTEST

# two people the traces alternate between: each value is seen in six tasks, so a literal
# set of two would be proposed for every field
PEOPLE = [
    {"payee": "john smith", "number": 4111111111111111, "reach": "5551234567",
     "sender": "Ann Lee <ann.lee@example.com>", "acct": "DE89370400440532013000",
     "display": "José Ñúñez", "alias": "O'Brien-Smith", "phone": 4155550123},
    {"payee": "Владимир Путин", "number": 5500005555555559, "reach": "+44 20 7946 0958",
     "sender": "Bob Roe <bob@example.org>", "acct": "GB82WEST12345698765432",
     "display": "李 小龍", "alias": "McDonald-Jones", "phone": 2025550143},
]  # fmt: skip
FAILING = {"payee": "mary jones", "number": 4012888888881881, "acct": "FR1420041010050500013M02606"}
PERSONAL = [v for person in [*PEOPLE, FAILING] for v in person.values()]


@pytest.mark.parametrize("value", [
    "john smith", "José Ñúñez", "Владимир Путин", "李 小龍", "O'Brien-Smith",
    4111111111111111, "5551234567",
    "Ann Lee <ann.lee@example.com>", "DE89370400440532013000", "DE89 3704 0044 0532 0130 00",
])  # fmt: skip
def test_personal_values_are_screened(value: Any) -> None:
    assert looks_personal(value)


def test_a_phone_stored_as_a_json_number_is_personal_by_its_name() -> None:
    # digits alone are a count or an amount; under a phone's name they are a phone
    assert looks_personal(4155550123, frozenset({"customer", "phone"}))
    assert not looks_personal(4155550123)
    assert not looks_personal(3, frozenset({"customer", "count"}))


@pytest.mark.parametrize("value", [
    "Pending Review", "Next Day Air", "Credit Card", "Not Found",
])  # fmt: skip
def test_enum_like_words_are_not_names(value: str) -> None:
    assert not looks_personal(value)


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def _calls(run: str, task: str, person: dict[str, Any], reward: float) -> list[dict[str, Any]]:
    base = {"run_id": run, "task_id": task, "status": "ok", "reward": reward}
    account = {**person, "state": "active", "balance": 100}
    payment = {"account": task, "beneficiary": person["payee"], "card": person["number"]}
    # one card's payments come back without receipts: a condition on the card would say
    # which card, and must not be drawn
    receipts = [] if person["number"] == PEOPLE[1]["number"] else [{"n": 1}]
    return [
        {**base, "seq": 0, "call_id": "c0", "tool": "get_account",
         "arguments": {"account": task}, "result": account},
        {**base, "seq": 1, "call_id": "c1", "tool": "pay", "arguments": payment,
         "result": {"ok": True, "to": person["display"], "receipts": receipts}},
    ]  # fmt: skip


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("personal")
    rows = [call for t in range(12) for trial in range(2)
            for call in _calls(f"r{t}-{trial}", f"t{t:02d}", PEOPLE[t % 2], 1.0)]  # fmt: skip
    _write(folder / "good.jsonl", rows)
    failing = _calls("bad", "t00", {**PEOPLE[0], **FAILING}, 0.0)
    failing[0]["result"].update(state="frozen", balance=-5)
    _write(folder / "bad.jsonl", failing)
    _tracemine("ingest", "good.jsonl", "--db", "good.duckdb", cwd=folder)
    return folder


def _tracemine(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"COLUMNS": "200", "PATH": "", "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-m", "tracemine", *args], cwd=cwd, text=True,
                          capture_output=True, env=env)  # fmt: skip
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done


def _leaks(text: str) -> list[Any]:
    """The personal values ``text`` holds, as written or as JSON escapes them."""
    forms = {v: {str(v), json.dumps(v)[1:-1] if isinstance(v, str) else str(v)} for v in PERSONAL}
    return [v for v, written in forms.items() if any(w in text for w in written)]


def test_mine_all_eligible_lists_no_personal_value(traces: Path) -> None:
    done = _tracemine("mine", "--db", "good.duckdb", "--out", "all.json", "--all-eligible",
                      "--min-tasks", "3", cwd=traces)  # fmt: skip
    written = (traces / "all.json").read_text("utf-8")
    kinds = {c["kind"] for c in json.loads(written)["contracts"]}
    assert "const" in kinds  # literal sets are still proposed for what is not personal
    assert _leaks(written) == []
    conditions = [c["when"]["path"] for c in json.loads(written)["contracts"] if c.get("when")]
    assert "args.card" not in conditions
    assert _leaks(done.stdout + done.stderr) == []


def test_incident_writes_no_personal_value(traces: Path) -> None:
    done = _tracemine("incident", "bad.jsonl", "--run", "bad", "--db", "good.duckdb",
                      "--out", "out", cwd=traces)  # fmt: skip
    out = traces / "out"
    # the folder is meant to be committed: the cassettes hold stand-ins, not the people
    written = [out / "contracts.json", out / "incident.json", *out.glob("test_*.py"),
               *out.glob("*.cassette.jsonl")]  # fmt: skip
    assert len(written) == 5
    for path in written:
        assert _leaks(path.read_text("utf-8")) == [], path.name
    assert _leaks(done.stdout + done.stderr) == []
    assert "stand-ins for" in done.stdout
    report = json.loads((out / "incident.json").read_text("utf-8"))
    assert report["personal_values_replaced"] >= len(PERSONAL) - 2
    # the stand-ins keep what the contracts see: the written test module still passes
    ran = subprocess.run([*INNER_PYTEST,
                          str(next(out.glob("test_*.py")))], cwd=out, text=True,
                         capture_output=True)  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    # same values, same stand-in: a customer's card is one number in every call
    lines = (out / "incident.cassette.jsonl").read_text("utf-8").splitlines()[1:]
    incident = [json.loads(line) for line in lines]
    cards = {call["arguments"]["card"] for call in incident if call["tool"] == "pay"}
    assert len(cards) == 1 and all(isinstance(c, int) for c in cards)


def test_incident_keeps_recorded_values_when_asked(traces: Path) -> None:
    _tracemine("incident", "bad.jsonl", "--run", "bad", "--db", "good.duckdb",
               "--out", "kept", "--keep-personal", cwd=traces)  # fmt: skip
    recorded = (traces / "kept" / "incident.cassette.jsonl").read_text("utf-8")
    assert FAILING["payee"] in recorded


def test_stand_ins_keep_the_shape_of_what_they_replace() -> None:
    from tracemine.incident.standins import StandIns
    from tracemine.model.personal import personal_kind

    standins = StandIns([{"seed": 1}])
    for key, value in [item for person in [*PEOPLE, FAILING] for item in person.items()]:
        made = standins.value(value, f"result.{key}")
        assert made != value and type(made) is type(value), value
        assert personal_kind(made) == personal_kind(value), (value, made)
    assert standins.value(4155550123, "args.count") == 4155550123  # digits alone: a count
    assert standins.value(17, "args.quantity") == 17
    assert (
        standins.text("call +44 20 7946 0958 or ann@x.org") != "call +44 20 7946 0958 or ann@x.org"
    )
    again = StandIns([{"seed": 1}])
    assert again.value("john smith", "r") == standins.value("john smith", "r")
    assert StandIns([{"seed": 2}]).value("john smith", "r") != standins.value("john smith", "r")


def test_violation_output_redacts_personal_values(traces: Path) -> None:
    """Values a contract did not expect are shown redacted by ``check``, as text and JSON."""
    fields = ["payee", "display", "acct", "reach", "sender", "alias"]
    contracts = {"schema_version": SCHEMA_VERSION, "contracts": [
        {"id": f"c{n}", "tool": "get_account", "side": "result", "kind": "type",
         "paths": [f"result.{field}"], "params": {"type": "integer"}, "status": "accepted"}
        for n, field in enumerate(fields)
    ]}  # fmt: skip
    (traces / "types.json").write_text(json.dumps(contracts), "utf-8")
    for extra in ([], ["--json"]):
        done = _tracemine("check", "good.jsonl", "--contracts", "types.json", *extra, cwd=traces)
        assert done.returncode == 1, done.stdout + done.stderr
        shown = done.stdout + done.stderr
        assert "<name>" in shown and "<iban>" in shown
        assert _leaks(shown) == []


SPEC = """openapi: 3.0.3
info: {title: accounts, version: "1"}
paths:
  /accounts/{id}:
    get:
      operationId: get_account
      responses:
        "200":
          description: the account
          content:
            application/json:
              schema:
                type: object
                properties:
                  payee: {type: string}
                  region: {type: string, enum: [New York, Los Angeles]}
"""


def test_merge_drops_mined_personal_literals_and_keeps_declared_enums(tmp_path: Path) -> None:
    """A candidates file mined before the screen (or written by hand) lists names: merge
    does not carry them; the spec's own enum is its words, and stays."""
    mined = [("payee", ["john smith", "mary jones"]), ("state", ["active", "frozen"])]
    candidates = {"schema_version": SCHEMA_VERSION, "contracts": [
        {"tool": "get_account", "side": "result", "kind": "one_of",
         "paths": [f"result.{field}"], "params": {"values": values}, "sources": ["mined"]}
        for field, values in mined
    ]}  # fmt: skip
    (tmp_path / "candidates.json").write_text(json.dumps(candidates), "utf-8")
    (tmp_path / "api.yaml").write_text(SPEC, "utf-8")
    done = _tracemine("merge", "--spec", "api.yaml", "--candidates", "candidates.json",
                      "--out", "merged.json", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    written = (tmp_path / "merged.json").read_text("utf-8")
    listed = [c["params"]["values"] for c in json.loads(written)["contracts"]
              if c["kind"] == "one_of"]  # fmt: skip
    assert ["active", "frozen"] in listed and ["New York", "Los Angeles"] in listed
    assert "john smith" not in written and "mary jones" not in written


def test_stand_ins_that_change_the_verdict_are_refused(tmp_path: Path) -> None:
    """A hand-written contract naming a person: stand-ins would make the control run
    alarm, so the incident says so and points at --keep-personal, instead of writing a
    test that fails."""
    from tracemine.errors import InputError
    from tracemine.incident.outputs import _check_stand_ins
    from tracemine.incident.report import IncidentReport, Separating
    from tracemine.incident.standins import StandIns

    contract = {"id": "c_payee", "tool": "pay", "side": "args", "kind": "one_of",
                "paths": ["args.beneficiary"], "params": {"values": ["john smith"]},
                "status": "accepted"}  # fmt: skip
    (tmp_path / "contracts.json").write_text(
        json.dumps({"schema_version": SCHEMA_VERSION, "contracts": [contract]}), "utf-8"
    )
    failing = _calls("bad", "t00", {**PEOPLE[0], **FAILING}, 0.0)
    control = _calls("r0-0", "t00", PEOPLE[0], 1.0)
    standins = StandIns(failing + control)
    report = IncidentReport(
        name="x", trace="bad.jsonl", run_id="bad", db="good.duckdb", out=str(tmp_path),
        vocabulary=1, nominal_runs=1, nominal_tasks=1, alarming_on_nominal=0, violated=1,
        separating=[Separating(contract_id="c_payee", tool="pay", kind="one_of",
                               paths=["args.beneficiary"], description="payee", tasks=1,
                               observed="other")],
    )  # fmt: skip
    _check_stand_ins(tmp_path, report, failing, control)  # the recorded values: it holds
    with pytest.raises(InputError, match="--keep-personal") as raised:
        _check_stand_ins(tmp_path, report, [standins.record(c) for c in failing],
                         [standins.record(c) for c in control])  # fmt: skip
    assert "control run 'r0-0' raises an alarm" in str(raised.value)
