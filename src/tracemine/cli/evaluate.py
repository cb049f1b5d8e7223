"""`tracemine evaluate`: detection of injected faults and false alarms, per arm and class."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from tracemine.cli._common import (
    FoldsOption,
    JsonOption,
    console,
    print_json,
    run,
    task_key_callback,
)
from tracemine.cli._fit import Column, fit, left_out
from tracemine.cli._progress import QuietOption, Stages

if TYPE_CHECKING:
    from tracemine.evaluate import EvaluationReport

ORDER = 70


def evaluate_command(
    out: Annotated[
        Path,
        typer.Option("--out", "-o", metavar="DIR", help="Folder for the report and contracts."),
    ],
    suite: Annotated[
        str | None,
        typer.Option(
            "--suite",
            "-s",
            metavar="NAME",
            help="Suite to simulate: all, commerce, search or travel.",
        ),
    ] = None,
    tasks: Annotated[
        int, typer.Option("--tasks", "-n", metavar="N", help="Simulated tasks.")
    ] = 300,
    trials: Annotated[
        int, typer.Option("--trials", metavar="N", help="Simulated runs per task.")
    ] = 3,
    traces: Annotated[
        list[Path] | None,
        typer.Option("--traces", metavar="FILE", help="Trace file to evaluate on (repeatable)."),
    ] = None,
    spec: Annotated[
        list[Path] | None,
        typer.Option(
            "--spec",
            metavar="FILE",
            help="Declared source: OpenAPI, function docs, MCP tools/list or JSON Schema "
            "(repeatable; --suite uses the simulator's OpenAPI document).",
        ),
    ] = None,
    task_key: Annotated[
        str | None,
        typer.Option(
            "--task-key",
            metavar="KEY",
            callback=task_key_callback,
            help="Task ids for --traces: a run field, metadata key or regex:PATTERN.",
        ),
    ] = None,
    folds: FoldsOption = 5,
    target_fa: Annotated[
        float,
        typer.Option("--target-fa", metavar="RATE", help="Target false-alarm rate of the miner."),
    ] = 0.01,
    min_tasks: Annotated[
        int, typer.Option("--min-tasks", metavar="N", help="Distinct tasks a mined contract needs.")
    ] = 5,
    eval_share: Annotated[
        float,
        typer.Option(
            "--eval-share", metavar="SHARE", help="Share of tasks held out for evaluation."
        ),
    ] = 0.3,
    max_faults: Annotated[
        int,
        typer.Option("--max-faults", metavar="N", help="Faulted runs per fault class, at most."),
    ] = 200,
    seed: Annotated[
        int, typer.Option("--seed", metavar="N", help="Seed of simulation, split and faults.")
    ] = 0,
    as_json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Split tasks, mine, merge, inject every fault class and compare the arms."""
    from tracemine.evaluate import evaluate

    with Stages("evaluate", quiet=quiet) as stages:
        report = run(
            evaluate, out=out, suite=suite, tasks=tasks, trials=trials, traces=traces,
            spec=spec or None, task_key=task_key, folds=folds, target_fa=target_fa,
            min_tasks=min_tasks, eval_share=eval_share, max_faults=max_faults, seed=seed,
            progress=stages.stage,
        )  # fmt: skip
    if as_json:
        print_json(json.dumps({**report.model_dump(mode="json"), "timings": stages.timings},
                              indent=2))  # fmt: skip
    else:
        render(report)


_COMPACT = {  # headers of the summary at 80 columns: what each figure is, in a word or two
    "false alarms per nominal call [95% CI]": "false alarms\nper call\n[95% CI]",
    "nominal runs with an alarm": "runs with\nan alarm",
    "mean detection, covered classes": "mean\ndetection",
    "selection efficiency (÷ oracle)": "efficiency",
    "predicted per call": "predicted\nper call",
    "realized per call [95% CI]": "realized\nper call\n[95% CI]",
    "realized per task [95% CI]": "realized\nper task\n[95% CI]",
    "calls judged alike as text and as value": "calls judged\nalike as text\nand as value",
    "false alarms per nominal call, results as text [95% CI]": (
        "false alarms\nper call, as\ntext [95% CI]"
    ),
}


def _drop(header: str) -> int:
    """Which family columns go first when the terminal is narrow."""
    from tracemine.evaluate.reliability import OVER_PRICE

    return {"realized per task [95% CI]": 2, OVER_PRICE: 1}.get(header, 0)


def render(report: EvaluationReport) -> None:
    from tracemine.evaluate.reliability import FAMILY_HEADER, family_rows, fresh
    from tracemine.evaluate.report import (
        SUMMARY_HEADER,
        TEXT_HEADER,
        class_header,
        class_rows,
        summary_rows,
        text_rows,
    )

    arms = {a.arm for a in report.arms}
    # the arm and the fault class are what a row is read by: they never wrap
    summary = [Column(name, _COMPACT.get(name), numeric=name != "arm", split=True)
               for name in SUMMARY_HEADER]  # fmt: skip
    table, _ = fit(f"evaluate: {report.source}", summary, summary_rows(report), console.width)
    console.print(table)
    texts = [Column(name, _COMPACT.get(name), numeric=name != "arm", split=True)
             for name in TEXT_HEADER]  # fmt: skip
    table, _ = fit("results given as content text", texts, text_rows(report), console.width)
    console.print(table)
    optional = {"group": 3, "coverage": 2, "injected": 1}
    classes = [Column(name, numeric=name in arms or name == "injected", drop=optional.get(name, 0))
               for name in class_header(report)]  # fmt: skip
    table, dropped = fit("detection per fault class", classes, class_rows(report), console.width)
    console.print(table)
    said = left_out(dropped, console.width)
    if said:
        console.print(said, style="dim")
    for name, families in fresh(report.arms):
        columns = [Column(h, _COMPACT.get(h), numeric=i > 0, split=True, drop=_drop(h))
                   for i, h in enumerate(FAMILY_HEADER)]  # fmt: skip
        title = f"fresh-task calibration per contract family: {name}"
        table, dropped = fit(title, columns, family_rows(families), console.width)
        console.print(table)
        said = left_out(dropped, console.width)
        if said:
            console.print(said, style="dim")
        if families.note:
            console.print(f"[yellow]{escape(name)}:[/] {escape(families.note)}")
    for arm in report.arms:
        if arm.available and arm.note:
            console.print(f"[yellow]{escape(arm.arm)}:[/] {escape(arm.note)}")
    for note in report.notes:
        console.print(f"[yellow]note:[/] {escape(note)}")
    console.print(
        f"{report.tasks.get('mining')} mining / {report.tasks.get('evaluation')} evaluation "
        f"tasks; proposed contracts enforced (no review); {report.seconds:.1f} s; "
        f"report in {report.outputs.get('markdown')}, {report.outputs.get('html')}"
    )


def register(app: typer.Typer) -> None:
    app.command("evaluate")(evaluate_command)
