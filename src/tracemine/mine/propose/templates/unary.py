"""Unary templates over one path: present, not_null, type, non_negative, positive, range,
non_empty, length, unique. A candidate is proposed where its context shows no violation
(:func:`~tracemine.mine.propose.measure.unary`), or — for range and length — with bounds calibrated
from the spread of what was seen, not the extremes themselves.
"""

from __future__ import annotations

import math
import sys

from tracemine.mine.propose.context import MineContext, PathProfile
from tracemine.mine.propose.measure import parent_path, unary
from tracemine.mine.propose.templates._base import candidate, is_root
from tracemine.model.contract import Contract, Kind
from tracemine.model.paths import MANY_STEPS

MARGIN_OF_RANGE = 0.25
"""Bounds are widened by this share of the observed range, or one standard deviation if
that is more: the extremes of a sample are the least likely values to be the true limits."""
SCALE_OF_EXTREMES = 2.0
"""For values that were never negative, bounds reach at least twice the largest and half
the smallest seen: amounts, prices and counts have long right tails, and the maximum of a
few dozen tasks is exceeded by a fresh task far more often than an additive margin
suggests (a range fitted on 40 simulated orders alarmed on 5% of fresh ones with a 25%
margin, 0.7% at twice the maximum). A value a hundred times too large still falls out."""
MIN_MULTI_CALLS = 5
"""``unique`` needs at least this many calls whose array had two or more values."""


def _free(kind: Kind, profile: PathProfile, ctx: MineContext, **params: object) -> list[Contract]:
    """The parameter-free candidate ``kind`` where the context shows no violation."""
    found = unary(kind, dict(params), profile.tool, profile.side, profile.path, ctx)
    if found.checked == 0 or found.violations or profile.tasks < ctx.min_support:
        return []
    return [candidate(profile.tool, profile.side, kind, [profile.path], dict(params),
                      calls=found.checked, tasks=profile.tasks)]  # fmt: skip


def presence(ctx: MineContext) -> list[Contract]:
    """``present`` (the key is in every object that could hold it) and ``not_null``."""
    out: list[Contract] = []
    for profile in ctx.profiles():
        if is_root(profile.path):
            continue
        if not profile.path.endswith(MANY_STEPS):
            parent = ctx.paths.get((profile.tool, profile.side, parent_path(profile.path) or ""))
            if parent is not None and parent.tasks >= ctx.min_support:
                out += _free(Kind.PRESENT, profile, ctx)
        out += _free(Kind.NOT_NULL, profile, ctx)
    return out


def types(ctx: MineContext) -> list[Contract]:
    """``type``: every value of the path has one JSON type (integers count as numbers
    where both occur), or one type where it is not null (``["string", "null"]``)."""
    out: list[Contract] = []
    for profile in ctx.profiles():
        json_type = profile.json_type
        if json_type is not None and json_type != "null":
            out += _free(Kind.TYPE, profile, ctx, type=json_type)
        elif json_type is None and (nullable := profile.nullable_type) is not None:
            out += _free(Kind.TYPE, profile, ctx, type=[nullable, "null"])
    return out


def signs(ctx: MineContext) -> list[Contract]:
    """``non_negative`` and ``positive`` for numeric paths."""
    out: list[Contract] = []
    for profile in ctx.profiles():
        if profile["c_all_numeric"] == profile["calls"] and profile["nn"]:
            out += _free(Kind.NON_NEGATIVE, profile, ctx)
            out += _free(Kind.POSITIVE, profile, ctx)
    return out


def calibrate(
    low: float, high: float, total: float, squares: float, count: float, integer: bool
) -> tuple[float, float]:
    """Bounds around the observed ``[low, high]``, widened by a margin from the spread
    (and by a factor, for values never negative); a lower bound never crosses zero when
    nothing below zero was seen. Bounds stay finite floats, however near the largest float
    the values come (their spread and squares overflow there)."""
    mean = total / count
    spread = squares / count - mean * mean
    std = math.sqrt(spread) if spread > 0 and math.isfinite(spread) else 0.0
    margin = max(MARGIN_OF_RANGE * (high - low), std)
    lo, hi = low - margin, high + margin
    if low >= 0:
        lo = max(min(lo, low / SCALE_OF_EXTREMES), 0.0)
        hi = max(hi, high * SCALE_OF_EXTREMES)
    lo, hi = _finite(lo), _finite(hi)
    if integer:
        # nothing below one seen (a count, a length, a positive amount): the bound keeps it
        return float(max(math.floor(lo), 1 if low >= 1 else lo)), float(math.ceil(hi))
    return _round(lo, math.floor), _round(hi, math.ceil)


def _finite(value: float) -> float:
    return min(max(value, -sys.float_info.max), sys.float_info.max)


def _round(value: float, direction) -> float:
    if value == 0:
        return 0.0
    scale = 10 ** (math.floor(math.log10(abs(value))) - 3)
    if scale == 0:
        return value  # a subnormal: no coarser float on that side but zero
    return _finite(direction(value / scale) * scale)


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def ranges(ctx: MineContext) -> list[Contract]:
    """``range`` with calibrated bounds, for numeric paths that take more than one value."""
    out: list[Contract] = []
    for profile in ctx.profiles():
        low, high = profile["nmin"], profile["nmax"]
        if profile["c_all_numeric"] != profile["calls"] or low is None or low == high:
            continue
        if profile.tasks < ctx.min_support:
            continue
        integer = profile["c_all_integer"] == profile["calls"]
        lo, hi = calibrate(low, high, profile["nsum"], profile["nsq"], profile["nn"], integer)
        out.append(candidate(profile.tool, profile.side, Kind.RANGE, [profile.path],
                             {"min": _number(lo), "max": _number(hi)},
                             calls=profile["calls"], tasks=profile.tasks))  # fmt: skip
    return out


def sizes(ctx: MineContext) -> list[Contract]:
    """``non_empty`` and ``length`` for arrays and strings (fixed lengths stay exact:
    they are structural, as in ids)."""
    out: list[Contract] = []
    for profile in ctx.profiles():
        if profile.json_type not in ("array", "string", "object"):
            continue
        out += _free(Kind.NON_EMPTY, profile, ctx)
        low, high = profile["lmin"], profile["lmax"]
        if profile.json_type == "object" or low is None or profile.tasks < ctx.min_support:
            continue
        if low == high:
            lo, hi = float(low), float(high)
        else:
            lo, hi = calibrate(low, high, profile["lsum"], profile["lsq"], profile["ln"], True)
        out.append(candidate(profile.tool, profile.side, Kind.LENGTH, [profile.path],
                             {"min": int(lo), "max": int(hi)},
                             calls=profile["calls"], tasks=profile.tasks))  # fmt: skip
    return out


def uniqueness(ctx: MineContext) -> list[Contract]:
    """``unique``: the values under an array's elements never repeat within a call."""
    out: list[Contract] = []
    for profile in ctx.profiles():
        if not profile.has_wildcard or profile.json_type not in ("string", "integer"):
            continue
        if profile["c_multi"] >= MIN_MULTI_CALLS:
            out += _free(Kind.UNIQUE, profile, ctx)
    return out
