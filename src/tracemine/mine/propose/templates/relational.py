"""Relational templates within one call: ``equals`` (a result echoes an argument, every
element included), ``le`` / ``lt`` (``len(result.items) <= args.limit``, ``start <= end``),
``sum_equals`` (line items add up to the total) and ``member`` / ``subset`` (returned values
come from the requested set). The pairs and their per-task counts come from
:mod:`tracemine.mine.propose.relations`; a template only picks what held in its context.
"""

from __future__ import annotations

from tracemine.mine.propose.context import MineContext
from tracemine.mine.propose.relations import options
from tracemine.mine.propose.templates._base import candidate
from tracemine.model.contract import Contract, Kind


def relations(ctx: MineContext) -> list[Contract]:
    """For each pair, the strongest relation that held on every checked call: equality
    if it held, else the strictest order in each direction."""
    out: list[Contract] = []
    shared = ctx.shared
    if shared is None or shared.relations is None:
        return out
    for pair in shared.relations.pairs:
        counts = ctx.relations.get(pair.pid)
        if not counts or not counts["checked"] or counts["tasks"] < ctx.min_support:
            continue
        held = [o for o in options(pair) if not sum(counts[c] for c in o[2])]
        if pair.kind == "tok" and counts["v2"] == counts["checked"]:
            continue  # the same string every time: an echo, which ``equals`` says
        if pair.kind == "page" and not counts["v2"]:
            continue  # no page was cut by the limit: len == count says it all
        if any(kind == Kind.EQUALS for kind, *_ in held):
            held = [o for o in held if o[0] == Kind.EQUALS]
        seen: set[tuple[str, ...]] = set()
        for kind, paths, _, params in held:
            if tuple(paths) in seen:
                continue
            seen.add(tuple(paths))
            side = "result" if pair.lside == "result" or pair.rside == "result" else "args"
            out.append(candidate(pair.tool, side, kind, paths, params,
                                 calls=counts["checked"], tasks=counts["tasks"]))  # fmt: skip
    return out
