"""Known answers for the one-sided Clopper–Pearson upper bound on a false-alarm rate:
closed forms at the edges, published values, and the bound's defining property checked
with the binomial distribution written out by hand."""

from __future__ import annotations

import math

import pytest

from tracemine.mine.evidence.crossfit import lower_bound, upper_bound


def binomial_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), summed term by term."""
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


@pytest.mark.parametrize("n", [1, 10, 20, 100, 299, 1000])
def test_no_violation_has_a_closed_form(n: int) -> None:
    # 0 of n: the bound u solves (1 - u)^n = 0.05
    assert upper_bound(0, n) == pytest.approx(1 - 0.05 ** (1 / n), rel=1e-9)


@pytest.mark.parametrize(
    ("violations", "checked", "confidence", "expected"),
    [
        (0, 299, 0.95, 0.00997),  # the "rule of three": about 3/n
        (0, 10, 0.95, 0.2589),
        (0, 100, 0.99, 0.0450),  # 1 - 0.01 ** (1 / 100)
        (1, 10, 0.95, 0.3942),  # published tables of exact one-sided limits
        (9, 10, 0.95, 0.9949),  # n - 1 of n: 0.95 ** (1 / n)
        (2, 50, 0.95, 0.1206),
    ],
)
def test_known_values(violations: int, checked: int, confidence: float, expected: float) -> None:
    got = upper_bound(violations, checked, confidence)
    assert got == pytest.approx(expected, abs=5e-5)


@pytest.mark.parametrize(("violations", "checked"), [(0, 5), (1, 30), (3, 40), (7, 200), (19, 20)])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_the_bound_is_where_the_observed_count_becomes_unlikely(
    violations: int, checked: int, confidence: float
) -> None:
    # one-sided: at the bound, seeing this few violations or fewer has probability 1 - c
    bound = upper_bound(violations, checked, confidence)
    assert violations / checked < bound < 1
    assert binomial_cdf(violations, checked, bound) == pytest.approx(1 - confidence, abs=1e-9)


def test_more_evidence_tightens_the_bound_and_violations_loosen_it() -> None:
    assert upper_bound(0, 100) < upper_bound(0, 50) < upper_bound(0, 10)
    assert upper_bound(0, 100) < upper_bound(1, 100) < upper_bound(5, 100)
    assert upper_bound(2, 100, 0.99) > upper_bound(2, 100, 0.95) > upper_bound(2, 100, 0.9)


@pytest.mark.parametrize(("violations", "checked"), [(0, 0), (3, 3), (5, 4), (0, -1)])
def test_without_evidence_nothing_is_bounded(violations: int, checked: int) -> None:
    assert upper_bound(violations, checked) == 1.0


@pytest.mark.parametrize(("violations", "checked"), [(1, 3), (1, 20), (2, 7.5), (3, 3)])
def test_the_lower_bound_is_where_the_observed_count_becomes_unlikely_from_below(
    violations: float, checked: float
) -> None:
    from scipy.stats import binom

    bound = lower_bound(violations, checked)
    assert 0.0 < bound < violations / checked
    if float(violations).is_integer() and float(checked).is_integer():
        # at the bound, seeing this many violations or more has chance 5 %
        tail = binom.sf(violations - 1, int(checked), bound)
        assert tail == pytest.approx(0.05, rel=1e-6)


def test_no_violation_bounds_nothing_from_below() -> None:
    assert lower_bound(0, 50) == 0.0
    assert lower_bound(0, 0) == 0.0
    assert lower_bound(1, 3) == pytest.approx(1 - 0.95 ** (1 / 3), rel=1e-9)
