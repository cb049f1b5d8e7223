"""Implied contracts: a kept contract that a stronger kept one makes redundant.

The monitor does not enforce a contract with ``implied_by``, so a link is made only where
it is logic under the monitor's own semantics: the stronger contract rejects every value
the weaker one rejects. Each kind speaks of one kind of value and passes the others (a
``range`` says nothing about a string or a null, a ``pattern`` nothing about a number), so
a ``range`` never hides a ``type`` or a ``not_null``, and a ``pattern`` never hides a
``type`` or a ``non_empty``. Literal sets (``const``, ``one_of``) reject everything
outside them, so they can hide a ``type``, a ``not_null`` or a ``format`` when every
listed value passes it. This module is the one place that rule is written;
``tests/mine/test_implied_property.py`` checks it against the monitor on generated values.
"""

from __future__ import annotations

from typing import Any

from tracemine.model.contract import Contract, Kind
from tracemine.monitor._formats import FORMATS
from tracemine.monitor._predicates import unary_predicate
from tracemine.monitor._values import key

_STRONGER: dict[Kind, tuple[Kind, ...]] = {
    # weaker kind: stronger kinds on the same path that may imply it, strongest first.
    # Nothing implies `present`: every other unary kind holds vacuously where the path is
    # absent, so hiding `present` behind one would let an omitted field through.
    Kind.NON_NEGATIVE: (Kind.RANGE, Kind.POSITIVE),
    Kind.POSITIVE: (Kind.RANGE,),
    Kind.NOT_NULL: (Kind.CONST, Kind.ONE_OF, Kind.TYPE),
    Kind.TYPE: (Kind.CONST, Kind.ONE_OF),
    Kind.ONE_OF: (Kind.CONST,),
    Kind.FORMAT: (Kind.CONST, Kind.ONE_OF),
    Kind.NON_EMPTY: (Kind.LENGTH,),
    Kind.LE: (Kind.LT,),
}


def _listed(contract: Contract) -> list[Any]:
    params = contract.params
    return list(params["values"]) if contract.kind == Kind.ONE_OF else [params.get("value")]


def implies(strong: Contract, weak: Contract) -> bool:
    """Whether every value ``weak`` rejects is rejected by ``strong`` too (same tool,
    side, paths and condition)."""
    if (strong.tool, strong.side, strong.when, strong.paths) != (
        weak.tool, weak.side, weak.when, weak.paths
    ):  # fmt: skip
        return False
    if strong.kind not in _STRONGER.get(weak.kind, ()):
        return False
    if strong.kind == Kind.LT:
        return True
    if strong.kind == Kind.RANGE:
        low = strong.params.get("min")
        if low is None:
            return False
        return low > 0 if weak.kind == Kind.POSITIVE else low >= 0
    if strong.kind == Kind.LENGTH:
        return (strong.params.get("min") or 0) >= 1
    if strong.kind == Kind.POSITIVE:
        return True
    if strong.kind == Kind.TYPE:
        # a nullable type (["string", "null"]) says nothing against null
        names = strong.params.get("type")
        return names != "null" and not isinstance(names, list)
    # a literal set hides what each of its values passes
    values = _listed(strong)
    if weak.kind == Kind.NOT_NULL:
        return all(v is not None for v in values)
    if weak.kind == Kind.ONE_OF:
        allowed = {key(v) for v in weak.params["values"]}
        return all(key(v) in allowed for v in values)
    if weak.kind == Kind.FORMAT:
        test = FORMATS.get(weak.params.get("format", ""))
        return test is not None and all(isinstance(v, str) and test(v) for v in values)
    passes, _ = unary_predicate("type", weak.params)
    return all(passes(v) for v in values)


def mark_implied(contracts: list[Contract]) -> list[Contract]:
    """Set ``implied_by`` on each contract a stronger kept contract implies (the
    strongest, by the order of ``_STRONGER``)."""
    by_scope: dict[tuple, list[Contract]] = {}
    for contract in contracts:
        by_scope.setdefault((contract.tool, contract.side, contract.paths[0]), []).append(contract)
    out = []
    for contract in contracts:
        order = _STRONGER.get(contract.kind, ())
        stronger = [
            other for other in by_scope[(contract.tool, contract.side, contract.paths[0])]
            if other is not contract and implies(other, contract)
        ]  # fmt: skip
        stronger.sort(key=lambda other: (order.index(other.kind), other.id))
        implied_by = stronger[0].id if stronger else None
        out.append(contract.model_copy(update={"implied_by": implied_by}))
    return out
