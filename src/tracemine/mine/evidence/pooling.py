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
- **Model.** Within a family, each candidate's failure rate is a draw from Beta(a, b);
  (a, b) maximise the Beta-binomial marginal likelihood of the family's (k, n) under a
  weak hyperprior (worth ``PRIOR_WEIGHT`` candidates) that centres the family mean on
  the pooled rate of its kind and side for a family of a call's arguments or result
  (the pool of all candidates for run-level, conditional and value-claim families) — so
  a family of three is not declared perfect, nor a ``type`` on numbers priced like a
  range. Each candidate is judged by its posterior Beta(a + k, b + n − k), whose mean is
  its expected false-alarm rate on a new task.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from tracemine.model.contract import Contract, Kind

SHAPE = "shape"
"""``params.tier`` of a schema that requires only the keys naming the record asked for
(:mod:`tracemine.mine.evidence.schema`), and the last part of its family's name."""

PRIOR_WEIGHT = 8.0
"""How many candidates the hyperprior on a family's mean is worth."""
CONCENTRATION = (5.0, 1000.0)
"""Bounds of a + b: below, the prior is all-or-nothing; above, it ignores the data."""
_TYPED = (Kind.TYPE, Kind.ONE_OF, Kind.CONST)
_FITTED = (Kind.RANGE, Kind.LENGTH, Kind.ONE_OF, Kind.CONST, Kind.PATTERN)
SUPPORT_BUCKETS = (10, 30, 100)
"""Support (distinct tasks) that splits the families of fitted kinds."""


@dataclass(frozen=True)
class Prior:
    """A family's Beta(a, b) prior on the out-of-sample failure rate of its members."""

    a: float
    b: float
    members: int = 0

    @property
    def mean(self) -> float:
        return self.a / (self.a + self.b)

    def posterior_mean(self, violations: float, checked: float) -> float:
        return (self.a + violations) / (self.a + self.b + checked)

    def tasks_needed(self, target: float) -> int:
        """Held-out tasks without a violation that bring the posterior mean to ``target``."""
        return max(math.ceil(self.a / target - self.a - self.b), 0)


ASKED = "asked"
"""The last step of the family of an argument list's values found in the result
(``subset/result/asked``)."""
VALUE = "value"
"""The last step of a value claim's family name (``non_empty/result/string/value``)."""


def entries(contract: Contract) -> bool:
    """Whether ``contract`` says which entries a map has: its keys are the names an
    argument asked for (``args.hotel_names ⊆ keys(result)``, or the other way round).
    Entries are the map's shape as required keys are an object's, so it belongs in the
    schema; JSON Schema cannot say it, so the exported schema leaves it out."""
    return contract.kind == Kind.SUBSET and any(p.startswith("keys(") for p in contract.paths)


def family_of(contract: Contract, claim: str | None = None) -> str:
    """``kind/side[/type][/when][/support]``: the contracts that share a base rate;
    ``kind/side/type/value`` for a structural kind making a value claim of that type."""
    parts = [contract.kind.value, contract.side.value]
    if contract.kind == Kind.SCHEMA and contract.params.get("tier") == SHAPE:
        # a shape breaks where a value's type does, not where a variant lacks a key
        return "/".join([*parts, SHAPE])
    if claim is not None:
        return "/".join([*parts, claim, VALUE])
    if contract.kind in _TYPED:
        parts.append(_value_type(contract))
    if contract.when is not None:
        parts.append("when")
    if contract.kind == Kind.SUBSET and contract.paths[0].startswith("args") \
            and not entries(contract):  # fmt: skip
        # what was asked for comes back: it breaks where a thing asked for is not found,
        # not where a result strays outside what was asked, so it is priced on its own
        parts.append(ASKED)
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
    """The maximum a posteriori Beta(a, b) for a family's (violations, checked) pairs,
    with the hyperprior Beta(1 + w·centre, 1 + w·(1 − centre)) on its mean a / (a + b)
    and a flat one on log(a + b) within :data:`CONCENTRATION`."""
    # imported here, not on every start of the command line (scipy loads in a second)
    from scipy.optimize import minimize
    from scipy.special import betaln, digamma

    k = np.array([c[0] for c in counts], dtype=float)
    n = np.array([c[1] for c in counts], dtype=float)
    centre = min(max(centre, 1e-4), 1 - 1e-4)
    alpha0, beta0 = 1.0 + PRIOR_WEIGHT * centre, 1.0 + PRIOR_WEIGHT * (1 - centre)

    m = len(k)

    def loss(x: np.ndarray) -> tuple[float, np.ndarray]:
        mu = 1.0 / (1.0 + math.exp(-x[0]))
        s = math.exp(x[1])
        a, b = mu * s, (1 - mu) * s
        fit = float(np.sum(betaln(k + a, n - k + b)) - m * betaln(a, b))
        hyper = (alpha0 - 1) * math.log(mu) + (beta0 - 1) * math.log1p(-mu)
        # the gradient, written out: a family is fitted in a few evaluations, not the
        # dozens finite differences take (mining fits one prior per family)
        whole = digamma(n + a + b)
        d_a = float(np.sum(digamma(k + a) - whole)) - m * (digamma(a) - digamma(a + b))
        d_b = float(np.sum(digamma(n - k + b) - whole)) - m * (digamma(b) - digamma(a + b))
        d_mu = (alpha0 - 1) / mu - (beta0 - 1) / (1 - mu)
        slope = mu * (1 - mu)
        d_x0 = (d_a - d_b) * s * slope + d_mu * slope
        d_x1 = d_a * a + d_b * b
        return -(fit + hyper), -np.array([d_x0, d_x1])

    lo, hi = (math.log(v) for v in CONCENTRATION)
    start = np.array([math.log(centre / (1 - centre)), math.log(2.0)])
    found = minimize(loss, start, jac=True, method="L-BFGS-B",
                     bounds=[(-12.0, 12.0), (lo, hi)])  # fmt: skip
    mu = 1.0 / (1.0 + math.exp(-float(found.x[0])))
    s = math.exp(float(found.x[1]))
    return Prior(mu * s, (1 - mu) * s, len(counts))


def parent_of(family: str) -> str:
    """The kind and side a family refines (``type/result/number`` → ``type/result``)."""
    return "/".join(family.split("/")[:2])


def _pooled_by_kind(name: str) -> bool:
    """Whether a family is centred on its kind and side's pooled rate: every family of
    a call's arguments or result, unconditional, not a value claim. (The mean of every
    candidate's smoothed rate, the other centre, is about 0.5 / (n + 1) for candidates of
    n held-out tasks that never broke: on a corpus of five held-out tasks a candidate it
    says 10 % where the kind's own checks broke under 1 %.)"""
    parts = name.split("/")
    call_level = len(parts) > 1 and parts[1] != "run"
    return call_level and "/when" not in name and not name.endswith("/" + VALUE)


def fit_families(counts: dict[str, list[tuple[float, float]]]) -> dict[str, Prior]:
    """One prior per family. A family of a call's arguments or result (the schemas of a
    side too) is centred on the pooled rate of its kind and side (all checks of every
    value type and support of it), so a family of two ``type`` candidates on numbers is
    priced like ``type`` contracts, not like ranges, and ranges like ranges; run-level
    families, conditional ones (a condition mined on few tasks fails as a value does) and
    value claims on the mean of every candidate's smoothed rate. Kinds a new value breaks
    are held up by their tail floor besides (:func:`tracemine.mine.select.budget.tail_floor`)."""
    # a schema's shape is a second reading of its members' records, not new evidence:
    # it is centred on the schemas of its side and moves no centre itself
    own = {name: family for name, family in counts.items() if not _second_reading(name)}
    centre = pooled_mean(c for family in own.values() for c in family)
    parents: dict[str, list[tuple[float, float]]] = {}
    for name, family in own.items():
        if _pooled_by_kind(name):
            parents.setdefault(parent_of(name), []).extend(family)

    def centre_of(name: str) -> float:
        pooled = parents.get(parent_of(name)) if _pooled_by_kind(name) else None
        return pooled_rate(pooled) if pooled else centre

    return {name: fit_prior(family, centre_of(name))
            for name, family in sorted(counts.items()) if family}  # fmt: skip


def _second_reading(name: str) -> bool:
    """Whether a family is of candidates made from other candidates' records (a schema's
    shape, ``schema/result/shape``)."""
    return name.endswith("/" + SHAPE)
