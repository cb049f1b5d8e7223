"""`tracemine stats`: what a store holds."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from tracemine.cli._common import DbOption, JsonOption, console, print_json, run
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
        f"[bold]{s.db}[/]: {s.files} files, {s.runs} runs, {s.tasks} tasks "
        f"({s.runs_without_task} runs without a task id), {s.calls} calls, "
        f"{s.quarantined} quarantined"
    )
    table = Table(title="tools", title_justify="left")
    for name in ("tool", "calls", "runs", "tasks", "statuses"):
        table.add_column(name, justify="left" if name in ("tool", "statuses") else "right")
    for t in s.tools:
        statuses = ", ".join(f"{k} {v}" for k, v in t.statuses.items())
        table.add_row(t.tool, str(t.calls), str(t.runs), str(t.tasks), statuses)
    console.print(table)
    if s.quarantine_reasons:
        q = Table(title="quarantine", title_justify="left")
        q.add_column("reason")
        q.add_column("count", justify="right")
        for reason, count in s.quarantine_reasons.items():
            q.add_row(reason, str(count))
        console.print(q)


def register(app: typer.Typer) -> None:
    app.command("stats")(stats_command)
