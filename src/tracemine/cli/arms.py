"""`tracemine arms`: completion under faults, paired arms with an agent in the loop."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from tracemine.cli._common import JsonOption, console, err_console, print_json, run
from tracemine.cli._fit import Column, fit
from tracemine.errors import InputError

ORDER = 72
AGENTS = ("scripted", "openai")


def arms_command(
    out: Annotated[
        Path, typer.Option("--out", "-o", metavar="DIR", help="Folder for traces and report.")
    ],
    suite: Annotated[
        str,
        typer.Option("--suite", "-s", metavar="NAME", help="Suite: commerce, search or travel."),
    ] = "commerce",
    tasks: Annotated[int, typer.Option("--tasks", "-n", metavar="N", help="Cases to run.")] = 40,
    cases: Annotated[
        Path | None, typer.Option("--cases", metavar="FILE", help="Cases you wrote (JSON file).")
    ] = None,
    agent: Annotated[
        str,
        typer.Option(
            "--agent",
            metavar="NAME",
            help="scripted (deterministic, for CI) or openai (a chat endpoint).",
        ),
    ] = "scripted",
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            metavar="URL",
            help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1.",
        ),
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", metavar="NAME", help="Model name for --agent openai.")
    ] = None,
    temperature: Annotated[
        float, typer.Option("--temperature", metavar="T", help="Sampling temperature sent.")
    ] = 0.0,
    api_key_env: Annotated[
        str,
        typer.Option(
            "--api-key-env",
            metavar="VAR",
            help="Environment variable holding the endpoint's key, if any.",
        ),
    ] = "OPENAI_API_KEY",
    contracts: Annotated[
        Path | None,
        typer.Option(
            "--contracts",
            metavar="FILE",
            help="Contracts for the guarded arms, instead of mining them.",
        ),
    ] = None,
    train_tasks: Annotated[
        int,
        typer.Option(
            "--train-tasks",
            metavar="N",
            help="Clean training tasks (not cases) to mine the contracts on.",
        ),
    ] = 120,
    faults: Annotated[
        str,
        typer.Option(
            "--faults",
            metavar="CLASSES",
            help="Fault classes or groups served live: structural, semantic …",
        ),
    ] = "structural,semantic",
    fault_rate: Annotated[
        float, typer.Option("--fault-rate", metavar="RATE", help="Share of faulty cases.")
    ] = 0.5,
    declared: Annotated[
        bool,
        typer.Option(
            "--declared",
            metavar="",
            help="Add the arm guarded-declared (the suite's declared schema).",
        ),
    ] = False,
    max_turns: Annotated[
        int, typer.Option("--max-turns", metavar="N", help="Agent turns per run, at most.")
    ] = 16,
    seed: Annotated[
        int, typer.Option("--seed", metavar="N", help="Seed of faults, arm order and runs.")
    ] = 0,
    as_json: JsonOption = False,
) -> None:
    """Run each case once per arm (status-only, guarded, guarded-no-recovery); report
    completion and false completion per arm, and the paired differences."""
    from tracemine.arms import run_arms

    chosen = run(_agent, agent, base_url, model, temperature, api_key_env)

    def progress(message: str) -> None:
        err_console.print(f"[dim]·[/] {escape(message)}", markup=True)

    report = run(
        run_arms,
        out=out,
        agent=chosen,
        suite=suite,
        tasks=tasks,
        cases=cases,
        contracts=contracts,
        train_tasks=train_tasks,
        faults=faults,
        fault_rate=fault_rate,
        declared=declared,
        seed=seed,
        max_turns=max_turns,
        progress=None if as_json else progress,
    )
    if as_json:
        import json

        print_json(json.dumps({k: v for k, v in report.items() if k != "runs"}, indent=2))
        return
    render(report, out)


def _agent(
    name: str, base_url: str | None, model: str | None, temperature: float, api_key_env: str
) -> Any:
    from tracemine.arms import OpenAIAgent, ScriptedAgent

    if name == "scripted":
        return ScriptedAgent()
    if name == "openai":
        if not base_url or not model:
            raise InputError("--agent openai needs --base-url URL and --model NAME")
        return OpenAIAgent(base_url, model, temperature=temperature, api_key_env=api_key_env)
    raise InputError(f"--agent: choose one of {', '.join(AGENTS)} (got {name!r})")


def render(report: dict[str, Any], out: Path) -> None:
    from tracemine.gate import LABELS

    compact = {
        "complete-correct": "compl.\ncorrect",
        "safe-incomplete": "safe\nincompl.",
        "unsafe-complete": "unsafe\ncompl.",
        "complete-wrong": "compl.\nwrong",
    }
    columns = [
        Column("arm"),
        Column("runs", numeric=True),
        *(Column(label, compact[label], numeric=True) for label in LABELS),
        Column("completion", "compl.", numeric=True),
        Column("false completion", "false\ncompl.", numeric=True),
    ]
    rows = [
        [
            name,
            str(arm["runs"]),
            *(str(arm["labels"][k]) for k in LABELS),
            _short(arm["completion"]),
            _short(arm["false_completion"]),
        ]
        for name, arm in report["arms"].items()
    ]
    table, _ = fit(f"arms → {out}", columns, rows, console.width)
    console.print(table)
    if report["settings"].get("agent") == "scripted":
        console.print("[yellow]scripted agent[/]: a deterministic policy, not a model's result")
    for pair in report["paired"]:
        if pair["cases"] == "faulty" and pair["outcome"] == "completion":
            diff = pair["difference"]
            console.print(
                f"{escape(pair['arm'])} vs {escape(pair['versus'])} on {pair['n']} faulty cases: "
                f"completion {'–' if diff is None else f'{100 * diff:+.1f} pp'}, "
                f"exact McNemar p = {pair['p_value']:.3g}"
            )
    console.print(f"report in {out / 'report.md'}, {out / 'report.html'}, {out / 'report.json'}")


def _short(rate: dict[str, Any]) -> str:
    """``85.0%``: the counts are beside it, the intervals in the report files."""
    return "n/a" if rate["rate"] is None else f"{100 * rate['rate']:.1f}%"


def register(app: typer.Typer) -> None:
    app.command("arms")(arms_command)
