"""The conditional template's predicates, from the tree's splits."""

from __future__ import annotations

import numpy as np

from tracemine.mine.propose.conditional import Feature, Target
from tracemine.mine.propose.templates.conditional import _best, _predicate
from tracemine.model.contract import Kind


def _feature(values: list[float]) -> Feature:
    return Feature(path="args.n", present=np.ones(len(values), bool), values=np.array(values))


def test_integral_threshold_gives_an_integer_bound() -> None:
    names = [(0, ("num", None))]
    predicate = _predicate([(0, False, 1.5)], names, [_feature([1.0, 2.0, 3.0])])
    assert predicate is not None and (predicate.op, predicate.value) == (">=", 2)


def test_a_split_at_infinity_names_no_predicate() -> None:
    """The tree works in float32, where 1e300 is infinite: a split there is no bound."""
    names = [(0, ("num", None))]
    feature = _feature([1.0, 2.0, 1e300, 1e300])
    assert _predicate([(0, True, float("inf"))], names, [feature]) is None
    assert _predicate([(0, False, float("-inf"))], names, [_feature([0.5, 1e300])]) is None


def test_numbers_beyond_float32_still_fit_a_tree() -> None:
    """An argument of 1e308 is infinite in the tree's float32: it was a ValueError that
    ended the whole mine."""
    values = [float(n) for n in range(1, 21)] + [1e308] * 10
    rows = len(values)
    target = Target(
        tool="t", side="result", path="result.items", kind=Kind.NON_EMPTY,
        keys=np.arange(rows), folds=np.zeros(rows, int), tasks=np.arange(rows),
        violated=np.array([v > 1e300 for v in values]), features=[_feature(values)],
    )  # fmt: skip
    found = _best(target, np.ones(rows, bool), 5, {}, "key")
    assert found is not None
    predicate, calls, _ = found
    assert calls == 20 and predicate.op in ("<", "<=") and 20 <= predicate.value < 1e300


def test_a_column_of_huge_numbers_with_gaps_fits_a_tree() -> None:
    """The tree sums each column in float32 when a value is missing (NaN): values near the
    top of float32's range overflowed that sum, a warning that ended the whole mine."""
    values = [float(n) for n in range(1, 21)] + [3.4e38] * 10 + [float("nan")] * 5
    rows = len(values)
    present = np.array([not np.isnan(v) for v in values])
    feature = Feature(path="args.n", present=present, values=np.array(values))
    target = Target(
        tool="t", side="result", path="result.items", kind=Kind.NON_EMPTY,
        keys=np.arange(rows), folds=np.zeros(rows, int), tasks=np.arange(rows),
        violated=np.array([v > 1e30 for v in values]), features=[feature],
    )  # fmt: skip
    found = _best(target, np.ones(rows, bool), 5, {}, "key")
    assert found is not None
    predicate, *_ = found
    # the split falls between the small values and the huge ones
    assert predicate.path == "args.n" and predicate.op in ("<=", "<", ">=", ">")
    assert 20 <= float(predicate.value) < 3.4e38
