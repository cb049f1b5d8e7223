"""`tracemine review list|show|cards|accept|reject|mute`: review candidate contracts from the
terminal. Decisions go to the review file beside the contracts (``<name>.review.yaml``)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from tracemine.cli._common import JsonOption, console, print_json, run
from tracemine.cli._fit import Column, fit, left_out
from tracemine.errors import InputError
from tracemine.model.contract import Contract, ContractFile
from tracemine.review import (
    BRIEF_LEGEND,
    Card,
    build_cards,
    cards_json,
    decide,
    filter_contracts,
    find_contracts,
    find_items,
    is_stale,
    load_reviewed,
    save_review,
)

ORDER = 45
review_app = typer.Typer(
    help="List, inspect and decide on candidate contracts.", no_args_is_help=True
)

ContractsOption = Annotated[
    Path, typer.Option("--contracts", "-c", metavar="FILE", help="Contract file to review.")
]
ReviewOption = Annotated[
    Path | None,
    typer.Option(
        "--review", metavar="FILE", help="Review file (default: <contracts>.review.yaml beside it)."
    ),
]
ToolFilter = Annotated[
    list[str] | None, typer.Option("--tool", metavar="NAME", help="Only this tool (repeatable).")
]
KindFilter = Annotated[
    list[str] | None, typer.Option("--kind", metavar="KIND", help="Only this kind (repeatable).")
]
SourceFilter = Annotated[
    list[str] | None,
    typer.Option("--source", metavar="SOURCE", help="mined, declared, prose or manual."),
]
LabelFilter = Annotated[
    list[str] | None,
    typer.Option("--label", metavar="LABEL", help="Merge label, or 'none' (repeatable)."),
]
StatusFilter = Annotated[
    list[str] | None,
    typer.Option("--status", metavar="STATUS", help="proposed, accepted, rejected or muted."),
]
StaleFilter = Annotated[
    bool, typer.Option("--stale", metavar="", help="Only decisions whose evidence changed since.")
]
ReasonOption = Annotated[
    str, typer.Option("--reason", metavar="TEXT", help="Why (needed to reject or mute).")
]
ReviewerOption = Annotated[
    str | None,
    typer.Option("--reviewer", metavar="NAME", help="Who (default: $TRACEMINE_REVIEWER or login)."),
]
LimitOption = Annotated[
    int, typer.Option("--limit", metavar="N", help="Show at most this many rows.")
]
IdArgument = Annotated[str, typer.Argument(metavar="ID", help="Contract id (or a unique prefix).")]
IdsArgument = Annotated[
    list[str] | None,
    typer.Argument(metavar="ID...", help="Contract or card item ids (i_…), or prefixes."),
]
DEFAULT_CONTRACTS = Path("mined_contracts/candidates.json")


def _filters(**given: Any) -> dict[str, Any]:
    return {k: v for k, v in given.items() if v}


def list_command(
    contracts: ContractsOption = DEFAULT_CONTRACTS, review: ReviewOption = None,
    tool: ToolFilter = None, kind: KindFilter = None, source: SourceFilter = None,
    label: LabelFilter = None, status: StatusFilter = None, stale: StaleFilter = False,
    limit: LimitOption = 200,
    as_json: JsonOption = False,
) -> None:  # fmt: skip
    """List contracts with their status, support and held-out violations."""
    reviewed, _, _ = run(load_reviewed, contracts, review)
    found = run(filter_contracts, reviewed, **_filters(tool=tool, kind=kind, source=source,
                label=label, status=status, stale=True if stale else None))  # fmt: skip
    if as_json:
        print_json(json.dumps([c.model_dump(mode="json") for c in found], indent=2))
        return
    one_tool = tool[0] if tool and len(tool) == 1 else None
    statuses = {c.status.value + (" (stale)" if is_stale(c) else "") for c in found[:limit]}
    columns = [
        Column("id"),
        *([] if one_tool else [Column("tool")]),
        Column("kind", drop=2),
        Column("contract", text=True),
        Column("sources", drop=4),
        Column("label", drop=3),
        # one status for every row is said in the title, so a narrow terminal can drop it
        Column("status", drop=1 if len(statuses) == 1 else 0),
        Column("tasks", numeric=True),
        Column("viol.", numeric=True),
    ]
    rows = []
    for c in found[:limit]:
        e = c.evidence
        rows.append([
            c.id, *([] if one_tool else [c.tool]), c.kind.value,
            c.description or ", ".join(c.paths), "+".join(c.sources),
            c.label.value if c.label else "",
            c.status.value + (" (stale)" if is_stale(c) else ""),
            str(e.tasks) if e else "", str(e.heldout_violations) if e else "",
        ])  # fmt: skip
    of = f" of {one_tool}" if one_tool else ""
    all_ = f", all {next(iter(statuses))}" if len(statuses) == 1 else ""
    title = f"{len(found)} of {len(reviewed.contracts)} contracts{of}{all_}"
    table, dropped = fit(title, columns, rows, console.width)
    console.print(table)
    if len(found) > limit:
        console.print(f"… {len(found) - limit} more; narrow with filters or raise --limit")
    said = left_out(dropped, console.width)
    if said:
        console.print(said, style="dim")


def show_command(
    contract_id: IdArgument,
    contracts: ContractsOption = DEFAULT_CONTRACTS, review: ReviewOption = None,
    as_json: JsonOption = False,
) -> None:  # fmt: skip
    """Show one contract: parameters, evidence, counterexamples, decision."""
    reviewed, _, _ = run(load_reviewed, contracts, review)
    (c,) = run(find_contracts, reviewed, [contract_id])
    if as_json:
        print_json(c.model_dump_json(indent=2))
        return
    console.print(f"[bold]{escape(c.id)}[/]  {escape(c.tool)} · {c.side.value} · {c.kind.value}")
    console.print(f"  {c.description or ', '.join(c.paths)}", markup=False)
    console.print(f"  paths: {', '.join(c.paths)}   params: {json.dumps(c.params)}", markup=False)
    if c.when:
        console.print(f"  when: {c.when.render()}", markup=False)
    label = f"   label: {c.label.value}" if c.label else ""
    console.print(f"  sources: {'+'.join(c.sources)}{label}   status: {c.status.value}")
    if c.implied_by:
        console.print(f"  implied by: {c.implied_by}", markup=False)
    if c.declared:
        console.print(f"  declared: {json.dumps(c.declared)}", markup=False)
    if c.evidence:
        e = c.evidence
        console.print(
            f"  evidence: {e.calls} calls from {e.tasks} tasks; proposed in {e.folds_proposed}"
            f"/{e.folds} folds; held out {e.heldout_calls} calls, {e.heldout_violations} "
            f"violations; false-alarm bound {e.fa_upper}"
        )
        if e.family is not None:
            console.print(
                f"  pooled: family {e.family}, expected false alarms on a new task "
                f"{e.fa_posterior:.2%}, {e.fa_share:.3%} of the tool's budget"
                + (f"; est. detection {e.detection:.0%}" if e.detection is not None else "")
            )
        if e.unseen_mass is not None:
            console.print(
                f"  closed set: a new task brings an unseen value with chance {e.unseen_mass:.1%}"
                " (Good-Turing: values seen in one task over all task-values)"
            )
        for x in e.counterexamples:
            console.print(f"    counterexample: run {x.run_id} call {x.call_id}: {x.observed}",
                          markup=False)  # fmt: skip
    if c.decision:
        d = c.decision
        console.print(f"  decision: {d.status.value} by {d.reviewer} at {d.at}: {d.reason}",
                      markup=False)  # fmt: skip
        if is_stale(c):
            console.print("  [yellow]the evidence changed since this decision[/]")


_SHOWN = 20
"""Contracts a decision lists by name; the rest are counted."""


def _decider(status: str) -> Any:
    def command(
        ids: IdsArgument = None,
        contracts: ContractsOption = DEFAULT_CONTRACTS, review: ReviewOption = None,
        reason: ReasonOption = "",
        reviewer: ReviewerOption = None,
        tool: ToolFilter = None, kind: KindFilter = None, source: SourceFilter = None,
        label: LabelFilter = None, status_filter: StatusFilter = None,
        as_json: JsonOption = False,
    ) -> None:  # fmt: skip
        reviewed, decisions, path = run(load_reviewed, contracts, review)
        filters = _filters(tool=tool, kind=kind, source=source, label=label, status=status_filter)
        chosen = _choose(reviewed, ids or [], filters)
        decided = run(decide, decisions, chosen, status, reason=reason, reviewer=reviewer)
        run(save_review, decisions, path)
        if as_json:
            print_json(json.dumps({"status": status, "ids": decided, "review": str(path)}))
        else:
            console.print(f"{status} {len(decided)} contracts → {path}", markup=False)
            # what a filter took, said: `reject --kind length` may take more than meant
            by_id = {c.id: c for c in chosen}
            for cid in decided[:_SHOWN]:
                c = by_id.get(cid)
                said = (
                    f"{c.tool} · {c.kind.value} · {c.description or ', '.join(c.paths)}"
                    if c
                    else ""
                )
                console.print(f"  {cid}  {said}", markup=False, soft_wrap=True)
            if len(decided) > _SHOWN:
                console.print(f"  … and {len(decided) - _SHOWN} more (tracemine review list "
                              f"--status {status})", markup=False)  # fmt: skip

    command.__doc__ = f"Mark contracts {status}: by id, or all that match the filters."
    return command


def _choose(reviewed: ContractFile, ids: list[str], filters: dict[str, Any]) -> list[Contract]:
    if not ids and not filters:
        run(_refuse)
    # an item of a card (`review cards`) stands for every contract in it
    items = [i for i in ids if i.startswith("i_")]
    named = [i for i in ids if not i.startswith("i_")]
    if items:
        found = run(find_items, run(build_cards, reviewed), items)
        named += [cid for item in found for cid in item.contracts]
    chosen = run(find_contracts, reviewed, named) if ids else reviewed.contracts
    return run(filter_contracts, chosen, **filters) if filters else chosen


def _refuse() -> None:
    raise InputError("name contract or item ids or give a filter (--tool, --kind …) to decide on")


def cards_command(
    contracts: ContractsOption = DEFAULT_CONTRACTS, review: ReviewOption = None,
    tool: ToolFilter = None, as_json: JsonOption = False,
) -> None:  # fmt: skip
    """Show one card per tool: a few items, each one decision (accept or reject an item
    by its id to decide all its contracts)."""
    reviewed, _, _ = run(load_reviewed, contracts, review)
    cards = run(build_cards, reviewed, tool=tool)
    if as_json:
        print_json(json.dumps(cards_json(cards), indent=2))
        return
    for card in cards:
        for line in _card_lines(card, console.width):
            console.print(line, markup=False, soft_wrap=True)


def _card_lines(card: Card, width: int) -> list[str]:
    """A card as lines of at most ``width`` characters: the tool, then per item its id,
    status and title, then one line per claim with its evidence beside it, or under it
    when both do not fit."""
    contracts = sum(len(i.contracts) for i in card.items)
    items = f"{len(card.items)} item{'s' if len(card.items) != 1 else ''}"
    out = [f"{card.tool} — {items}, {contracts} contracts"]
    if any(line.brief.startswith("[") for item in card.items for line in item.lines):
        out += textwrap.wrap(BRIEF_LEGEND, width, initial_indent="  ", subsequent_indent="   ")
    for item in card.items:
        head = f"{item.item} [{item.status}] {item.title}"
        out += textwrap.wrap(head, width, initial_indent="  ", subsequent_indent="      ",
                             break_on_hyphens=False)  # fmt: skip
        for line in item.lines:
            indent = "      " + "  " * line.depth
            evidence = line.brief or line.evidence
            both = f"{indent}{line.claim}  {evidence}" if evidence else ""
            if both and len(both) <= width:
                out.append(both)
                continue
            out += textwrap.wrap(line.claim, width, initial_indent=indent,
                                 subsequent_indent=indent + "  ")  # fmt: skip
            if evidence:
                out += textwrap.wrap(evidence, width,
                                     initial_indent=indent + "  ",
                                     subsequent_indent=indent + "   ")  # fmt: skip
    if card.not_kept:
        out += textwrap.wrap(card.not_kept, width, initial_indent="  ", subsequent_indent="    ")
    out.append("")
    return out


def register(app: typer.Typer) -> None:
    review_app.command("list")(list_command)
    review_app.command("show")(show_command)
    review_app.command("cards")(cards_command)
    for verb, status in (("accept", "accepted"), ("reject", "rejected"), ("mute", "muted")):
        review_app.command(verb)(_decider(status))
    app.add_typer(review_app, name="review")
