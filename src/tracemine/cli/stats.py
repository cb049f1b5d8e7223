"""`tracemine stats`: what a store holds."""

from __future__ import annotations

from pathlib import Path

import typer

from tracemine.cli._common import DbOption, JsonOption, console, print_json, printable, run
from tracemine.cli._fit import Column, fit
from tracemine.ingest import StoreStats, stats

ORDER = 11


def stats_command(db: DbOption = Path("traces.duckdb"), as_json: JsonOption = False) -> None:
    """Show tools, calls, tasks, statuses and quarantine counts of a store."""
    result = run(stats, db)
    if as_json:
        print_json(result.model_dump_json(indent=2))
    else:
        render(result)


def render(s: StoreStats) -> None:
    console.print(
        f"[bold]{printable(s.db)}[/]: {s.files} files, {s.runs} runs, {s.tasks} tasks "
        f"({s.runs_without_task} runs without a task id), {s.calls} calls, "
        f"{s.quarantined} quarantined"
    )
    rows = [[t.tool, str(t.calls), str(t.runs), str(t.tasks),
             ", ".join(f"{k} {v}" for k, v in t.statuses.items())] for t in s.tools]  # fmt: skip
    columns = [Column("tool"), Column("calls", numeric=True), Column("runs", numeric=True),
               Column("tasks", numeric=True), Column("statuses", text=True)]  # fmt: skip
    console.print(fit("tools", columns, rows, console.width)[0])
    if s.errors_marked:
        rules = ", ".join(f"{rule} {count}" for rule, count in s.errors_marked.items())
        console.print(f"{sum(s.errors_marked.values())} calls read as ok were marked tool "
                      f"errors by their result ({printable(rules)})")  # fmt: skip
    if s.quarantine_reasons:
        rows = [[reason, str(count)] for reason, count in s.quarantine_reasons.items()]
        columns = [Column("reason", text=True), Column("count", numeric=True)]
        console.print(fit("quarantine", columns, rows, console.width)[0])


def register(app: typer.Typer) -> None:
    app.command("stats")(stats_command)
