"""Implied contracts: a kept contract that a stronger kept one makes redundant.

``positive`` ⇒ ``non_negative``, ``non_empty`` ⇒ ``present`` … hold as logic only where
the stronger contract rejects every value the weaker one rejects. A ``range`` does not
reject a string or a null that ``type`` and ``not_null`` reject, nor does a ``pattern`` an
integer, so the kinds' order below is only where to look: a link is made when the
stronger contract also caught every sampled fault the weaker one caught (:mod:`detect`).
The monitor does not enforce a contract with ``implied_by``, so this rule, written once
here, decides what a receipt can miss.
"""

from __future__ import annotations

from tracemine.mine.formats import CURRENCIES, FORMAT_NAMES
from tracemine.model.contract import Contract, Kind

_STRONGER: dict[Kind, tuple[Kind, ...]] = {
    # weaker kind: stronger kinds on the same path that may imply it, strongest first.
    # Nothing implies `present`: every other unary kind holds vacuously where the path is
    # absent, so hiding `present` behind one would let an omitted field through.
    Kind.NON_NEGATIVE: (Kind.RANGE, Kind.POSITIVE),
    Kind.POSITIVE: (Kind.RANGE,),
    Kind.NOT_NULL: (Kind.CONST, Kind.ONE_OF, Kind.PATTERN, Kind.FORMAT, Kind.RANGE, Kind.TYPE),
    Kind.TYPE: (Kind.CONST, Kind.ONE_OF, Kind.PATTERN, Kind.FORMAT, Kind.RANGE),
    Kind.ONE_OF: (Kind.CONST,),
    Kind.FORMAT: (Kind.CONST, Kind.ONE_OF),
    Kind.NON_EMPTY: (Kind.LENGTH, Kind.PATTERN),
    Kind.LE: (Kind.LT,),
}


def implies(strong: Contract, weak: Contract) -> bool:
    """Whether ``strong`` holding means ``weak`` holds (same tool, path and condition)."""
    if (strong.tool, strong.side, strong.when) != (weak.tool, weak.side, weak.when):
        return False
    if strong.kind == Kind.LT and weak.kind == Kind.LE:
        return strong.paths == weak.paths
    if strong.paths != weak.paths or strong.kind not in _STRONGER.get(weak.kind, ()):
        return False
    params = strong.params
    if strong.kind == Kind.RANGE:
        low = params.get("min")
        if low is None:
            return weak.kind in (Kind.TYPE, Kind.NOT_NULL)
        if weak.kind == Kind.NON_NEGATIVE:
            return low >= 0
        if weak.kind == Kind.POSITIVE:
            return low > 0
        return weak.kind in (Kind.TYPE, Kind.NOT_NULL) and weak.params.get("type") != "integer"
    if strong.kind == Kind.LENGTH:
        return (params.get("min") or 0) >= 1
    if weak.kind == Kind.TYPE:
        if strong.kind in (Kind.PATTERN, Kind.FORMAT):
            return weak.params.get("type") == "string"
        return True
    if weak.kind == Kind.FORMAT and strong.kind in (Kind.CONST, Kind.ONE_OF):
        return weak.params.get("format") in FORMAT_NAMES and _all_formatted(strong, weak)
    return True


def _all_formatted(strong: Contract, weak: Contract) -> bool:
    values = strong.params.get("values", [strong.params.get("value")])
    if weak.params.get("format") == "currency":
        return all(v in CURRENCIES for v in values)
    return False


_TYPE_GUARDS = frozenset({Kind.TYPE, Kind.NOT_NULL})
"""Kinds never hidden without sampled evidence: what rejects a string or a null."""


def mark_implied(
    contracts: list[Contract], catches: dict[str, set[int]] | None = None
) -> list[Contract]:
    """Set ``implied_by`` on each contract a stronger kept contract implies (the
    strongest, by the order of ``_STRONGER``). With ``catches`` (contract id → sampled
    faults it caught), the stronger one must have caught all of the weaker one's."""
    caught = catches or {}
    by_scope: dict[tuple, list[Contract]] = {}
    for contract in contracts:
        by_scope.setdefault((contract.tool, contract.side, contract.paths[0]), []).append(contract)
    out = []
    for contract in contracts:
        order = (*_STRONGER.get(contract.kind, ()), Kind.LT)
        mine = caught.get(contract.id, set())
        stronger = [
            other for other in by_scope[(contract.tool, contract.side, contract.paths[0])]
            if other is not contract and other.kind in order and implies(other, contract)
            and mine <= caught.get(other.id, set())
            and (bool(mine) or contract.kind not in _TYPE_GUARDS)
        ]  # fmt: skip
        stronger.sort(key=lambda other: (order.index(other.kind), other.id))
        implied_by = stronger[0].id if stronger else None
        out.append(contract.model_copy(update={"implied_by": implied_by}))
    return out
