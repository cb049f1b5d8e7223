"""`tracemine incident`: the contracts that separate a failing run, as a regression test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from tracemine.cli._common import DbOption, JsonOption, ReaderOption, console, print_json, run
from tracemine.cli._progress import QuietOption, Stages
from tracemine.incident import IncidentReport, incident

ORDER = 45


def incident_command(
    trace: Annotated[
        Path, typer.Argument(metavar="TRACE", help="Trace file holding the failing run.")
    ],
    run_id: Annotated[str, typer.Option("--run", metavar="ID", help="The failing run in TRACE.")],
    db: DbOption,
    out: Annotated[Path, typer.Option("--out", metavar="DIR", help="Folder for what is written.")],
    name: Annotated[
        str | None, typer.Option("--name", metavar="NAME", help="Incident name (default: DIR's).")
    ] = None,
    format: ReaderOption = None,
    control: Annotated[
        int, typer.Option("--control", metavar="N", help="Known-good runs replayed beside it.")
    ] = 5,
    min_tasks: Annotated[
        int, typer.Option("--min-tasks", metavar="N", help="Tasks a fitted contract needs.")
    ] = 3,
    keep_personal: Annotated[
        bool,
        typer.Option(
            "--keep-personal",
            help="Write the recorded personal values into the "
            "cassettes instead of stand-ins (the folder then holds personal data).",
        ),
    ] = False,
    as_json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Find the fewest contracts the failing run breaks and no known-good run of the store
    (--db) does; write them with a pytest module that replays both. Exit 1 when none
    separates the run."""
    with Stages("incident", quiet=quiet) as stages:
        report = run(incident, trace, run_id, db, out, name=name, format=format,
                     control=control, min_tasks=min_tasks, keep_personal=keep_personal,
                     progress=stages.stage)  # fmt: skip
    if as_json:
        print_json(json.dumps({**report.model_dump(mode="json"), "timings": stages.timings},
                              indent=2))  # fmt: skip
    else:
        render(report)
    if not report.separating:
        raise typer.Exit(1)


def render(report: IncidentReport) -> None:
    console.print(
        f"{report.vocabulary} contracts fitted on {report.nominal_runs} known-good runs "
        f"({report.nominal_tasks} tasks); run {report.run_id} breaks {report.violated}, "
        f"known-good runs break {report.alarming_on_nominal}",
        markup=False,
    )
    for s in report.separating:
        console.print(f"[green]separates[/]: {escape(s.description)} ({s.kind}, {s.tasks} tasks)",
                      markup=True, soft_wrap=True)  # fmt: skip
        console.print(f"  observed: {s.observed}", markup=False, soft_wrap=True)
        if s.claim:
            console.print(f"  claims of known-good runs: {s.claim}", markup=False,
                          soft_wrap=True)  # fmt: skip
    for s in report.alternatives:
        console.print(f"  also separates: {s.description} ({s.kind}); not written: "
                      f"{s.why_not}", markup=False, soft_wrap=True)  # fmt: skip
    if not report.separating:
        console.print("[red]no contract of the vocabulary separates this run[/]", markup=True)
    for gap in report.missing_vocabulary:
        console.print(f"  [yellow]missing vocabulary[/]: {escape(gap)}", soft_wrap=True)
    if report.personal_values_replaced:
        console.print(f"the cassettes hold stand-ins for {report.personal_values_replaced} "
                      "personal values (emails, phones, names…); --keep-personal writes them "
                      "as recorded", markup=False, soft_wrap=True)  # fmt: skip
    for path in report.files:
        console.print(f"wrote {path}", markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("incident")(incident_command)
