"""`tracemine mine`: mine candidate contracts, cross-fitted by task, into a contract file."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tracemine._atomic import write_atomic
from tracemine.cli._common import (
    DbOption,
    FoldsOption,
    JsonOption,
    TaskKeyOption,
    console,
    print_json,
    printable,
    run,
)
from tracemine.cli._fit import Column, fit
from tracemine.cli._progress import QuietOption, Stages
from tracemine.cli._shards import (
    CONNECT_TIMEOUT,
    ConnectTimeoutOption,
    SchedulerOption,
    TlsCaOption,
    TlsCertOption,
    TlsKeyOption,
    WorkerMemoryOption,
    WorkersOption,
    WorkOption,
    check_sharded,
    render_shards,
    run_sharded,
)

if TYPE_CHECKING:
    from tracemine.model.contract import ContractFile

ORDER = 20


def mine_command(
    sources: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[TRACES...]", show_default=False,
            help="With --workers or --scheduler: trace files, folders, globs or URLs "
            "(s3://…) to read and mine across workers, instead of --db.",
        ),
    ] = None,
    db: DbOption = Path("traces.duckdb"),
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", metavar="FILE", show_default=False,
            help="Contract file to write; default: mined_contracts/candidates.json",
        ),
    ] = Path("mined_contracts/candidates.json"),
    tool: Annotated[
        list[str] | None,
        typer.Option("--tool", metavar="NAME", help="Mine only this tool (repeatable)."),
    ] = None,
    where: Annotated[
        list[str] | None,
        typer.Option("--where", metavar="FIELD=VALUE",
                     help="Only runs where FIELD=VALUE, e.g. run_outcome=success."),
    ] = None,
    task_key: TaskKeyOption = None,
    folds: FoldsOption = 5,
    target_fa: Annotated[
        float,
        typer.Option(
            "--target-fa", metavar="RATE",
            help="Per tool, the share of nominal calls that may raise an alarm (predicted "
            "from held-out tasks).",
        ),
    ] = 0.01,
    min_tasks: Annotated[
        int, typer.Option("--min-tasks", metavar="N",
                          help="Tasks a contract needs as support."),
    ] = 5,
    no_crossfit: Annotated[
        bool,
        typer.Option("--no-crossfit", metavar="",
                     help="Mine on all tasks, nothing held out."),
    ] = False,
    run_level: Annotated[
        bool,
        typer.Option(
            "--run-level", metavar="",
            help="Also mine run-level contracts: prior calls, provenance, caps, tool sets.",
        ),
    ] = False,
    all_eligible: Annotated[
        bool,
        typer.Option(
            "--all-eligible", metavar="",
            help="Keep every eligible candidate, without spending the --target-fa budget "
            "(for review; the file says what each costs).",
        ),
    ] = False,
    max_per_tool: Annotated[
        int,
        typer.Option(
            "--max-per-tool", metavar="N", min=1,
            help="At most N contracts a tool keeps besides its schemas, the first bought; "
            "the contract file names what it drops.",
        ),
    ] = 50,
    seed: Annotated[
        int, typer.Option("--seed", metavar="N",
                          help="Seed of the task-to-fold split.")
    ] = 0,
    workers: WorkersOption = None,
    scheduler: SchedulerOption = None,
    work: WorkOption = Path("tracemine-work"),
    worker_memory: WorkerMemoryOption = None,
    connect_timeout: ConnectTimeoutOption = CONNECT_TIMEOUT,
    tls_ca_file: TlsCaOption = None,
    tls_cert: TlsCertOption = None,
    tls_key: TlsKeyOption = None,
    as_json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:  # fmt: skip
    """Mine contracts from nominal calls; keep those that hold on held-out tasks."""
    from tracemine.mine import mine  # heavy (scikit-learn, scipy): only when mining

    out.parent.mkdir(parents=True, exist_ok=True)  # a bad --out is said before the mining
    settings = dict(
        folds=folds, target_fa=target_fa, min_tasks=min_tasks, tools=tool, where=where,
        task_key=task_key, crossfit=not no_crossfit, seed=seed, run_level=run_level,
        budget=not all_eligible, max_per_tool=max_per_tool,
    )  # fmt: skip
    sharded = check_sharded(sources, workers, scheduler)
    if sharded:
        found = run_sharded(sources or [], work, workers, scheduler, worker_memory, settings,
                            connect_timeout, (tls_ca_file, tls_cert, tls_key))  # fmt: skip
        result = found.contracts
    else:
        with Stages("mine", quiet=quiet) as stages:
            result = run(mine, db, **settings, progress=stages.stage)
        # seconds per stage (reading, profiles, relations, held-out counts, …)
        result.provenance["timings"] = stages.timings
    write_atomic(out, result.model_dump_json(indent=2, exclude_none=True) + "\n")
    if as_json:
        print_json(result.model_dump_json(indent=2, exclude_none=True))
        return
    if sharded:
        render_shards(found)
    render(result, out)


def render(result: ContractFile, out: Path) -> None:
    summary = result.provenance.get("summary", {})
    tools = result.provenance.get("selection", {}).get("tools", {})
    columns = [
        Column("tool"),
        *(Column(name, compact, numeric=True) for name, compact in (
            ("calls", None), ("tasks", None), ("candidates", "cand."), ("kept", None),
            ("implied", "impl."), ("folded", "fold."), ("conditional", "cond."),
            ("predicted FA", "pred.\nFA"),
            ("est. detection", "est.\ndet."))),
    ]  # fmt: skip
    rows = []
    for tool, counts in summary.items():
        mine_ = [c for c in result.contracts if c.tool == tool]
        implied = sum(1 for c in mine_ if c.implied_by)
        folded = sum(1 for c in mine_ if c.folded_into)
        conditional = sum(1 for c in mine_ if c.when is not None)
        line = tools.get(tool, {})
        rows.append([tool, str(line.get("calls", "")), str(line.get("tasks", "")),
                     str(counts["candidates"]), str(counts["kept"]), str(implied),
                     str(folded), str(conditional), _share(line.get("predicted_fa")),
                     _share(line.get("predicted_detection"))])  # fmt: skip
    table, _ = fit(f"mine → {out}", columns, rows, console.width)
    console.print(table)
    profile = result.provenance.get("profile", {})
    params = result.provenance.get("params", {})
    folds = f"{params.get('folds')} folds" if params.get("crossfit") else "no cross-fitting"
    console.print(
        f"{len(result.contracts)} contracts from {profile.get('calls', 0)} nominal calls of "
        f"{profile.get('tasks', 0)} tasks ({folds}, target false-alarm "
        f"{params.get('target_fa')}) in {result.provenance.get('seconds', 0):.1f} s; "
        f"{_profiles_said(profile)}"
    )
    folded = sum(1 for c in result.contracts if c.folded_into)
    if folded:
        schemas = sum(1 for c in result.contracts if c.kind.value == "schema")
        read = sum(1 for c in result.contracts if not c.folded_into and not c.implied_by)
        console.print(
            f"{schemas} schemas (one per tool and side) cover {folded} structural contracts "
            f"(folded_into): {read} contracts to review"
        )
    maps = profile.get("maps") or []
    if maps:
        named = [f"{m['path']} ({m['tool']})" for m in maps]
        shown = ", ".join(named[:4]) + (f" and {len(named) - 4} more" if len(named) > 4 else "")
        console.print(f"read as maps (keys are ids, paths say {{*}}): {printable(shown)}")
    noisy = [c for c in result.contracts if c.evidence and c.evidence.flipped_tasks]
    if noisy:
        console.print(
            f"[yellow]{len(noisy)} noisy[/]: verdict differs between trials of a held-out "
            "task (evidence.flipped_tasks, flip_rate)"
        )
    for line in tools.values():
        if line.get("why"):
            console.print(f"[yellow]no contract[/] {printable(line['why'])}")
    _schemas_left_out(tools)
    if profile.get("runs_without_task"):
        console.print(
            f"[yellow]{profile['runs_without_task']} runs have no task id[/]: each counts as "
            "its own task; give --task-key to group them"
        )


TOOLS_NAMED = 4
"""Tools a left-out-schema line names before it counts the rest."""


def _profiles_said(profile: dict) -> str:
    """Whether the mine read the stored profiles, built some tasks' (the others' stored
    rows still held) or built them all."""
    built, tasks = profile.get("tasks_built", 0), profile.get("tasks", 0)
    if profile.get("profiles_reused"):
        return "profiles reused"
    if 0 < built < tasks:
        return f"profiles built for {built} of {tasks} tasks, the others' reused"
    return "profiles computed"


def _schemas_left_out(tools: dict[str, dict]) -> None:
    """Which tools' schemas the budget left out, a line per side, pool and reason: the
    prices and the pool they came from (``provenance.selection.tools[tool].
    schemas_left_out`` has each tool's)."""
    groups: dict[tuple[str, str, str], list[tuple[str, dict]]] = {}
    for tool, line in tools.items():
        if line.get("why"):
            continue  # the tool kept nothing at all, and said why above
        for left in line.get("schemas_left_out", ()):
            key = (left["side"], left["family"], left["reason"])
            groups.setdefault(key, []).append((tool, left))
    for (side, family, reason), found in groups.items():
        names = [tool for tool, _ in found]
        shown = ", ".join(names[:TOOLS_NAMED]) + (
            f" and {len(names) - TOOLS_NAMED} more" if len(names) > TOOLS_NAMED else ""
        )
        prices = sorted(left["price"] for _, left in found)
        low, high = f"{prices[0]:.2%}", f"{prices[-1]:.2%}"
        priced = low + (f"–{high}" if high != low else "")  # not "6.72%–6.72%"
        shapes = [left["shape_price"] for _, left in found if "shape_price" in left]
        shape = f" (shape from {min(shapes):.2%})" if shapes else ""
        first = found[0][1]
        pooled = (f"; {family} pooled over {first['pooled_over']} schemas at "
                  f"{first['pooled_mean']:.2%}" if "pooled_mean" in first else "")  # fmt: skip
        tool_word = "tool" if len(names) == 1 else "tools"
        alone = sum(left.get("members_kept_alone", 0) for _, left in found)
        kept = f"; {alone} of their members kept on their own" if alone else ""
        said = f"({printable(shown)}): priced {priced}{shape}{pooled}: {reason}{kept}"
        console.print(f"[yellow]no {side} schema[/] for {len(names)} {tool_word} {said}")


def _share(value: object) -> str:
    return f"{value:.2%}" if isinstance(value, float | int) else "–"


def register(app: typer.Typer) -> None:
    app.command("mine")(mine_command)
