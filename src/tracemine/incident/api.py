"""``incident``: the fewest contracts that separate one failing run from the known-good ones.

The whole vocabulary is fitted on the store of known-good runs — every candidate mine
proposes with support in ``min_tasks`` tasks, call-level and run-level, without the
false-alarm budget that decides what ``mine`` keeps — and replayed through the monitor on
every known-good run and on the failing one. A contract separates when the failing run
violates it and no known-good run does. One such contract separates the run; the one
written is the most specific (:data:`FAMILIES`: run-level, then relational, then bounds on
an argument, on a result, then the rest), and among those the one that claims the least
about known-good runs (:data:`CLAIMS`: that something is there, then a bound, then a set
of values, then an equality), since the more a contract claims the more legitimate runs
it alarms on: a refund over its order's total is told by ``bounded_by`` (refund <= order
total), which a legitimate partial refund keeps, not by ``provenance`` (refund = some
line total), which it breaks. Then more supporting tasks first. The others are listed,
each with why it was not written.
When none separates, :mod:`tracemine.incident.gaps` says which relation would have and
what the vocabulary lacks to express it.

>>> report = incident("prod.jsonl", "run-7", "good.duckdb", "tests/incidents/x")  # doctest: +SKIP
>>> report.separating[0].description  # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tracemine.errors import InputError, StoreError
from tracemine.incident.gaps import find_gaps
from tracemine.incident.outputs import write_outputs
from tracemine.incident.report import IncidentReport, Separating
from tracemine.ingest import read_traces
from tracemine.ingest.store import connect
from tracemine.mine import mine
from tracemine.model.contract import RELATIONAL_KINDS, RUN_KINDS, Contract, Kind, Side
from tracemine.monitor import Monitor, RunReplay, replay
from tracemine.monitor.trials import is_nominal

ALTERNATIVES = 5
_BOUNDS = frozenset({Kind.RANGE, Kind.LENGTH, Kind.NON_NEGATIVE, Kind.POSITIVE})
# how much a contract says of every known-good run, least first: what legitimate runs
# may still do and pass is what separates a fault from the next legitimate variation
CLAIMS: tuple[tuple[str, frozenset[Kind]], ...] = (
    ("only that something is there", frozenset({
        Kind.PRESENT, Kind.NOT_NULL, Kind.NON_EMPTY, Kind.TYPE, Kind.REQUIRES_PRIOR,
        Kind.EXPECTED_TOOLS, Kind.COMPLETENESS})),
    ("a bound, which any value within it keeps", frozenset({
        Kind.NON_NEGATIVE, Kind.POSITIVE, Kind.RANGE, Kind.LENGTH, Kind.LE, Kind.LT,
        Kind.BOUNDED_BY, Kind.CALL_CAP})),
    ("a set of values or a shape, which a value not seen before breaks", frozenset({
        Kind.FORMAT, Kind.PATTERN, Kind.ONE_OF, Kind.MEMBER, Kind.SUBSET, Kind.UNIQUE,
        Kind.PROVENANCE, Kind.SHARES_TOKEN})),
    ("an equality, which any other value breaks", frozenset({
        Kind.CONST, Kind.EQUALS, Kind.SUM_EQUALS, Kind.RATIO, Kind.PAGE_FULL,
        Kind.PRODUCT})),
)  # fmt: skip


FAMILIES = ("run-level", "relational", "bound on an argument", "bound on a result", "other")


def claim(kind: Kind | str) -> int:
    """How much a contract of ``kind`` claims of known-good runs: 0 least (:data:`CLAIMS`)."""
    return next((i for i, (_, kinds) in enumerate(CLAIMS) if kind in kinds), len(CLAIMS) - 1)


def _rank(contract: Contract, failing: Sequence[Mapping[str, Any]]) -> tuple[Any, ...]:
    if contract.kind in RUN_KINDS:
        family = 0
    elif contract.kind in RELATIONAL_KINDS or contract.when is not None:
        family = 1
    elif contract.kind in _BOUNDS:
        family = 2 if contract.side == Side.ARGS else 3
    else:
        family = 4
    # among run-level contracts, the one tracing to the earliest call of the run: the
    # scope a run was given comes before what was derived from it
    source = contract.params.get("from_tool") or contract.params.get("tool")
    first = next((i for i, c in enumerate(failing) if c.get("tool") == source), len(failing))
    tasks = contract.evidence.tasks if contract.evidence else 0
    return family, claim(contract.kind), first, -tasks, contract.id


def _why_not(contract: Contract, written: Contract, failing: Sequence[Mapping[str, Any]]) -> str:
    """Why ``contract``, which separates the run too, was not the one written."""
    mine, theirs = _rank(contract, failing), _rank(written, failing)
    if mine[0] > theirs[0]:
        return (f"less specific than the {written.kind} written "
                f"({FAMILIES[mine[0]]}, against {FAMILIES[theirs[0]]})")  # fmt: skip
    if mine[1] > theirs[1]:
        return (f"claims more of known-good runs than the {written.kind} written: "
                f"{CLAIMS[mine[1]][0]}")  # fmt: skip
    return f"as specific as the {written.kind} written, and claiming as much; less support"


def _violations(replayed: RunReplay) -> dict[str, str]:
    found: dict[str, str] = {}
    for call in replayed.calls:
        for v in call.receipt.violations if call.receipt else ():
            found.setdefault(v.contract_id, f"{v.path}: expected {v.expected}, got {v.observed}")
    for v in replayed.verdict.violations if replayed.verdict else ():
        found.setdefault(v.contract_id, f"{v.path}: expected {v.expected}, got {v.observed}")
    return found


def load_nominal(db: str | Path) -> dict[str, tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Every known-good run of the store: run id → (run fields, calls in ``seq`` order)."""
    con = connect(db, read_only=True)
    try:
        runs = {row[0]: {"run_id": row[0], "task_id": row[1], "reward": row[2],
                         "run_outcome": row[3], "family": row[4]}
                for row in con.execute("SELECT run_id, task_id, reward, run_outcome, family "
                                       "FROM runs").fetchall()}  # fmt: skip
        rows = con.execute(
            "SELECT run_id, seq, call_id, result_call_id, tool, arguments, result, status "
            "FROM calls ORDER BY run_id, seq, call_key"
        ).fetchall()
    finally:
        con.close()
    out: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
    for run_id, seq, cid, rcid, tool, arguments, result, status in rows:
        run = runs.get(run_id, {"run_id": run_id})
        if not is_nominal(run):
            continue
        calls = out.setdefault(run_id, (run, []))[1]
        calls.append({"run_id": run_id, "task_id": run.get("task_id"), "seq": seq,
                      "call_id": cid, "result_call_id": rcid, "tool": tool, "status": status,
                      "arguments": json.loads(arguments) if arguments is not None else None,
                      "result": json.loads(result) if result is not None else None})  # fmt: skip
    return out


def incident(
    trace: str | Path,
    run_id: str,
    db: str | Path,
    out: str | Path,
    *,
    name: str | None = None,
    format: str | None = None,
    control: int = 5,
    min_tasks: int = 3,
    keep_personal: bool = False,
    progress: Callable[[str], None] | None = None,
) -> IncidentReport:
    """Separate run ``run_id`` of ``trace`` from the known-good runs in the store ``db``
    and write, into ``out``, the contract fragment, the cassettes of the failing run and
    of ``control`` known-good runs, a pytest module asserting both, and ``incident.json``.
    ``progress`` is called with the name of each stage as it starts. The cassettes hold
    stand-ins for personal values (:mod:`tracemine.incident.standins`) unless
    ``keep_personal``."""
    say = progress or (lambda _stage: None)
    say("reading")
    traces = read_traces(trace, format)
    failing = [c for c in traces.calls if c["run_id"] == run_id]
    if not failing:
        known = sorted({str(c["run_id"]) for c in traces.calls})
        shown = ", ".join(known[:10]) + (" …" if len(known) > 10 else "")
        raise InputError(f"{trace}: no run {run_id!r} (runs in the file: {shown or 'none'})")
    failing.sort(key=lambda c: (c["seq"] is None, c["seq"] or 0))
    if not Path(db).exists():
        raise StoreError(f"{db}: no such database; ingest the known-good runs first")
    nominal = load_nominal(db)
    if not nominal:
        raise InputError(f"{db}: no known-good run to separate the failing run from")
    say("fitting the vocabulary")
    vocabulary = mine(db, crossfit=False, budget=False, run_level=True, min_tasks=min_tasks)
    fitted = [c for c in vocabulary.contracts if c.kind != Kind.COMPLETENESS]
    monitor = Monitor.from_dict(json.loads(vocabulary.model_copy(update={"contracts": fitted})
                                           .model_dump_json()), include_proposed=True)  # fmt: skip
    families = {rid: run.get("family") for rid, (run, _) in nominal.items()}
    nominal_calls = [c for _, calls in nominal.values() for c in calls]
    say("replaying the known-good runs")
    alarming: set[str] = set()
    for replayed in replay(monitor, nominal_calls, families=families):
        alarming |= _violations(replayed).keys()
    say("replaying the failing run")
    (replayed,) = replay(monitor, failing)
    violated = _violations(replayed)
    by_id = {c.id: c for c in fitted}
    ranked = sorted((by_id[cid] for cid in violated.keys() - alarming if cid in by_id),
                    key=lambda c: _rank(c, failing))  # fmt: skip

    def separating(contract: Contract, written: Contract | None = None) -> Separating:
        tasks = contract.evidence.tasks if contract.evidence else 0
        level = claim(contract.kind)
        why = "" if written is None else _why_not(contract, written, failing)
        return Separating(contract_id=contract.id, tool=contract.tool, kind=contract.kind,
                          paths=contract.paths, description=contract.description or
                          f"{contract.kind} {', '.join(contract.paths)}", tasks=tasks,
                          observed=violated[contract.id], claim=CLAIMS[level][0],
                          why_not=why)  # fmt: skip

    title = name or Path(out).name or run_id
    tasks = {run.get("task_id") for run, _ in nominal.values()}
    report = IncidentReport(
        name=title, trace=str(trace), run_id=run_id, db=str(db), out=str(out),
        vocabulary=len(fitted), nominal_runs=len(nominal), nominal_tasks=len(tasks),
        alarming_on_nominal=len(alarming), violated=len(violated),
        separating=[separating(c) for c in ranked[:1]],
        alternatives=[separating(c, ranked[0]) for c in ranked[1 : 1 + ALTERNATIVES]],
    )  # fmt: skip
    grouped = {rid: (run.get("task_id"), calls) for rid, (run, calls) in nominal.items()}
    if not report.separating:
        report.missing_vocabulary = [g.message() for g in find_gaps(failing, grouped, min_tasks)]
    chosen = [by_id[s.contract_id] for s in report.separating]
    say("writing")
    write_outputs(report, Path(out), failing, nominal, chosen, control,
                  keep_personal=keep_personal)  # fmt: skip
    return report
