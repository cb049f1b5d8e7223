"""Templates over the values themselves: ``one_of`` / ``const`` (literal sets), ``format``
and ``pattern`` (id shapes).

Literal sets are proposed only for values that are few and look closed — few of them seen
in one task only (Good–Turing, :func:`unseen_mass`, kept in the evidence) — and never for
values that look personal: those get a ``format`` or ``pattern`` instead.
"""

from __future__ import annotations

from tracemine.mine.profile.formats import (
    common_prefix,
    looks_personal,
    name_tokens,
    pattern_from_shapes,
)
from tracemine.mine.profile.listing import MAX_LITERAL_CHARS
from tracemine.mine.propose.context import MineContext, PathProfile
from tracemine.mine.propose.measure import unary
from tracemine.mine.propose.templates._base import candidate
from tracemine.model.contract import Contract, Kind

_ADDRESS_WORDS = frozenset({"address", "street", "line1", "line2", "name", "phone"})
MAX_ENUM = 12
"""A literal set holds at most this many values."""
TASKS_PER_VALUE = 3
"""The set is proposed only when the path was seen in this many tasks per listed value."""
MAX_UNSEEN_MASS = 0.05
"""A set looks closed when the Good-Turing estimate of the chance that a new task brings
a value not seen (values seen in exactly one task, over all task-values) is at most this."""


def unseen_mass(counts: dict) -> float:
    """Good-Turing: the share of task-values whose value was seen in one task only — the
    estimated chance the next task's value is one never seen. ``counts``: value →
    (calls, tasks)."""
    seen = sum(tasks for _, tasks in counts.values())
    once = sum(1 for _, tasks in counts.values() if tasks == 1)
    return once / seen if seen else 1.0


def literals(ctx: MineContext) -> list[Contract]:
    """``const`` for a single recurring value, ``one_of`` for a few."""
    out: list[Contract] = []
    for key, listing in sorted(ctx.values.items()):
        profile = ctx.paths.get(key)
        if profile is None or not listing.complete or profile.tasks < ctx.min_support:
            continue
        json_type = profile.json_type
        if json_type not in ("string", "boolean", "integer"):
            continue
        values = sorted(listing.counts, key=lambda v: (str(type(v)), v))
        if len(values) > MAX_ENUM or profile.tasks < TASKS_PER_VALUE * len(values):
            continue
        unseen = unseen_mass(listing.counts)
        if unseen > MAX_UNSEEN_MASS:
            continue  # open: many values seen once, a new task likely brings another
        tokens = name_tokens(profile.path)
        if any(looks_personal(v, tokens) for v in values):
            continue
        support = {"calls": profile["calls"], "tasks": profile.tasks}
        if len(values) == 1:
            found = candidate(profile.tool, profile.side, Kind.CONST, [profile.path],
                              {"value": values[0]}, **support)  # fmt: skip
        elif json_type != "boolean" and (json_type == "string" or len(values) <= 5):
            found = candidate(profile.tool, profile.side, Kind.ONE_OF, [profile.path],
                              {"values": values}, **support)  # fmt: skip
        else:
            continue
        assert found.evidence is not None
        found.evidence.unseen_mass = round(unseen, 6)
        out.append(found)
    return out


def _strings(profile: PathProfile) -> bool:
    return profile["c_all_string"] == profile["calls"] and profile["calls"] > 0


def _formatted(profile: PathProfile) -> bool:
    return profile.format is not None and profile["c_fmt"] == profile["calls"]


def formats(ctx: MineContext) -> list[Contract]:
    """``format``: every string of the path has the format its path was surveyed to have
    (date-time, date, uuid, email, uri, currency)."""
    out: list[Contract] = []
    for profile in ctx.profiles():
        if not _strings(profile) or profile.tasks < ctx.min_support:
            continue
        found = unary(Kind.FORMAT, {"format": profile.format}, profile.tool, profile.side,
                      profile.path, ctx)  # fmt: skip
        if profile.format and found.checked and not found.violations:
            out.append(candidate(profile.tool, profile.side, Kind.FORMAT, [profile.path],
                                 {"format": profile.format}, calls=found.checked,
                                 tasks=profile.tasks))  # fmt: skip
    return out


def patterns(ctx: MineContext) -> list[Contract]:
    """``pattern``: strings that all share one id-like shape (letters, digits, separators,
    and a literal prefix such as ``#W``)."""
    out: list[Contract] = []
    for key, listing in sorted(ctx.shapes.items()):
        profile = ctx.paths.get(key)
        if profile is None or not listing.complete or not _strings(profile):
            continue
        if profile.tasks < ctx.min_support or (profile["lmax"] or 0) > MAX_LITERAL_CHARS:
            continue
        if _formatted(profile):
            continue  # a format says it better
        if _ADDRESS_WORDS & {w for step in profile.path.split(".") for w in name_tokens(
                "x." + step)}:  # fmt: skip
            continue  # an address or a name has a shape, but not one to hold results to
        shapes = sorted(listing.counts)
        if not any("9" in shape for shape in shapes):
            continue  # words, not ids: a literal set or nothing
        regex = pattern_from_shapes(shapes, common_prefix(profile["smin"], profile["smax"]))
        if regex is None:
            continue
        out.append(candidate(profile.tool, profile.side, Kind.PATTERN, [profile.path],
                             {"regex": regex}, calls=profile["calls"],
                             tasks=profile.tasks))  # fmt: skip
    return out
