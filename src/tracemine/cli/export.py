"""`tracemine export`: reviewed contracts to the monitor and other harnesses."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from tracemine.cli._common import JsonOption, console, err_console, print_json, run
from tracemine.cli._fit import Column, fit, left_out
from tracemine.export import FORMATS, ExportReport, export_contracts

ORDER = 50


def export_command(
    contracts: Annotated[
        Path,
        typer.Option(
            "--contracts", "-c", metavar="FILE", help="Contract file (candidates or merged)."
        ),
    ],
    format: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            metavar="NAME",
            help=f"Target: {', '.join(FORMATS)} (docs/contracts.md).",
        ),
    ],
    out: Annotated[
        Path,
        typer.Option("--out", "-o", metavar="PATH", help="Output file; a folder for jsonschema."),
    ],
    review: Annotated[
        Path | None,
        typer.Option(
            "--review",
            metavar="FILE",
            help="Review file (default: <contracts>.review.yaml if any).",
        ),
    ] = None,
    include_proposed: Annotated[
        bool, typer.Option("--include-proposed", metavar="", help="Export proposed contracts too.")
    ] = False,
    spec: Annotated[
        Path | None,
        typer.Option("--spec", metavar="FILE", help="OpenAPI document (openapi-overlay)."),
    ] = None,
    mapping: Annotated[
        Path | None,
        typer.Option(
            "--mapping",
            metavar="FILE",
            help="Tool → operation mapping (YAML/JSON; openapi-overlay only).",
        ),
    ] = None,
    traces: Annotated[
        list[Path] | None,
        typer.Option(
            "--traces",
            metavar="FILE",
            help="Trace file, repeatable (pytest and promptfoo targets).",
        ),
    ] = None,
    verbose: Annotated[
        bool,
        typer.Option("--verbose", "-v", help="List every contract not expressed."),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Export accepted contracts; says what the target could not express, by kind."""
    report = run(export_contracts, contracts, format, out, review=review,
                 include_proposed=include_proposed, spec=spec, mapping=mapping,
                 traces=traces or [])  # fmt: skip
    if as_json:
        print_json(report.model_dump_json(indent=2))
    else:
        render(report, verbose=verbose)


def render(report: ExportReport, *, verbose: bool = False) -> None:
    console.print(
        f"{report.format}: {report.exported} of {report.selected} contracts exported "
        f"→ {', '.join(report.files) or 'nothing written'}",
        soft_wrap=True,
        markup=False,
    )
    for note in report.notes:
        err_console.print(f"note: {note}", soft_wrap=True, markup=False)
    if report.unexpressed and verbose:
        title = f"{len(report.unexpressed)} contracts {report.format} cannot express"
        columns = [Column("id", drop=2), Column("tool", drop=1), Column("kind", drop=3),
                   Column("contract", text=True), Column("reason")]  # fmt: skip
        rows = [[u.id, u.tool, u.kind, u.description, u.reason] for u in report.unexpressed]
        table, dropped = fit(title, columns, rows, console.width)
        console.print(table)
        if said := left_out(dropped, console.width):
            console.print(said)
    elif report.unexpressed:
        # one row per kind and reason: the list of every contract is --verbose's (or --json's)
        groups = Counter((u.kind, u.reason) for u in report.unexpressed)
        title = (f"{len(report.unexpressed)} contracts {report.format} cannot express, by "
                 "kind (--verbose lists each)")  # fmt: skip
        columns = [Column("kind"), Column("contracts", numeric=True), Column("reason", text=True)]
        rows = [[kind, str(n), reason] for (kind, reason), n in
                sorted(groups.items(), key=lambda item: (-item[1], item[0]))]  # fmt: skip
        console.print(fit(title, columns, rows, console.width)[0])


def register(app: typer.Typer) -> None:
    app.command("export")(export_command)
