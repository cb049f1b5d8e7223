"""What ``incident`` writes: the contract fragment, the cassettes, the pytest module."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tracemine._atomic import write_atomic
from tracemine.errors import InputError
from tracemine.incident.report import IncidentReport
from tracemine.incident.standins import StandIns
from tracemine.model.contract import (
    Contract,
    ContractFile,
    ContractStatus,
    Decision,
    save_contracts,
)
from tracemine.monitor import Monitor, replay
from tracemine.replay import Cassette

LABEL = "incident"
_RECORD_FIELDS = ("run_id", "task_id", "seq", "call_id", "result_call_id", "tool", "arguments",
                  "status", "result", "error_type", "error_message")  # fmt: skip

# Everything taken from the trace or the store (names, run ids, contract descriptions)
# goes in as ``repr`` literals, never into the docstring or a comment: a tool named
# ``x"""; import os …`` must stay a string, not become code run at import.
TEST_MODULE = '''"""Regression test of an incident, written by `tracemine incident`.

Run RUN_ID of TRACE broke BROKE, which none of the NOMINAL_RUNS known-good runs (in
NOMINAL_TASKS tasks) of STORE broke. The failing run is replayed from its cassette
through the monitor with the contracts in contracts.json and must still violate them;
the control runs, known-good, must raise no alarm.
"""

from pathlib import Path

from tracemine.monitor import Monitor, replay
from tracemine.replay import Cassette

INCIDENT = {name!r}
RUN_ID = {run_id!r}
TRACE = {trace!r}
BROKE = {what!r}
NOMINAL_RUNS = {nominal!r}
NOMINAL_TASKS = {tasks!r}
STORE = {db!r}
HERE = Path(__file__).parent
SEPARATING = {ids!r}


def violations(cassette: str) -> dict[str, set[str]]:
    monitor = Monitor.load(HERE / "contracts.json")
    found = {{}}
    for run in replay(monitor, Cassette.load(HERE / cassette).records):
        ids = {{v.contract_id for c in run.calls if c.receipt for v in c.receipt.violations}}
        found[run.run_id] = ids | {{v.contract_id for v in run.verdict.violations}}
    return found


def test_the_incident_run_violates_its_contracts() -> None:
    (found,) = violations("incident.cassette.jsonl").values()
    assert SEPARATING <= found


def test_the_control_runs_raise_no_alarm() -> None:
    found = violations("control.cassette.jsonl")
    assert found and not any(found.values()), found
'''


def _records(calls: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [{k: call.get(k) for k in _RECORD_FIELDS if call.get(k) is not None}
            for call in calls]  # fmt: skip


def _violations(contracts: Path, records: Sequence[Mapping[str, Any]]) -> dict[str, set[str]]:
    """What the written test module will find: contract ids broken, by run."""
    monitor = Monitor.load(contracts)
    found: dict[str, set[str]] = {}
    for run in replay(monitor, records):
        ids = {v.contract_id for c in run.calls if c.receipt for v in c.receipt.violations}
        verdict = run.verdict.violations if run.verdict else ()
        found[run.run_id] = ids | {v.contract_id for v in verdict}
    return found


def module_name(name: str) -> str:
    """``test_incident_<name>.py``, a name pytest can import beside other incidents."""
    return f"test_incident_{re.sub(r'[^0-9a-zA-Z_]+', '_', name).strip('_') or 'run'}.py"


def control_runs(
    nominal: Mapping[str, tuple[dict[str, Any], list[dict[str, Any]]]], tools: set[str], n: int
) -> list[str]:
    """Up to ``n`` known-good runs, one a task, those calling ``tools`` first."""

    def order(item: tuple[str, tuple[dict[str, Any], list[dict[str, Any]]]]) -> tuple[Any, ...]:
        run_id, (run, calls) = item
        return not tools & {c["tool"] for c in calls}, str(run.get("task_id")), run_id

    ordered = sorted(nominal.items(), key=order)
    chosen: list[str] = []
    tasks: set[Any] = set()
    for run_id, (run, _) in ordered:
        if len(chosen) < n and run.get("task_id") not in tasks:
            chosen.append(run_id)
            tasks.add(run.get("task_id"))
    return chosen


def write_outputs(
    report: IncidentReport,
    out: Path,
    failing: Sequence[Mapping[str, Any]],
    nominal: Mapping[str, tuple[dict[str, Any], list[dict[str, Any]]]],
    chosen: Sequence[Contract],
    control: int,
    *,
    keep_personal: bool = False,
) -> None:
    """Write the files of ``report`` into ``out`` (listed in ``report.files``). Personal
    values in the cassettes are replaced by stand-ins (:mod:`tracemine.incident.standins`)
    unless ``keep_personal``."""
    out.mkdir(parents=True, exist_ok=True)
    incident_records = _records(failing)
    control_records: list[dict[str, Any]] = []
    if chosen:
        report.control_runs = control_runs(nominal, {c.tool for c in chosen}, control)
        control_records = _records([c for rid in report.control_runs for c in nominal[rid][1]])
    if not keep_personal:
        standins = StandIns(incident_records + control_records)
        incident_records = [standins.record(r) for r in incident_records]
        control_records = [standins.record(r) for r in control_records]
        report.personal_values_replaced = standins.replaced
    files = [Cassette(out / "incident.cassette.jsonl", incident_records).save()]
    if chosen:
        reason = (f"incident {report.name}: run {report.run_id} breaks it, none of "
                  f"{report.nominal_runs} known-good runs does")  # fmt: skip
        decision = Decision(status=ContractStatus.ACCEPTED, reason=reason,
                            reviewer="tracemine incident", at=datetime.now(UTC))  # fmt: skip
        contracts = [c.model_copy(update={"status": ContractStatus.ACCEPTED,
                                          "decision": decision}) for c in chosen]  # fmt: skip
        fragment = ContractFile(
            generated_at=datetime.now(UTC), contracts=contracts,
            provenance={"label": LABEL, "incident": report.name, "trace": report.trace,
                        "run_id": report.run_id, "store": report.db,
                        "nominal_runs": report.nominal_runs,
                        "nominal_tasks": report.nominal_tasks},
        )  # fmt: skip
        files.append(save_contracts(fragment, out / "contracts.json"))
        files.append(Cassette(out / "control.cassette.jsonl", control_records).save())
        if report.personal_values_replaced:
            _check_stand_ins(out, report, incident_records, control_records)
        what = "; ".join(s.description for s in report.separating)
        module = out / module_name(report.name)
        write_atomic(module, TEST_MODULE.format(
            name=report.name, run_id=report.run_id, trace=Path(report.trace).name, what=what,
            nominal=report.nominal_runs, tasks=report.nominal_tasks, db=Path(report.db).name,
            ids={s.contract_id for s in report.separating}))  # fmt: skip
        files.append(module)
    report.files = [str(f) for f in [*files, out / "incident.json"]]
    write_atomic(out / "incident.json", report.model_dump_json(indent=2) + "\n")


def _check_stand_ins(
    out: Path,
    report: IncidentReport,
    incident_records: Sequence[Mapping[str, Any]],
    control_records: Sequence[Mapping[str, Any]],
) -> None:
    """Refuse stand-ins that change what the test module finds: the failing run must
    still break the separating contracts and the control runs none."""
    wanted = {s.contract_id for s in report.separating}
    found = set().union(*_violations(out / "contracts.json", incident_records).values())
    alarms = {rid: ids for rid, ids in _violations(out / "contracts.json",
                                                   control_records).items() if ids}  # fmt: skip
    if wanted <= found and not alarms:
        return
    what = (
        f"the failing run no longer breaks {', '.join(sorted(wanted - found))}"
        if not wanted <= found
        else f"control run {next(iter(alarms))!r} raises an alarm"
    )
    raise InputError(
        f"{out}: with its personal values replaced by stand-ins, {what}; the separating "
        "contract depends on a recorded personal value. Pass --keep-personal to write the "
        "recorded values (the folder then holds personal data: do not commit it as is)"
    )
