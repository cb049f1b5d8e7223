"""Known answers for the Wilson score interval the evaluation reports rates with: the
published values of Newcombe (1998, Table II, method 3), the closed form at zero, and the
bounds as the roots of the score equation solved here by the quadratic formula."""

from __future__ import annotations

import math

import pytest

from tracemine.evaluate import wilson

Z = 1.959964


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
        (0, 100, 0.0, 0.0370),
        (10, 100, 0.0552, 0.1744),
        (50, 100, 0.4038, 0.5962),
    ],
)
def test_published_values(k: int, n: int, low: float, high: float) -> None:
    got = wilson(k, n)
    assert got[0] == pytest.approx(low, abs=5e-5)
    assert got[1] == pytest.approx(high, abs=5e-5)


@pytest.mark.parametrize("n", [1, 10, 100, 1000])
def test_zero_of_n(n: int) -> None:
    # with p = 0 the upper bound is z^2 / (n + z^2)
    assert wilson(0, n) == (0.0, pytest.approx(Z * Z / (n + Z * Z), rel=1e-9))
    assert wilson(n, n) == (pytest.approx(n / (n + Z * Z), rel=1e-9), 1.0)


@pytest.mark.parametrize(("k", "n"), [(1, 3), (7, 40), (33, 50), (250, 1000), (999, 1000)])
def test_bounds_solve_the_score_equation(k: int, n: int) -> None:
    # (p_hat - p)^2 = z^2 p (1 - p) / n, i.e. (n + z^2) p^2 - (2k + z^2) p + k^2 / n = 0
    a, b, c = n + Z * Z, -(2 * k + Z * Z), k * k / n
    root = math.sqrt(b * b - 4 * a * c)
    low, high = wilson(k, n)
    assert low == pytest.approx((-b - root) / (2 * a), rel=1e-9)
    assert high == pytest.approx((-b + root) / (2 * a), rel=1e-9)
    # and the interval is symmetric in successes and failures
    other = wilson(n - k, n)
    assert (other[0], other[1]) == (pytest.approx(1 - high), pytest.approx(1 - low))


def test_no_trials_bound_nothing() -> None:
    assert wilson(0, 0) == (0.0, 1.0)
