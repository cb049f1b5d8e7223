"""`tracemine inject`: inject faults into a trace file and write the ground truth beside it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from tracemine.cli._common import (
    JsonOption,
    ReaderOption,
    console,
    print_json,
    run,
    user_errors,
)
from tracemine.errors import InputError
from tracemine.faults import DESCRIPTIONS, FaultClass, InjectReport, inject_file, parse_classes

ORDER = 81


def inject_command(
    source: Annotated[
        Path | None,
        typer.Option("--in", "-i", metavar="FILE", help="Trace file to read (any ingest format)."),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            metavar="FILE",
            help="Trace file to write (and <out>.faults.jsonl, the ground truth).",
        ),
    ] = None,
    classes: Annotated[
        str,
        typer.Option(
            "--classes",
            "-c",
            metavar="NAMES",
            help="Fault classes or groups, comma-separated, or all (see --list).",
        ),
    ] = "all",
    rate: Annotated[
        float, typer.Option("--rate", metavar="SHARE", help="Share of runs given one fault (0–1).")
    ] = 0.2,
    seed: Annotated[
        int, typer.Option("--seed", metavar="N", help="Seed; the same seed injects alike.")
    ] = 0,
    format: ReaderOption = None,
    out_format: Annotated[
        str | None,
        typer.Option(
            "--out-format", metavar="NAME", help="Format to write (default: the input's format)."
        ),
    ] = None,
    list_classes: Annotated[
        bool, typer.Option("--list", metavar="", help="List the fault classes and exit.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Inject seeded faults into nominal traces, recording the ground truth of each."""
    if list_classes:
        table = Table(title="fault classes", title_justify="left")
        for name in ("class", "group", "what"):
            table.add_column(name)
        for fault in FaultClass:
            table.add_row(fault.value, fault.group.value, DESCRIPTIONS[fault])
        console.print(table)
        return
    if source is None or output is None:
        with user_errors():
            raise InputError("--in and --out are required (or --list to see the classes)")
    wanted = run(parse_classes, classes)
    report = run(inject_file, source, output, wanted, rate=rate, seed=seed, format=format,
                 output_format=out_format)  # fmt: skip
    if as_json:
        print_json(report.model_dump_json(indent=2))
    else:
        render(report)


def render(report: InjectReport) -> None:
    console.print(
        f"{report.source} → {report.output} ({report.format}): {report.faults} faults in "
        f"{report.faulted_runs} of {report.runs} runs ({report.calls} calls); "
        f"ground truth in {report.ground_truth}"
    )
    for name, count in report.by_class.items():
        console.print(f"  {name}: {count}")
    if report.input_quarantined:
        console.print(
            f"[yellow]{report.input_quarantined} unreadable items of the input "
            "are not in the output[/]"
        )


def register(app: typer.Typer) -> None:
    app.command("inject")(inject_command)
