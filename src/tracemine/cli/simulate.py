"""`tracemine simulate`: write synthetic agent traces and the tools' OpenAPI document."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from tracemine.cli._common import JsonOption, console, print_json, run
from tracemine.simulate import FORMATS, SUITES, write_suite

ORDER = 80


def simulate_command(
    out: Annotated[
        Path, typer.Option("--out", "-o", metavar="DIR", help="Folder to write the files into.")
    ],
    suite: Annotated[
        str,
        typer.Option("--suite", "-s", metavar="NAME", help=f"Suite: one of {', '.join(SUITES)}."),
    ] = "all",
    tasks: Annotated[
        int,
        typer.Option(
            "--tasks", "-n", metavar="N", help="Number of tasks (dealt to the domains in turn)."
        ),
    ] = 30,
    seed: Annotated[
        int, typer.Option("--seed", metavar="N", help="Seed; the same seed writes the same bytes.")
    ] = 0,
    trials: Annotated[int, typer.Option("--trials", metavar="N", help="Runs per task.")] = 3,
    format: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            metavar="NAMES",
            help=f"Trace formats, comma-separated: {', '.join(FORMATS)}, or all.",
        ),
    ] = "openai_chat,otlp",
    gzip: Annotated[
        bool, typer.Option("--gzip", metavar="", help="Compress the trace files (.jsonl.gz).")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Write seeded synthetic traces (with task ids) and their OpenAPI document."""
    names = (
        tuple(FORMATS)
        if format.strip() == "all"
        else tuple(name.strip() for name in format.split(",") if name.strip())
    )
    written = run(write_suite, out, suite=suite, tasks=tasks, seed=seed, trials=trials,
                  formats=names, compress=gzip)  # fmt: skip
    if as_json:
        files = [{"path": p.as_posix(), "bytes": p.stat().st_size} for p in written]
        print_json(json.dumps({"files": files}, indent=2))
        return
    for path in written:
        console.print(f"wrote {path} ({path.stat().st_size:,} bytes)")


def register(app: typer.Typer) -> None:
    app.command("simulate")(simulate_command)
