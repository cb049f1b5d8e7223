"""`incident` on the six replicas of data/incidents: each is separated by at most 3
contracts that raise no alarm on its known-good runs — the refund by a bound against the
order total fetched earlier, the campaign by its recipients' provenance from the
selection — and the written pytest module passes. A run that nothing separates is
reported with the relation the vocabulary lacks."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import tracemine
from tracemine.incident import IncidentReport, incident

from helpers import INNER_PYTEST

REPLICAS = Path(__file__).parents[2] / "data" / "incidents"
# replica → (tool, kind, argument path, earlier call and path) of the contract written
EXPECTED = {
    "currency_mismatch": ("create_invoice", "provenance", ["args.currency"],
                          ("get_customer", "result.billing_currency")),
    "notional_as_quantity": ("place_order", "provenance", ["args.quantity"],
                             ("get_position", "result.quantity")),
    "mail_everyone": ("send_campaign", "provenance", ["args.recipients[*]"],
                      ("search_customers", "result.customers[*].email")),
    "payout_off_file": ("create_payout", "provenance", ["args.account"],
                        ("get_vendor", "result.payout_account")),
    "wrong_environment": ("delete_resource", "requires_prior", [], ("open_session", None)),
    "refund_unbounded": ("create_refund", "bounded_by", ["args.amount_cents"],
                         ("get_order", "result.total_cents")),
}  # fmt: skip


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[IncidentReport, Path]]:
    root = tmp_path_factory.mktemp("incidents")
    out: dict[str, tuple[IncidentReport, Path]] = {}
    for folder in sorted(p for p in REPLICAS.iterdir() if p.is_dir()):
        db = root / f"{folder.name}.duckdb"
        tracemine.ingest([folder / "nominal.jsonl"], db)
        target = root / "tests" / folder.name
        out[folder.name] = (incident(folder / "incident.jsonl", "incident", db, target), target)
    return out


def test_there_are_six_replicas(reports: dict[str, tuple[IncidentReport, Path]]) -> None:
    assert sorted(reports) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_incident_separates_the_replica(
    reports: dict[str, tuple[IncidentReport, Path]], name: str
) -> None:
    report, out = reports[name]
    assert 1 <= len(report.separating) <= 3
    (chosen,) = report.separating
    tool, kind, paths, (from_tool, from_path) = EXPECTED[name]
    assert (chosen.tool, chosen.kind, chosen.paths) == (tool, kind, paths)
    assert report.nominal_runs == 24 and report.alarming_on_nominal == 0
    assert report.missing_vocabulary == []
    contracts = out / "contracts.json"
    fragment = tracemine.load_contracts(contracts)
    assert fragment.provenance["label"] == "incident"
    assert [c.status for c in fragment.contracts] == ["accepted"]
    (written,) = fragment.contracts
    source = written.params.get("from_tool") or written.params.get("tool")
    assert (source, written.params.get("from_path")) == (from_tool, from_path)
    nominal = tracemine.check(REPLICAS / name / "nominal.jsonl", contracts)
    assert nominal.violations == 0 and not nominal.failed  # no false alarm on any good run
    failing = tracemine.check(REPLICAS / name / "incident.jsonl", contracts)
    assert failing.violations >= 1 and failing.failed
    assert len(report.control_runs) == 5


def test_the_written_test_modules_pass(reports: dict[str, tuple[IncidentReport, Path]]) -> None:
    folders = [str(reports[name][1]) for name in sorted(EXPECTED)]
    done = subprocess.run(
        [*INNER_PYTEST, *folders],
        capture_output=True, text=True, cwd=folders[0],
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "12 passed" in done.stdout


def test_the_bound_and_the_selection_are_what_separates(
    reports: dict[str, tuple[IncidentReport, Path]],
) -> None:
    """Not a fixed bound: the refund is within the range of nominal refunds, and the
    campaign's 40 recipients are told apart from the 5 selected ones by where they
    came from, not only by how many there are."""
    refund, _ = reports["refund_unbounded"]
    (bound,) = refund.separating
    assert bound.description == (
        "create_refund.args.amount_cents <= an earlier get_order.result.total_cents"
    )
    assert bound.observed == (
        "args.amount_cents: expected at most an earlier get_order result.total_cents, "
        "got 4500 > 1200"
    )
    assert refund.alternatives == []  # no call-level contract separates it
    mail, _ = reports["mail_everyone"]
    (selected,) = mail.separating
    assert selected.description == (
        "send_campaign.args.recipients[*] from an earlier "
        "search_customers.result.customers[*].email"
    )
    assert selected.tasks == 12


Calls = list[tuple[str, dict[str, Any], Any]]  # tool, arguments, result


def _write(path: Path, runs: list[Calls], reward: float) -> Path:
    lines = []
    for number, calls in enumerate(runs):
        for seq, (tool, arguments, result) in enumerate(calls):
            lines.append(json.dumps({
                "run_id": f"r{number}" if reward else "incident", "task_id": f"t{number // 2}",
                "trial": number % 2, "reward": reward, "seq": seq, "call_id": f"c{seq}",
                "tool": tool, "arguments": arguments, "status": "ok", "result": result}))  # fmt: skip
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _mailing(rng: random.Random, size: int, sent: int) -> Calls:
    # recipients come from elsewhere (a mailing list the traces do not show), so only
    # their number relates to the selection
    selection = [f"s{rng.randrange(1000)}" for _ in range(size)]
    recipients = [f"u{rng.randrange(10**6)}@example.com" for _ in range(sent)]
    return [("select", {"segment": f"g{rng.randrange(99)}"}, {"ids": selection}),
            ("send", {"to": recipients}, {"queued": sent})]  # fmt: skip


def test_a_count_the_vocabulary_cannot_say_is_reported_missing(tmp_path: Path) -> None:
    rng = random.Random(7)
    nominal = []
    for _ in range(24):
        size = rng.randrange(3, 9)
        nominal.append(_mailing(rng, size, rng.randrange(1, size + 1)))
    tracemine.ingest([_write(tmp_path / "nominal.jsonl", nominal, 1.0)], tmp_path / "n.duckdb")
    failing = _write(tmp_path / "incident.jsonl", [_mailing(rng, 3, 6)], 0.0)
    report = incident(failing, "incident", tmp_path / "n.duckdb", tmp_path / "out")
    assert report.separating == [] and report.alarming_on_nominal == 0
    (gap,) = report.missing_vocabulary
    assert gap.startswith(
        "len(send.args.to) <= len(select.result.ids) of an earlier call: held on 24 "
        "known-good runs (12 tasks), broken here (6 vs 3); missing: a run-level count"
    )
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "incident.cassette.jsonl", "incident.json"]  # fmt: skip


def _withdrawal(rng: random.Random, held: int, taken: int) -> Calls:
    # names with nothing in common: mining pairs no bound between them
    return [("account", {"id": f"a{rng.randrange(999)}"}, {"q": held}),
            ("withdraw", {"v": taken}, {"done": True})]  # fmt: skip


def test_a_bound_mining_did_not_propose_is_reported_not_mined(tmp_path: Path) -> None:
    rng = random.Random(3)
    nominal = []
    for _ in range(24):
        held = rng.randrange(100, 5000)
        nominal.append(_withdrawal(rng, held, rng.randrange(1, held)))
    tracemine.ingest([_write(tmp_path / "nominal.jsonl", nominal, 1.0)], tmp_path / "n.duckdb")
    failing = _write(tmp_path / "incident.jsonl", [_withdrawal(rng, 200, 900)], 0.0)
    report = incident(failing, "incident", tmp_path / "n.duckdb", tmp_path / "out")
    assert report.separating == []
    bound = [g for g in report.missing_vocabulary if g.startswith("withdraw.args.v <= account")]
    assert len(bound) == 1 and "broken here (900 vs 200); not mined: bounded_by says it" in bound[0]


def test_the_replicas_are_what_the_generator_writes(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(REPLICAS / "generate.py"), "--out", str(tmp_path)],
                   check=True, capture_output=True)  # fmt: skip
    for written in sorted(tmp_path.rglob("*.jsonl")):
        committed = REPLICAS / written.relative_to(tmp_path)
        assert written.read_bytes() == committed.read_bytes(), committed
