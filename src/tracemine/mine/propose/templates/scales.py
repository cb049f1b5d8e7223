"""Scale template: ``ratio`` (a result number a fixed multiple of another number of the
call, within a tolerance), fitted per context from :mod:`tracemine.mine.propose.scales`."""

from __future__ import annotations

from tracemine.mine.propose.context import MineContext
from tracemine.mine.propose.templates._base import candidate
from tracemine.model.contract import Contract, Kind


def ratios(ctx: MineContext) -> list[Contract]:
    """Each ratio pair whose ratio held, within ``MAX_SPREAD`` buckets, on every call of
    the context's tasks; not where the two numbers are plainly equal (``equals`` says it)."""
    out: list[Contract] = []
    shared = ctx.shared
    if shared is None or shared.relations is None:
        return out
    scales = shared.relations.scales
    for pair in shared.relations.pairs:
        if pair.kind != "ratio":
            continue
        fitted = scales.fit(pair.pid, ctx)
        if fitted is None:
            continue
        tasks, params = fitted
        if tasks < ctx.min_support or params["ratio"] == 1.0:
            continue
        calls = sum(r.calls for r in scales.rows(pair.pid, ctx))
        out.append(candidate(pair.tool, "result", Kind.RATIO, [pair.lpath, pair.rpath],
                             params, calls=calls, tasks=tasks))  # fmt: skip
    return out
