"""`tracemine import-suite`: replay a public benchmark suite's ground-truth tool calls
against its own tools and write traces (and, for BFCL, its declared schemas)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from tracemine.cli._common import JsonOption, console, err_console, print_json, user_errors
from tracemine.errors import TracemineError
from tracemine.importers import SUITES, ImportReport, import_suite

ORDER = 82


def import_suite_command(
    suite: Annotated[
        str, typer.Argument(metavar="SUITE", help=f"The suite: {' or '.join(SUITES)}.")
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", metavar="DIR", help="Folder to write the files into.")
    ],
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit", "-n", metavar="N", help="At most this many tasks from each task suite."
        ),
    ] = None,
    gzip: Annotated[
        bool, typer.Option("--gzip", metavar="", help="Compress the trace file (.jsonl.gz).")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    r"""Replay a benchmark suite's ground-truth tool calls into flat JSONL traces.

    [bold]agentdojo[/]: every user task of AgentDojo's suites; needs
    `pip install 'tracemine\[agentdojo]'`.

    [bold]bfcl[/]: BFCL's multi-turn base entries, plus bfcl.functions.json (the tools'
    declared response schemas, for `tracemine merge`); needs
    `pip install 'tracemine\[bfcl]'` and `pip install --no-deps bfcl-eval`.

    The same package versions always write the same bytes.
    """
    with user_errors():
        try:
            report = import_suite(suite, out, limit=limit, compress=gzip)
        except TracemineError as exc:
            # printed here, escaped: the install hints hold pip extras in brackets, which
            # the console would otherwise read as markup and drop
            err_console.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
            raise typer.Exit(2) from None
    if as_json:
        print_json(report.model_dump_json(indent=2))
        return
    render(report)


def render(report: ImportReport) -> None:
    outcomes = ", ".join(f"{count} {name}" for name, count in report.outcomes.items())
    console.print(
        f"{report.suite}: {report.tasks} tasks, {report.runs} runs, {report.calls} calls of "
        f"{report.tools} tools, {report.tool_errors} tool errors"
        + (f"; outcomes: {outcomes}" if outcomes else "")
        + f" ({report.seconds:.1f} s)"
    )
    traces = [name for name in report.files if not name.endswith(".functions.json")]
    for name in report.files:
        path = Path(name)
        console.print(f"wrote {path} ({path.stat().st_size:,} bytes)")
    schemas = [name for name in report.files if name.endswith(".functions.json")]
    if traces:
        console.print(f"next: tracemine ingest {' '.join(traces)} --db {report.suite}.duckdb")
    if schemas:
        console.print(f"declared schemas for merge: {' '.join(schemas)}")


def register(app: typer.Typer) -> None:
    app.command("import-suite")(import_suite_command)
