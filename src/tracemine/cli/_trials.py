"""How ``tracemine check --trials`` shows the contracts whose verdict flips between trials."""

from __future__ import annotations

from tracemine.cli._common import console, printable
from tracemine.cli._fit import Column, fit, left_out
from tracemine.gate import TrialsReport

_EXAMPLES_SHOWN = 2
CONTRACT_COLUMNS = (  # a contract in a table: at 80 columns the path keeps its width
    Column("tool", drop=2), Column("kind"), Column("path", text=True), Column("id", drop=1),
)  # fmt: skip
_COLUMNS = [
    *CONTRACT_COLUMNS,
    Column("tasks flipped", "tasks\nflipped", numeric=True),
    Column("flip rate", "flip\nrate", numeric=True),
    Column("runs violated", "runs\nviol.", numeric=True, drop=3),
    Column("runs held", "runs\nheld", numeric=True, drop=4),
]  # fmt: skip


def render_trials(trials: TrialsReport) -> None:
    if trials.measured:
        console.print(
            f"trials: {trials.runs_grouped} nominal runs of {trials.tasks} tasks with two or "
            f"more trials ({trials.runs_without_task} runs without a task id, "
            f"{trials.runs_not_nominal} runs not nominal, left out)"
        )
    if not trials.noisy:
        console.print("no contract's verdict differs between trials of a task")
        return
    rows = [[n.tool, n.kind, n.path, n.contract_id, f"{n.flipped_tasks}/{n.tasks}",
             f"{n.flip_rate:.0%}",
             *((str(n.violated_runs), str(n.held_runs)) if n.source == "trials" else ("", ""))]
            for n in trials.noisy]  # fmt: skip
    title = "noisy contracts (verdict differs between trials of a task)"
    table, dropped = fit(title, _COLUMNS, rows, console.width)
    if any(n.source == "mine" for n in trials.noisy):
        table.caption = "no runs counted: marked noisy when mined (tasks and rate are mining's)"
    console.print(table)
    if said := left_out(dropped, console.width):
        console.print(said)
    for n in trials.noisy:
        for example in n.examples[:_EXAMPLES_SHOWN]:
            shown = printable(f"{n.tool} {n.kind}: {example}")
            console.print(f"  [yellow]~[/] {shown}", markup=True, soft_wrap=True)
    if trials.strict:
        console.print(f"--strict: the {len(trials.noisy)} noisy contracts count in the verdict")
    else:
        console.print(f"{len(trials.noisy)} noisy contracts kept out of the verdict "
                      "(--strict counts them)")  # fmt: skip
