"""`tracemine merge`: label mined candidates against what OpenAPI / MCP / JSON Schema declare."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from tracemine.cli._common import JsonOption, console, err_console, print_json, run
from tracemine.cli._fit import Column, fit
from tracemine.cli._progress import QuietOption, Stages
from tracemine.openapi import MergeReport, merge_files

ORDER = 30


def merge_command(
    spec: Annotated[
        list[Path],
        typer.Option(
            "--spec",
            metavar="FILE",
            help="OpenAPI 2/3.0/3.1, MCP tools/list, function docs or JSON Schema (repeatable).",
        ),
    ],
    candidates: Annotated[
        Path,
        typer.Option("--candidates", metavar="FILE", help="Mined contract file (candidates.json)."),
    ] = Path("mined_contracts/candidates.json"),
    mapping: Annotated[
        Path | None,
        typer.Option(
            "--mapping",
            metavar="FILE",
            help="Tool → operation mapping (YAML/JSON); default: operationId.",
        ),
    ] = None,
    old_mapping: Annotated[
        Path | None,
        # the name this option had before export's --mapping set the one name for it
        typer.Option("--map", metavar="FILE", hidden=True),
    ] = None,
    db: Annotated[
        Path | None,
        typer.Option(
            "--db", metavar="FILE", help="Store to test declared contracts against (from ingest)."
        ),
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", metavar="FILE", help="Where to write the merged contracts.")
    ] = Path("mined_contracts/merged.json"),
    as_json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Merge mined candidates with declared constraints and label each contract."""
    if old_mapping is not None:
        if mapping is not None:
            err_console.print("[bold red]error:[/] give --mapping once (--map is its old name)")
            raise typer.Exit(2)
        mapping = old_mapping  # kept working, unlisted, for a release
    with Stages("merge", quiet=quiet) as stages:
        stages.stage("merging" + (" and testing declared contracts on the store" if db else ""))
        report = run(merge_files, candidates, spec, mapping=mapping, db=db, out=out)
    if as_json:
        print_json(_as_json(report, stages.timings))
    else:
        render(report)


def render(report: MergeReport) -> None:
    for s in report.specs:
        source = escape(str(s["source"]))
        console.print(f"[bold]{source}[/]: {s['kind']}, {s['operations']} operations")
    tool_map = report.tool_map
    console.print(
        f"{len(tool_map.tools)} tools mapped to operations; {report.declared} declared or prose "
        f"contracts; {len(report.merged.contracts)} contracts written to {report.out}",
        markup=False,
    )
    rows = [[label, str(count)] for label, count in report.labels.items()]
    columns = [Column("label"), Column("contracts", numeric=True)]
    console.print(fit("merge labels", columns, rows, console.width)[0])
    if tool_map.unmapped_tools:
        unmapped = ", ".join(tool_map.unmapped_tools)
        console.print(f"tools with no operation: {unmapped}", markup=False)
    if tool_map.unmapped_operations:
        shown = tool_map.unmapped_operations[:20]
        more = len(tool_map.unmapped_operations) - len(shown)
        console.print(
            "operations with no tool: "
            + ", ".join(shown)
            + (f" … and {more} more" if more else ""),
            markup=False,
        )
    for warning in report.warnings:
        err_console.print(f"[yellow]warning:[/] {escape(warning)}")


def _as_json(report: MergeReport, timings: dict[str, float]) -> str:
    import json

    return json.dumps(
        {
            "out": report.out,
            "specs": report.specs,
            "declared": report.declared,
            "contracts": len(report.merged.contracts),
            "labels": report.labels,
            "tools": {tool: op.key for tool, op in report.tool_map.tools.items()},
            "unmapped_tools": report.tool_map.unmapped_tools,
            "unmapped_operations": report.tool_map.unmapped_operations,
            "warnings": report.warnings,
            "refused_patterns": report.refused_patterns,
            "timings": timings,
        },
        indent=2,
    )


def register(app: typer.Typer) -> None:
    app.command("merge")(merge_command)
