"""`tracemine ingest`: read trace files into the DuckDB store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from tracemine.cli._common import (
    DbOption,
    JsonOption,
    ReaderOption,
    TaskKeyOption,
    console,
    err_console,
    print_json,
    run,
    trace_paths,
)
from tracemine.ingest import FileReport, IngestReport, ingest
from tracemine.ingest.limits import MAX_DEPTH, MAX_GZIP_RATIO, MAX_RECORD_BYTES, Limits

ORDER = 10
_BAR_MIN_BYTES = 8 << 20
_LIMITS = "Limits (past one, a record is quarantined)"  # a panel of its own: long names

ErrorPatternOption = Annotated[
    str | None,
    typer.Option(
        "--error-pattern",
        metavar="REGEX",
        help="Also mark a call read as ok whose result is text matching REGEX (searched) as a "
        "tool error (error_type error_pattern); error payloads are marked without it.",
    ),
]


def ingest_command(
    paths: Annotated[
        list[Path],
        typer.Argument(
            metavar="PATH...", help="Trace files, folders or globs (.jsonl, .json, .gz)."
        ),
    ],
    db: DbOption = Path("traces.duckdb"),
    format: ReaderOption = None,
    task_key: TaskKeyOption = None,
    replace: Annotated[
        bool, typer.Option("--replace", metavar="", help="Re-read files already ingested.")
    ] = False,
    error_pattern: ErrorPatternOption = None,
    max_record_bytes: Annotated[
        int,
        typer.Option(
            metavar="N",
            rich_help_panel=_LIMITS,
            help="Quarantine a record (line, array element, document) longer than this.",
        ),
    ] = MAX_RECORD_BYTES,
    max_depth: Annotated[
        int,
        typer.Option(
            metavar="N",
            rich_help_panel=_LIMITS,
            help="Quarantine a value (arguments, result, metadata) nested deeper than this.",
        ),
    ] = MAX_DEPTH,
    max_gzip_ratio: Annotated[
        float,
        typer.Option(
            metavar="N",
            rich_help_panel=_LIMITS,
            help="Stop reading a .gz that expands past N:1 (a bomb); the rest is quarantined.",
        ),
    ] = MAX_GZIP_RATIO,
    as_json: JsonOption = False,
) -> None:
    """Read trace exports into DuckDB; bad records are quarantined, never dropped."""
    limits = run(Limits, max_record_bytes=max_record_bytes, max_depth=max_depth,
                 max_gzip_ratio=max_gzip_ratio)  # fmt: skip
    paths = run(trace_paths, paths, folders=False)  # folders: ingest walks them itself
    total = sum(p.stat().st_size for p in paths if p.is_file())
    show_bar = not as_json and total >= _BAR_MIN_BYTES and err_console.is_terminal
    if show_bar:
        with Progress(
            TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
            console=err_console, transient=True,
        ) as bar:  # fmt: skip
            tasks: dict[str, TaskID] = {}

            def progress(name: str, done: int, size: int) -> None:
                if name not in tasks:
                    tasks[name] = bar.add_task(Path(name).name, total=size)
                bar.update(tasks[name], completed=done)

            report = run(ingest, paths, db, format=format, task_key=task_key, replace=replace,
                         progress=progress, error_pattern=error_pattern,
                         limits=limits)  # fmt: skip
    else:
        report = run(ingest, paths, db, format=format, task_key=task_key, replace=replace,
                     error_pattern=error_pattern, limits=limits)  # fmt: skip
    if as_json:
        print_json(report.model_dump_json(indent=2))
    else:
        render(report)
    if _found_nothing(report):
        # records read and not one call stored: nothing to mine, which a script must see
        # (with calls from other files, the warning above is enough)
        raise typer.Exit(1)


def _without_calls(report: IngestReport) -> list[FileReport]:
    """Files read now whose records held no call the reader knows."""
    return [f for f in report.files
            if f.outcome != "skipped" and f.units_read and not f.calls]  # fmt: skip


def _found_nothing(report: IngestReport) -> bool:
    return bool(_without_calls(report)) and not report.total("calls")


def render(report: IngestReport) -> None:
    table = Table(title=Text(f"ingest → {report.db}"), title_justify="left")
    table.add_column("file", overflow="fold")
    table.add_column("format")
    table.add_column("outcome")
    table.add_column("read = stored + quar.", justify="right")
    for name in ("runs", "calls", "missing", "s"):
        table.add_column(name, justify="right")
    for f in report.files:
        table.add_row(
            Text(Path(f.source_file).name), f.source_format or "", f.outcome,
            f"{f.units_read} = {f.units_stored} + {f.units_quarantined}", str(f.runs),
            str(f.calls), str(f.calls_missing_result), f"{f.seconds:.1f}",
        )  # fmt: skip
    console.print(table)
    for f in report.files:
        if f.detail:
            console.print(f"  {f.source_file}: {f.detail}", markup=False)
    for f in _without_calls(report):
        records = "record" if f.units_read == 1 else "records"
        console.print(f"[bold yellow]warning:[/] {escape(f.source_file)}: no tool calls stored "
                      f"from its {f.units_read} {records} (see above)")  # fmt: skip
    for f in report.files:
        if f.calls_without_content:
            console.print(
                f"[bold yellow]warning:[/] {escape(f.source_file)}: {f.calls_without_content} "
                f"of {f.calls} calls have no captured arguments or result (turn on content "
                "capture: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, or SPAN_ONLY "
                "for opentelemetry-util-genai); "
                "mining learns nothing from them and check does not evaluate them"
            )
    for f in report.files:
        if f.stopped:
            # a file cut short (a download or a copy that did not finish) is read up to the
            # cut: what came before is kept, and the loss is said where it is seen
            console.print(f"[bold yellow]warning:[/] {escape(f.source_file)}: not read to its "
                          f"end: {escape(f.stopped)}; the records before it are kept, the "
                          "rest is quarantined as one record")  # fmt: skip
    read, stored = report.total("units_read"), report.total("units_stored")
    quarantined = report.total("units_quarantined")
    console.print(
        f"records read {read} = stored {stored} + quarantined {quarantined}; "
        f"{report.total('items_quarantined')} items inside stored records quarantined; "
        f"{report.total('calls')} calls"
    )
    if report.total("runs_without_task"):
        console.print(
            "[yellow]some runs have no task id[/]: mining cross-fits by task; "
            "give --task-key (a field or regex:PATTERN over run ids)"
            + ("; what these runs carry would give:" if report.task_key_suggestions else "")
        )
        for line in report.task_key_suggestions:
            console.print(f"  {line}", markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest_command)
