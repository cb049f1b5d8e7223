"""Pooled evidence: contracts of one family share a base rate of failing out of sample.

Real exports have 5–50 calls a tool, too few for a contract to certify itself. But
"the result is an object" and "``order_id`` matches ``^#W\\d{7}$``" are not equally risky,
and the candidates of one mine say how risky each kind is: every candidate was proposed on
some folds and counted on the held-out ones.

- **Units.** Calls of one task repeat each other (trials replay the same results), so a
  held-out count is in tasks: a fold's checked and violating calls are scaled by the
  tasks-per-call ratio of the path in that fold (:func:`effective`). With every call of a
  task alike this is the number of tasks checked and broken.
- **Families.** A family is kind × side × value type (``type``, ``one_of``, ``const``
  name the type they hold), conditional or not, and for kinds with fitted parameters
  (range, length, one_of, const, pattern) the support bucket (tasks ≤ 10, ≤ 30, ≤ 100,
  more): the template decides how a contract can fail out of sample, the value type
  separates an enum of strings from a set of numbers, and bounds fitted on five tasks
  are exceeded far more often than bounds fitted on a hundred. :func:`family_of` is the
  one place that says so.
  A structural kind making a value claim (``non_empty`` on a string, on a list of
  matches, ``present`` under a parent sometimes null:
  :func:`tracemine.mine.evidence.schema.value_claim`)
  is in a family of its own, ``kind/side/type/value``, apart from the structural pool. A
  tool's schema (``schema/side``) is priced from the schemas of every tool.
- **Model.** Within a family, each candidate's failure rate is a draw from Beta(a, b).
  The family's (a, b) is uncertain: a weak hyperprior (worth ``PRIOR_WEIGHT``
  candidates) centres the mean a / (a + b) on the pool of all candidates — for a
  structural kind (type, not_null, present, non_empty), on the pooled rate of that kind
  and side — so a family of three is not declared perfect, nor a ``type`` on numbers
  priced like a range; the concentration a + b is flat in log within ``CONCENTRATION``
  and summed over, one posterior for every family of the mine (:func:`fit_families`),
  since some fifty members with a few broken records do not pin it down. Each candidate
  is judged by its posterior predictive mean, the mixture's (a + k) / (a + b + n) for
  its own (k, n): its expected false-alarm rate on a new task.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from scipy.special import betaln, digamma, polygamma

from tracemine.model.contract import Contract, Kind

PRIOR_WEIGHT = 8.0
"""How many candidates the hyperprior on a family's mean is worth."""
CONCENTRATION = (5.0, 1000.0)
"""Bounds of a + b: below, the prior is all-or-nothing; above, it ignores the data."""
GRID = 48
"""Concentrations a + b, the midpoints of equal cells in log between the bounds, a
family's posterior is summed over."""
_TYPED = (Kind.TYPE, Kind.ONE_OF, Kind.CONST)
_FITTED = (Kind.RANGE, Kind.LENGTH, Kind.ONE_OF, Kind.CONST, Kind.PATTERN)
SUPPORT_BUCKETS = (10, 30, 100)
"""Support (distinct tasks) that splits the families of fitted kinds."""


@dataclass(frozen=True)
class Prior:
    """A family's prior on the out-of-sample failure rate of its members: Beta(a, b), or a
    mixture of Beta(a_i, b_i) with weights w_i (``points``) when the family's (a, b) is
    itself uncertain; ``a`` and ``b`` are then the mixture's weighted means."""

    a: float
    b: float
    members: int = 0
    points: tuple[tuple[float, float, float], ...] = ()

    def _grid(self) -> tuple[tuple[float, float, float], ...]:
        return self.points or ((self.a, self.b, 1.0),)

    @property
    def mean(self) -> float:
        return sum(w * a / (a + b) for a, b, w in self._grid())

    def posterior_mean(self, violations: float, checked: float) -> float:
        return sum(w * (a + violations) / (a + b + checked) for a, b, w in self._grid())

    def tasks_needed(self, target: float) -> int:
        """Held-out tasks without a violation that bring the posterior mean to ``target``."""
        if self.posterior_mean(0, 0) <= target:
            return 0
        low, high = 0, 1
        while self.posterior_mean(0, high) > target:
            if high > 10**9:
                return high
            low, high = high, high * 2
        while high - low > 1:  # the mean falls as clean tasks are added: bisect
            middle = (low + high) // 2
            low, high = (middle, high) if self.posterior_mean(0, middle) > target else (low, middle)
        return high


VALUE = "value"
"""The last step of a value claim's family name (``non_empty/result/string/value``)."""


def family_of(contract: Contract, claim: str | None = None) -> str:
    """``kind/side[/type][/when][/support]``: the contracts that share a base rate;
    ``kind/side/type/value`` for a structural kind making a value claim of that type."""
    parts = [contract.kind.value, contract.side.value]
    if claim is not None:
        return "/".join([*parts, claim, VALUE])
    if contract.kind in _TYPED:
        parts.append(_value_type(contract))
    if contract.when is not None:
        parts.append("when")
    if contract.kind in _FITTED:
        # bounds and value sets fitted on few tasks are exceeded more often (a new value
        # falls outside the extremes of m tasks with chance up to 2/(m+1)): such a kind
        # fails at a rate that depends on its support, so support is part of its family
        tasks = contract.evidence.tasks if contract.evidence else 0
        bound = next((b for b in SUPPORT_BUCKETS if tasks <= b), None)
        parts.append(f"tasks<={bound}" if bound else f"tasks>{SUPPORT_BUCKETS[-1]}")
    return "/".join(parts)


def _value_type(contract: Contract) -> str:
    params = contract.params
    if contract.kind == Kind.TYPE:
        names = params.get("type")
        return "|".join(names) if isinstance(names, list) else str(names)
    values = params.get("values", [params.get("value")])
    names = {"boolean" if isinstance(v, bool) else "string" if isinstance(v, str)
             else "number" if isinstance(v, int | float) else "other" for v in values}  # fmt: skip
    return names.pop() if len(names) == 1 else "mixed"


def effective(checked: int, violations: int, tasks: int, calls: int) -> tuple[float, float]:
    """Held-out (checked, violations) in tasks: calls scaled by tasks per call."""
    if checked <= 0:
        return 0.0, 0.0
    ratio = min(tasks / calls, 1.0) if calls > 0 and tasks > 0 else 1.0
    n = checked * ratio
    return n, min(violations * ratio, n)


def pooled_mean(counts: Iterable[tuple[float, float]]) -> float:
    """The mean of the candidates' smoothed failure rates: where families are centred."""
    rates = [(k + 0.5) / (n + 1.0) for k, n in counts]
    return sum(rates) / len(rates) if rates else 0.5


def pooled_rate(counts: Iterable[tuple[float, float]]) -> float:
    """All violations over all checks, plus half a violation in one check."""
    pairs = list(counts)
    return (sum(k for k, _ in pairs) + 0.5) / (sum(n for _, n in pairs) + 1.0)


def fit_prior(counts: list[tuple[float, float]], centre: float) -> Prior:
    """One family's prior from its own data alone (:func:`fit_families` shares the
    concentration across families): see :func:`_profile`."""
    log_mass, mu, concentration = _profile(counts, centre)
    return _mixture(log_mass, mu, concentration, len(counts))


def _mixture(log_mass: np.ndarray, mu: np.ndarray, concentration: np.ndarray,
             members: int) -> Prior:  # fmt: skip
    """The prior of a family whose mean is ``mu[i]`` at ``concentration[i]``, the
    concentrations weighted by ``exp(log_mass)``."""
    mass = np.exp(log_mass - log_mass.max())
    grid = [(float(mu[i] * concentration[i]), float((1 - mu[i]) * concentration[i]),
             float(mass[i])) for i in range(GRID) if mass[i] > 1e-9 * mass.sum()]  # fmt: skip
    total = sum(w for _, _, w in grid)
    grid = [(a, b, w / total) for a, b, w in grid]
    return Prior(sum(w * a for a, _, w in grid), sum(w * b for _, b, w in grid), members,
                 tuple(grid))  # fmt: skip


def _profile(
    counts: list[tuple[float, float]], centre: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A family's posterior over its Beta(a, b), given its (violations, checked) pairs,
    with the hyperprior Beta(w·centre, w·(1 − centre)) on its mean a / (a + b) and a flat
    one on log(a + b) within :data:`CONCENTRATION`: per concentration of :data:`GRID`,
    the mean at its mode given that concentration, and the log posterior there.

    Not the single maximum: with some fifty members of one to three broken records each,
    the likelihood hardly tells a + b = 5 from 1000, and the maximum lands on either
    bound; at 5 a clean record of 24 tasks divides its member's price by six, at 1000 a
    member's own broken record barely moves it. Summed over the concentrations, a
    member's price is its posterior predictive mean, the pool's and its own record's in
    the measure the data allow. The mean is profiled, not integrated: on a family that
    broke, the two agree within 1 % (``tests/mine/test_selection.py``); where it never
    did, the mode is near zero and a density flat in logit below it would hand the
    integral to wherever the grid ends."""
    pairs, repeats = np.unique(np.array(counts, dtype=float).reshape(-1, 2), axis=0,
                               return_counts=True)  # fmt: skip
    k, n, r = pairs[:, 0], pairs[:, 1], repeats.astype(float)
    m = float(r.sum())
    centre = min(max(centre, 1e-4), 1 - 1e-4)
    # the hyperprior on the mean, Beta(w·centre, w·(1 − centre)), as a density in
    # logit(mean): exponents w·centre and w·(1 − centre), whose mode in logit is the
    # previous maximum's (a Beta(1 + w·centre, …) density in the mean)
    alpha0, beta0 = PRIOR_WEIGHT * centre, PRIOR_WEIGHT * (1 - centre)
    lo, hi = (math.log(v) for v in CONCENTRATION)
    s = np.exp(lo + (hi - lo) * (np.arange(GRID) + 0.5) / GRID)[:, None]  # cell midpoints

    def log_post(x: np.ndarray) -> np.ndarray:
        mu = 1.0 / (1.0 + np.exp(-x))
        a, b = mu * s, (1 - mu) * s
        fit = np.sum(r * (betaln(k + a[..., None], n - k + b[..., None])), axis=-1)
        return fit - m * betaln(a, b) + alpha0 * np.log(mu) + beta0 * np.log1p(-mu)

    # the mode of the mean given each concentration: safeguarded Newton steps in logit
    rate = (float(np.dot(r, k)) + 0.5) / (float(np.dot(r, n)) + 1.0)
    x = np.full_like(s, math.log(rate / (1 - rate)))
    for _ in range(40):
        mu = 1.0 / (1.0 + np.exp(-x))
        q = mu * (1 - mu)
        a, b = mu * s, (1 - mu) * s
        ka, kb = k + a[..., None], n - k + b[..., None]
        d = np.sum(r * (digamma(ka) - digamma(kb)), axis=-1) - m * (digamma(a) - digamma(b))
        d2 = np.sum(r * (polygamma(1, ka) + polygamma(1, kb)), axis=-1)
        d2 -= m * (polygamma(1, a) + polygamma(1, b))
        slope = s * q * d + alpha0 * (1 - mu) - beta0 * mu
        curve = s * q * (1 - 2 * mu) * d + (s * q) ** 2 * d2 - (alpha0 + beta0) * q
        step = np.where(curve < 0, -slope / np.minimum(curve, -1e-9), np.sign(slope))
        x = np.clip(x + np.clip(step, -2.0, 2.0), -14.0, 14.0)
        if float(np.max(np.abs(step))) < 1e-7:
            break
    mu = 1.0 / (1.0 + np.exp(-x[:, 0]))
    return log_post(x)[:, 0], mu, s[:, 0]


STRUCTURAL = frozenset({Kind.TYPE, Kind.NOT_NULL, Kind.PRESENT, Kind.NON_EMPTY})
"""Kinds that say how a result is shaped, not which values it holds: they fail out of
sample alike whatever the field (an optional field, a nullable one), so one pooled rate
of the kind is their centre. Kinds on values fail by their own tails: new extremes, new
categories."""


def parent_of(family: str) -> str:
    """The kind and side a family refines (``type/result/number`` → ``type/result``)."""
    return "/".join(family.split("/")[:2])


def _pooled_by_kind(name: str) -> bool:
    """Whether a family is centred on its kind and side's pooled rate: structural kinds
    and schemas, unconditional, not value claims."""
    kind = name.split("/")[0]
    structural = kind == Kind.SCHEMA.value or kind in {k.value for k in STRUCTURAL}
    return structural and "/when" not in name and not name.endswith("/" + VALUE)


def fit_families(counts: dict[str, list[tuple[float, float]]]) -> dict[str, Prior]:
    """One prior per family, every family with its own mean and one concentration shared
    by all: how far a candidate's rate strays from its family's mean is what a few dozen
    members of one family cannot tell, and every family of the mine can (the log
    posteriors of :func:`_profile` are summed). A family of a structural kind (or the
    schemas of a side) is centred on the pooled rate of its kind and side (all checks of
    every value type of it), so a family of two ``type`` candidates on numbers is priced
    like ``type`` contracts, not like ranges; every other family, conditional ones (a
    condition mined on few tasks fails as a value does) and value claims too, on the mean
    of every candidate's smoothed rate."""
    centre = pooled_mean(c for family in counts.values() for c in family)
    parents: dict[str, list[tuple[float, float]]] = {}
    for name, family in counts.items():
        if _pooled_by_kind(name):
            parents.setdefault(parent_of(name), []).extend(family)
    profiles = {
        name: _profile(family, pooled_rate(parents[parent_of(name)])
                       if _pooled_by_kind(name) else centre)
        for name, family in sorted(counts.items()) if family
    }  # fmt: skip
    shared = sum((p[0] for p in profiles.values()), np.zeros(GRID))
    return {name: _mixture(shared, mu, concentration, len(counts[name]))
            for name, (_, mu, concentration) in profiles.items()}  # fmt: skip
