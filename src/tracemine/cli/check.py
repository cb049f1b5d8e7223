"""`tracemine check`: replay recorded traces through the monitor; exit 1 on findings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from tracemine._atomic import write_atomic
from tracemine.cli._common import (
    JsonOption,
    ReaderOption,
    console,
    err_console,
    print_json,
    printable,
    run,
    trace_paths,
)
from tracemine.cli._fit import Column, fit, left_out
from tracemine.cli._progress import QuietOption, Stages
from tracemine.cli._trials import CONTRACT_COLUMNS, render_trials
from tracemine.cli.ingest import ErrorPatternOption
from tracemine.gate import CheckReport, check, junit_xml

ORDER = 40


def check_command(
    traces: Annotated[
        list[Path],
        typer.Argument(
            metavar="PATH...", help="Trace files, folders or globs (any ingest format)."
        ),
    ],
    contracts: Annotated[
        Path,
        typer.Option("--contracts", "-c", metavar="FILE", help="Contract file to enforce."),
    ],
    format: ReaderOption = None,
    junit: Annotated[
        Path | None,
        typer.Option(
            "--junit",
            metavar="FILE",
            help="Write JUnit XML: one testcase per tool·contract and per run.",
        ),
    ] = None,
    oracle: Annotated[
        Path | None,
        typer.Option(
            "--oracle",
            metavar="FILE",
            help="Expected calls and accepted final claims per run or task.",
        ),
    ] = None,
    include_proposed: Annotated[
        bool, typer.Option("--include-proposed", metavar="", help="Enforce proposed contracts too.")
    ] = False,
    as_json: JsonOption = False,
    trials: Annotated[
        bool,
        typer.Option(
            "--trials",
            help="Group runs by task; report contracts whose verdict differs between nominal "
            "trials (with their flip rate) and keep them out of the failing verdict.",
        ),
    ] = False,
    strict: Annotated[
        bool, typer.Option("--strict", help="With --trials: noisy contracts fail the check too.")
    ] = False,
    error_pattern: ErrorPatternOption = None,
    review: Annotated[
        Path | None,
        typer.Option(
            "--review",
            metavar="FILE",
            help="Review decisions to apply (default: <contracts>.review.yaml).",
        ),
    ] = None,
    allow_error: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-error",
            metavar="RULE",
            help="TOOL=REGEX: a run whose TOOL call (* for any tool) ended in an error "
            "matching REGEX (case-insensitive) still passes, as in 'get_order=not found'; "
            "TOOL alone allows any error of it. Repeatable.",
        ),
    ] = None,
    quiet: QuietOption = False,
) -> None:
    """Check traces against contracts; exit 1 on violations or incomplete runs, 2 when
    the file has no accepted contract to enforce (unless --include-proposed). A tool error
    not retried with success makes its run incomplete unless --allow-error expects it."""
    with Stages("check", quiet=quiet) as stages:
        stages.stage("finding traces")
        files = run(_readable, traces, format)
        stages.stage(f"replaying {len(files)} trace files" if len(files) > 1 else "replaying")
        report = run(check, files, contracts, format=format, include_proposed=include_proposed,
                     oracle=oracle, trials=trials, strict=strict,
                     error_pattern=error_pattern, review=review,
                     allow_errors=allow_error or ())  # fmt: skip
    if junit is not None:
        write_atomic(junit, junit_xml(report))
    if as_json:
        print_json(json.dumps({**report.model_dump(mode="json"), "timings": stages.timings},
                              indent=2))  # fmt: skip
    else:
        render(report)
        if report.trials is not None:
            render_trials(report.trials)
    if report.failed:
        raise typer.Exit(1)


def _readable(paths: list[Path], format: str | None) -> list[Path]:
    """The trace files ``paths`` name, as ingest reads them. A file found in a folder that
    no reader recognises (a schema, a README.json beside the traces) is said and passed
    over, as ingest skips it; a file named outright must be readable."""
    from tracemine.errors import UnknownFormatError
    from tracemine.ingest.detect import detect_format

    named = {p for p in paths if p.is_file()}
    files = []
    for path in trace_paths(paths):
        if format is None and path not in named:
            try:
                detect_format(path)
            except UnknownFormatError:
                err_console.print(f"skipped {path}: no reader recognises it (not a trace "
                                  "file?)", markup=False, soft_wrap=True)  # fmt: skip
                continue
        files.append(path)
    return files


_RUNS_SHOWN = 10
TOOL_COLUMNS = [
    Column("tool"), Column("calls", numeric=True), Column("violations", "viol.", numeric=True),
    Column("coverage", text=True),
]  # fmt: skip
VIOLATED_COLUMNS = [  # the tool is also in the example lines below the table
    *CONTRACT_COLUMNS,
    Column("checked", numeric=True, drop=3), Column("violated", "viol.", numeric=True),
    Column("not evaluated", "not\neval.", numeric=True),
]  # fmt: skip


def render(report: CheckReport) -> None:
    width = console.width
    rows = [[t.tool, str(t.calls), str(t.violations),
             ", ".join(f"{k} {v}" for k, v in sorted(t.coverage.items()))]
            for t in report.tools]  # fmt: skip
    console.print(fit("tools", TOOL_COLUMNS, rows, width)[0])
    # the table lists the contracts that need a look; the clean ones are only counted
    flagged = [c for c in report.contracts if c.violated]
    if flagged:
        rows = [[c.tool, c.kind, c.path, c.contract_id, str(c.checked), str(c.violated),
                 str(c.not_evaluated)] for c in flagged]  # fmt: skip
        table, dropped = fit("contracts violated", VIOLATED_COLUMNS, rows, width)
        console.print(table)
        if said := left_out(dropped, width):
            console.print(said)
    console.print(
        f"{len(report.contracts) - len(flagged)} contracts held on every call they checked"
    )
    for c in flagged:
        for example in c.examples[:2]:
            console.print(f"  [red]✗[/] {printable(f'{c.tool} {c.kind}: {example}')}",
                          markup=True, soft_wrap=True)  # fmt: skip
    problem_runs = [r for r in report.runs if r.verdict != "complete" or r.violations]
    for r in problem_runs[:_RUNS_SHOWN]:
        console.print(f"run {printable(r.run_id)}: [yellow]{r.verdict}[/]", markup=True)
        for line in r.gaps + [f"{v['path']}: expected {v['expected']}, got {v['observed']}"
                              for v in r.violations]:  # fmt: skip
            console.print(f"  - {printable(line, markup=False)}", soft_wrap=True, markup=False)
    if len(problem_runs) > _RUNS_SHOWN:
        console.print(f"… {len(problem_runs) - _RUNS_SHOWN} more runs with findings "
                      "(--json or --junit list them all)")  # fmt: skip
    for notice in report.notices:
        console.print(f"[yellow]note:[/] {printable(notice)}", markup=True, soft_wrap=True)
    if report.labels is not None:
        console.print("oracle: " + ", ".join(f"{k} {v}" for k, v in report.labels.items()),
                      markup=False)  # fmt: skip
    runs = len(report.runs)
    console.print(
        f"{report.calls} calls in {runs} runs against {report.enforced} enforced contracts: "
        f"{report.violations} violations, "
        f"{report.incomplete_runs} incomplete runs, {report.quarantined} records quarantined"
        + (
            " — [red]FAILED[/]"
            if report.failed
            else " — [green]ok[/]"
            if _checked(report)
            else " — [yellow]nothing checked[/]"
        ),
        markup=True,
    )


def _checked(report: CheckReport) -> bool:
    """Whether any contract was checked on any call (an "ok" of nothing proves nothing)."""
    return any(c.checked for c in report.contracts) or not report.contracts


def register(app: typer.Typer) -> None:
    app.command("check")(check_command)
