"""``arms``: the paired-arms experiment, from cases to the report read back from the records.

Everything the report says comes from files written into ``out``:

    contracts/guarded.json           what the guarded arms enforced (recovery tools added)
    contracts/guarded-declared.json  the declared-only contracts (with --declared)
    training/                        the clean training runs the contracts were mined from
    schedule.json                    settings, every case's fault and arm order, seeds
    oracle.json                      expected calls and accepted claims per case
    traces/<arm>.jsonl               every run, an OpenAI-chat conversation with metadata
    report.md, report.html, report.json
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tracemine._atomic import write_atomic
from tracemine.arms.agent import Agent
from tracemine.arms.cases import is_write, nominal_runs, recovery_tool, suite_cases
from tracemine.arms.cases_file import load_cases
from tracemine.arms.loop import ArmSetup, run_case
from tracemine.arms.report import build_report, write_reports
from tracemine.arms.world import live_classes, schedule
from tracemine.errors import InputError
from tracemine.faults import parse_classes
from tracemine.simulate import DOMAINS, OPENAPI_DOCUMENTS, write_openapi, write_traces
from tracemine.simulate.formats import dump_line

Progress = Callable[[str], None]
GUARDED_FILE = "contracts/guarded.json"
DECLARED_FILE = "contracts/guarded-declared.json"


def run_arms(
    *,
    out: str | Path,
    agent: Agent,
    suite: str = "commerce",
    tasks: int = 40,
    cases: str | Path | None = None,
    contracts: str | Path | None = None,
    train_tasks: int = 120,
    faults: str = "structural,semantic",
    fault_rate: float = 0.5,
    declared: bool = False,
    seed: int = 0,
    max_turns: int = 16,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run every case of ``suite`` once per arm, in an order drawn per case from
    ``seed``, write each run as a trace, and return the report computed by reading the
    written files back (:func:`tracemine.arms.report.build_report`).

    Contracts for the guarded arms are mined from ``train_tasks`` clean tasks of the suite
    that are not cases (as ``tracemine mine --run-level`` mines), unless ``contracts``
    names a file. ``declared`` adds the arm ``guarded-declared``. ``cases`` names a file of
    cases a user wrote (:mod:`tracemine.arms.cases_file`) to run instead of the suite's;
    their contracts come from ``contracts``.

    >>> report = run_arms(out="arms", agent=ScriptedAgent())  # doctest: +SKIP
    >>> report["arms"]["guarded"]["labels"]["unsafe-complete"]  # doctest: +SKIP
    0
    """
    say = progress or (lambda _message: None)
    if cases is None and suite not in DOMAINS:
        raise InputError(f"--suite: choose one of {', '.join(DOMAINS)} (got {suite!r})")
    if cases is not None and contracts is None:
        raise InputError("--cases needs --contracts FILE: there are no training tasks to mine")
    if tasks < 1 or train_tasks < 1 or max_turns < 1:
        raise InputError("--tasks, --train-tasks and --max-turns must be at least 1")
    if declared and (cases is not None or suite not in OPENAPI_DOCUMENTS):
        raise InputError(
            f"--declared: only a suite with a declared schema has it "
            f"({', '.join(OPENAPI_DOCUMENTS)})"
        )
    classes = live_classes(parse_classes(faults))  # said before any mining
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise InputError(f"{folder}: exists and is not a folder")
    if cases is not None:
        chosen = load_cases(cases)
        suite = f"cases file {Path(cases).name}"
    else:
        chosen = suite_cases(suite, tasks, seed)
    folder.mkdir(parents=True, exist_ok=True)
    say(f"{len(chosen)} cases of the {suite} suite")
    names = {t["name"] for case in chosen for t in case.tools}
    setups = [ArmSetup("status-only")]
    source, document, db = _guarded_contracts(
        folder, suite, tasks, train_tasks, seed, contracts, say
    )
    setups += _guarded(folder, GUARDED_FILE, document, names)
    if declared:
        say("declared contracts from the suite's OpenAPI document")
        setups += _guarded(
            folder, DECLARED_FILE, _declared(folder, suite, db), names, only="guarded-declared"
        )
    plan = schedule(chosen, classes, fault_rate, seed)
    arm_names = [s.name for s in setups]
    orders = {c.case_id: _order(arm_names, seed, c.case_id) for c in chosen}
    settings = {
        "suite": suite,
        "tasks": len(chosen),
        "train_tasks": train_tasks,
        "faults": faults,
        "fault_rate": fault_rate,
        "seed": seed,
        "max_turns": max_turns,
        "agent": agent.name,
        "model": agent.model,
        "contracts_source": source,
        "arms": arm_names,
    }
    write_atomic(
        folder / "schedule.json",
        json.dumps(
            {
                "settings": settings,
                "cases": {
                    c.case_id: {
                        "fault": f.to_dict() if (f := plan[c.case_id]) else None,
                        "arm_order": orders[c.case_id],
                        "seed": _run_seed(seed, c.case_id),
                    }
                    for c in chosen
                },
            },
            indent=2,
        )
        + "\n",
    )
    write_atomic(
        folder / "oracle.json",
        json.dumps(
            {"cases": {c.case_id: {**c.oracle(), "safe_stop": c.safe_stop} for c in chosen}},
            indent=2,
            ensure_ascii=False,
        )
        + "\n",
    )
    lines: dict[str, list[str]] = {name: [] for name in arm_names}
    by_name = {s.name: s for s in setups}
    for number, case in enumerate(chosen, 1):
        say(f"case {number}/{len(chosen)} {case.case_id}: {' → '.join(orders[case.case_id])}")
        for name in orders[case.case_id]:
            record = run_case(
                case,
                plan[case.case_id],
                by_name[name],
                agent,
                seed=_run_seed(seed, case.case_id),
                order=orders[case.case_id],
                max_turns=max_turns,
            )
            lines[name].append(dump_line(record))
    (folder / "traces").mkdir(exist_ok=True)
    for name, written in lines.items():
        write_atomic(folder / "traces" / f"{name}.jsonl", "".join(f"{w}\n" for w in written))
    say("read the records back and write the report")
    report = build_report(folder)
    write_reports(report, folder)
    return report


def _guarded_contracts(
    folder: Path,
    suite: str,
    tasks: int,
    train_tasks: int,
    seed: int,
    contracts: str | Path | None,
    say: Progress,
) -> tuple[str, dict[str, Any], Path | None]:
    """The guarded arms' contract document, where it came from, and the training store."""
    if contracts is not None:
        from tracemine.monitor import read_document

        return f"file {Path(contracts).as_posix()}", read_document(contracts), None
    from tracemine.ingest import ingest
    from tracemine.mine import mine

    training = folder / "training"
    runs = nominal_runs(suite, train_tasks, seed, first=tasks)
    traces = write_traces(runs, training / f"{suite}.openai_chat.jsonl", "openai_chat")
    db = training / "mining.duckdb"
    db.unlink(missing_ok=True)  # an earlier experiment's store must not leak into this one
    say(f"mine contracts on {train_tasks} clean training tasks ({len(runs)} runs)")
    ingest([traces], db)
    mined = mine(db, seed=seed, run_level=True)
    last = tasks + train_tasks - 1
    source = f"mined on {train_tasks} training tasks ({suite} tasks {tasks}-{last})"
    return source, mined.model_dump(mode="json", exclude_none=True), db


def _declared(folder: Path, suite: str, db: Path | None) -> dict[str, Any]:
    from tracemine.model.contract import ContractFile
    from tracemine.openapi import merge_files

    spec = write_openapi(folder / "contracts" / OPENAPI_DOCUMENTS[suite], suite)
    merged = merge_files(ContractFile(), [spec], db=db).merged
    return merged.model_dump(mode="json", exclude_none=True)


def _guarded(
    folder: Path, name: str, document: dict[str, Any], tools: set[str], only: str | None = None
) -> list[ArmSetup]:
    """The arms on one contract file: the file written with recovery tools added where a
    contract names none, and a monitor on it (proposed contracts enforced: an experiment
    has no reviewer)."""
    from tracemine.monitor import Monitor

    document = with_recovery(document, tools)
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    monitor = Monitor.from_dict(document, include_proposed=True, origin=str(path))
    if only:
        return [ArmSetup(only, monitor, True, name)]
    return [
        ArmSetup("guarded", monitor, True, name),
        ArmSetup("guarded-no-recovery", monitor, False, name),
    ]


def with_recovery(document: dict[str, Any], tools: set[str]) -> dict[str, Any]:
    """A copy of a contract document in which each contract without recovery tools names
    the recovery tool of the tool whose result it reads (the source tool, for run-level
    contracts), when the manifest has one."""
    out = json.loads(json.dumps(document))
    for item in out.get("contracts", []):
        if not isinstance(item, dict) or (item.get("recovery") or {}).get("tools"):
            continue
        params: dict[str, Any] = item["params"] if isinstance(item.get("params"), dict) else {}
        prior = params.get("tool") if item.get("kind") == "requires_prior" else None
        source = params.get("from_tool") or prior or item.get("tool")
        named = recovery_tool(str(source))
        if not is_write(str(source)) and named in tools:
            item["recovery"] = {"tools": [named], "hint": ""}
    return out


def _order(arms: list[str], seed: int, case_id: str) -> list[str]:
    order = list(arms)
    random.Random(f"tracemine-arms/{seed}/{case_id}/order").shuffle(order)
    return order


def _run_seed(seed: int, case_id: str) -> int:
    """One seed per case, the same in every arm (sent to endpoints that take one)."""
    return random.Random(f"tracemine-arms/{seed}/{case_id}/seed").randrange(2**31)


__all__ = ["run_arms", "with_recovery"]
