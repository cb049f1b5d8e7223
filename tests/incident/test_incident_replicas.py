"""`incident` on the six replicas of data/incidents: each separable one is separated by at
most 3 contracts that raise no alarm on its known-good runs, and the written pytest
module passes; the refund bound, which no kind of the vocabulary can say, is reported as
missing vocabulary."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import tracemine
from tracemine.incident import IncidentReport, incident

REPLICAS = Path(__file__).parents[2] / "data" / "incidents"
# replica → (tool, kind, argument path) of the contract written
EXPECTED = {
    "currency_mismatch": ("create_invoice", "provenance", ["args.currency"]),
    "notional_as_quantity": ("place_order", "provenance", ["args.quantity"]),
    "mail_everyone": ("send_campaign", "length", ["args.recipients"]),
    "payout_off_file": ("create_payout", "provenance", ["args.account"]),
    "wrong_environment": ("delete_resource", "requires_prior", []),
}


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
    assert sorted(reports) == sorted([*EXPECTED, "refund_unbounded"])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_incident_separates_the_replica(
    reports: dict[str, tuple[IncidentReport, Path]], name: str
) -> None:
    report, out = reports[name]
    assert 1 <= len(report.separating) <= 3
    (chosen,) = report.separating
    assert (chosen.tool, chosen.kind, chosen.paths) == EXPECTED[name]
    assert report.nominal_runs == 24 and report.alarming_on_nominal == 0
    contracts = out / "contracts.json"
    fragment = tracemine.load_contracts(contracts)
    assert fragment.provenance["label"] == "incident"
    assert [c.status for c in fragment.contracts] == ["accepted"]
    nominal = tracemine.check(REPLICAS / name / "nominal.jsonl", contracts)
    assert nominal.violations == 0 and not nominal.failed  # no false alarm on any good run
    failing = tracemine.check(REPLICAS / name / "incident.jsonl", contracts)
    assert failing.violations >= 1 and failing.failed
    assert len(report.control_runs) == 5


def test_the_written_test_modules_pass(reports: dict[str, tuple[IncidentReport, Path]]) -> None:
    folders = [str(reports[name][1]) for name in sorted(EXPECTED)]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *folders],
        capture_output=True, text=True, cwd=folders[0],
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "10 passed" in done.stdout


def test_a_bound_the_vocabulary_cannot_say_is_reported_missing(
    reports: dict[str, tuple[IncidentReport, Path]],
) -> None:
    report, out = reports["refund_unbounded"]
    assert report.separating == [] and report.violated == 0
    (gap,) = report.missing_vocabulary
    assert gap.startswith(
        "create_refund.args.amount_cents <= get_order.result.total_cents of an earlier call: "
        "held on 24 known-good runs (12 tasks), broken here (4500 vs 1200); missing: a "
        "run-level bound against an earlier call's value"
    )
    assert sorted(p.name for p in out.iterdir()) == ["incident.cassette.jsonl", "incident.json"]


def test_the_replicas_are_what_the_generator_writes(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(REPLICAS / "generate.py"), "--out", str(tmp_path)],
                   check=True, capture_output=True)  # fmt: skip
    for written in sorted(tmp_path.rglob("*.jsonl")):
        committed = REPLICAS / written.relative_to(tmp_path)
        assert written.read_bytes() == committed.read_bytes(), committed
