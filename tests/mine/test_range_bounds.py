"""Range bounds at the edges of the floats: the largest values (whose spread and squares
overflow), integers past 64 bits and subnormals each once ended a mine in OverflowError or
ZeroDivisionError; the bounds must be finite and hold what was seen."""

from __future__ import annotations

import json
import math

import pytest

from tracemine.mine.propose.templates.unary import calibrate

EDGES = {
    "huge": ([1.0, 1e308], False),
    "huge-integers": ([1.0, 1e308], True),
    "both-signs": ([-1e308, 1e308], False),
    "both-signs-integers": ([-1e308, 1e308], True),
    "subnormal": ([0.0, 5e-324], False),
    "tiny": ([-5e-324, 1e-320], False),
}


@pytest.mark.parametrize(("values", "integer"), EDGES.values(), ids=EDGES.keys())
def test_bounds_stay_finite_and_hold_the_values(values: list[float], integer: bool) -> None:
    total = math.fsum(values)
    squares = sum(v * v for v in values)  # overflows to inf, as the store's sum does
    lo, hi = calibrate(min(values), max(values), total, squares, len(values), integer)
    assert math.isfinite(lo) and math.isfinite(hi)
    assert lo <= min(values) and max(values) <= hi
    json.dumps({"min": lo, "max": hi}, allow_nan=False)
