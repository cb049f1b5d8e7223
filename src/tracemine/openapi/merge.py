"""Merging mined candidates with declared (and prose) contracts, and labelling each.

For a declared contract D and the mined contracts M of the same family (bounds, sizes,
values, type, …) on the same tool, side and path:

* the traces contradict D — the store holds values that violate it, or, without a store,
  a mined contract conflicts with it (mined range reaching below a declared minimum,
  mined values outside a declared enum, a mined contract equal to D with held-out
  violations) → D is kept, labelled ``observed-violates-declared``, with counterexamples;
* an M equal to D → M gains D's sources, ``declared+observed``;
* an M stricter than D (range [0, 500] under minimum 0, an enum subset) → M gains D's
  sources and keeps what was declared in ``declared``: ``observed-tighter``;
* otherwise D is kept on its own: ``declared+observed`` when the store shows it holding,
  ``declared-unexercised`` when no trace reached the path, when declared enum values
  were never seen (listed in ``declared.unseen``), or when nothing could test it.

Mined contracts no declaration speaks to are ``observed-only``.

Every contract of the merged file has an id of its own. A declaration kept beside a mined
contract of the same id (ids ignore parameter values) takes :func:`declared_id`; mined
ids never change, so review decisions keyed by them keep applying.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tracemine.errors import ContractFileError
from tracemine.model.contract import (
    Contract,
    ContractFile,
    Counterexample,
    Evidence,
    Kind,
    MergeLabel,
    Source,
    declared_id,
    repeated_id,
)
from tracemine.model.personal import personal_kind
from tracemine.openapi.observe import Observation, Observer

_FAMILY = {
    Kind.PRESENT: "present", Kind.NOT_NULL: "not_null", Kind.TYPE: "type",
    Kind.NON_NEGATIVE: "bounds", Kind.POSITIVE: "bounds", Kind.RANGE: "bounds",
    Kind.NON_EMPTY: "size", Kind.LENGTH: "size", Kind.ONE_OF: "values", Kind.CONST: "values",
    Kind.FORMAT: "format", Kind.PATTERN: "pattern", Kind.UNIQUE: "unique",
}  # fmt: skip
_DECLARING = (Source.DECLARED, Source.PROSE)
_RANK = {MergeLabel.OBSERVED_VIOLATES_DECLARED: 3, MergeLabel.OBSERVED_TIGHTER: 2,
         MergeLabel.DECLARED_OBSERVED: 1}  # fmt: skip
Interval = tuple[float, bool, float, bool]


def merge(
    candidates: ContractFile,
    declared: Sequence[Contract],
    *,
    db: str | Path | None = None,
    observer: Observer | None = None,
) -> ContractFile:
    """Merge mined ``candidates`` with ``declared`` contracts into one labelled file.

    ``db`` (or an open ``observer``) is a store to test declared contracts against;
    without one, only the evidence of mined contracts decides. Merging a file that was
    already merged starts again from its mined contracts.

    >>> merged = merge(candidates, declared_contracts(load_spec("api.yaml")))  # doctest: +SKIP
    """
    if observer is None and db is not None:
        with Observer(db) as opened:
            return merge(candidates, declared, observer=opened)
    kept = [i for i, c in enumerate(candidates.contracts) if set(c.sources) - set(_DECLARING)]
    mined = [_fresh(candidates.contracts[i]) for i in kept]
    repeated = repeated_id([m.id for m in mined])
    if repeated:
        cid, first, second = repeated
        where = f"contracts[{kept[first]}] and contracts[{kept[second]}]"
        raise ContractFileError(f"candidates: contract id {cid} is repeated: {where}")
    mined = [m for m in mined if not _personal_literals(m)]
    index: dict[tuple[Any, ...], list[Contract]] = {}
    for m in mined:
        key = _key(m)
        if key is not None:
            index.setdefault(key, []).append(m)
    alone: list[Contract] = []
    for d in _unique_declared(declared):
        key = _key(d)
        matches = [(m, _compare(d, m)) for m in index.get(key, [])] if key else []
        obs = observer.observe(d) if observer is not None else None
        if _violated(d, matches, obs):
            alone.append(d)
            for m, relation in matches:
                if relation == "conflict":
                    _absorb(m, d, MergeLabel.OBSERVED_VIOLATES_DECLARED, sources=False)
            continue
        absorbing = [(m, r) for m, r in matches if r in ("equal", "tighter")]
        for m, relation in absorbing:
            tighter = relation == "tighter"
            _absorb(m, d, MergeLabel.OBSERVED_TIGHTER if tighter else MergeLabel.DECLARED_OBSERVED)
        if not absorbing:
            _label_alone(d, obs)
            alone.append(d)
    for m in mined:
        if m.label is None:
            m.label = MergeLabel.OBSERVED_ONLY
    alone.sort(key=lambda c: (c.tool, c.side.value, c.paths, c.kind.value))
    _own_ids(mined, alone)
    return ContractFile(
        generated_at=datetime.now(UTC),
        provenance={**candidates.provenance, "merge": {"labels": label_counts(mined + alone)}},
        contracts=mined + alone,
    )


def label_counts(contracts: Sequence[Contract]) -> dict[str, int]:
    """How many contracts carry each merge label (all labels, zeros included)."""
    counts = {label.value: 0 for label in MergeLabel}
    for c in contracts:
        if c.label is not None:
            counts[c.label.value] += 1
    return counts


def _personal_literals(c: Contract) -> bool:
    """A mined literal set (or predicate value) listing a person's values: never written,
    whatever file it came from. Declared enums are the spec's words and are kept."""
    listed = c.params.get("values", []) if c.kind == Kind.ONE_OF else (
        [c.params.get("value")] if c.kind == Kind.CONST else [])  # fmt: skip
    if c.when is not None:
        listed = [*listed, *(c.when.value if isinstance(c.when.value, list) else [c.when.value])]
    return any(personal_kind(v) is not None for v in listed)


def _fresh(c: Contract) -> Contract:
    out = c.model_copy(deep=True)
    out.label, out.declared = None, None
    out.sources = [s for s in out.sources if s not in _DECLARING]
    return out


def _unique_declared(declared: Sequence[Contract]) -> list[Contract]:
    """One contract per declaration: specs that declare the same thing (one source said
    it twice, two documents agree) become one with all their sources; declarations that
    differ in their values (two specs' enums on one path) each stay, to be merged and
    reviewed on their own."""
    seen: dict[str, Contract] = {}
    for d in declared:
        kept = seen.setdefault(declared_id(d), d.model_copy(deep=True))
        kept.sources = list(dict.fromkeys([*kept.sources, *d.sources]))
    return list(seen.values())


def _own_ids(mined: Sequence[Contract], alone: Sequence[Contract]) -> None:
    """Give each declaration kept on its own an id no other contract has.

    Ids ignore parameter values so that a re-mine seeing one more value keeps its
    decisions; a declaration beside a mined contract of its path and kind (the traces
    contradict it) or beside another spec's declaration therefore starts with their id.
    Mined ids never change; such a declaration takes :func:`declared_id` instead, so
    a reviewer can reject the stale declaration without touching the mined contract."""
    taken = Counter(c.id for c in [*mined, *alone])
    for d in reversed(alone):  # of two specs' declarations, the first keeps the id
        if taken[d.id] > 1:
            taken[d.id] -= 1
            d.id = declared_id(d)
            taken[d.id] += 1


def _key(c: Contract) -> tuple[Any, ...] | None:
    family = _FAMILY.get(c.kind)
    if family is None or c.when is not None or len(c.paths) != 1:
        return None
    path = c.paths[0]
    if c.kind == Kind.RANGE and path.startswith("len(") and path.endswith(")"):
        family, path = "size", path[4:-1].strip()
    elif "(" in path:
        return None
    return (c.tool, c.side, path, family)


def _compare(d: Contract, m: Contract) -> str:
    """How mined ``m`` relates to declared ``d``: equal, tighter, looser, conflict, other."""
    family = _FAMILY[d.kind]
    if family in ("bounds", "size"):
        a, b = _interval(d), _interval(m)
        if a == b:
            return "equal"
        if _contains(a, b):
            return "tighter"
        return "looser" if _contains(b, a) else "conflict"
    if family == "values":
        dv, mv = _values(d), _values(m)
        if mv == dv:
            return "equal"
        return "tighter" if mv < dv else "conflict"
    if family in ("type", "format"):
        key = family
        if d.params.get(key) == m.params.get(key):
            return "equal"
        integer_in_number = d.params.get(key) == "number" and m.params.get(key) == "integer"
        return "tighter" if family == "type" and integer_in_number else "conflict"
    if family == "pattern":
        return "equal" if d.params.get("regex") == m.params.get("regex") else "other"
    return "equal"


def _interval(c: Contract) -> Interval:
    p = c.params
    if c.kind == Kind.NON_NEGATIVE:
        return (0.0, False, math.inf, False)
    if c.kind == Kind.POSITIVE:
        return (0.0, True, math.inf, False)
    if c.kind == Kind.NON_EMPTY:
        return (1.0, False, math.inf, False)
    low = p.get("min")
    high = p.get("max")
    floor = 0.0 if c.kind == Kind.LENGTH else -math.inf
    return (
        float(low) if isinstance(low, int | float) else floor,
        p.get("min_exclusive") is True,
        float(high) if isinstance(high, int | float) else math.inf,
        p.get("max_exclusive") is True,
    )


def _contains(outer: Interval, inner: Interval) -> bool:
    lo, lo_x, hi, hi_x = outer
    ilo, ilo_x, ihi, ihi_x = inner
    low_ok = lo < ilo or (lo == ilo and (not lo_x or ilo_x))
    high_ok = hi > ihi or (hi == ihi and (not hi_x or ihi_x))
    return low_ok and high_ok


def _values(c: Contract) -> frozenset[tuple[str, Any]]:
    listed = c.params.get("values", []) if c.kind == Kind.ONE_OF else [c.params.get("value")]
    return frozenset(_tag(v) for v in listed)


def _tag(v: Any) -> tuple[str, Any]:
    """Tag by JSON type: in Python True == 1 and 1 == 1.0, in JSON only the latter."""
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, int | float):
        return ("num", float(v))
    return (type(v).__name__, v if isinstance(v, str | None) else repr(v))


def _violated(d: Contract, matches: list[tuple[Contract, str]], obs: Observation | None) -> bool:
    """Whether the traces contradict ``d``; fills its evidence when they do."""
    if obs is not None:  # the store is the ground truth of what was observed
        if not obs.violations:
            return False
        d.evidence = Evidence(calls=obs.calls, tasks=obs.tasks,
                              counterexamples=obs.counterexamples)  # fmt: skip
        d.label = MergeLabel.OBSERVED_VIOLATES_DECLARED
        d.declared = {**(d.declared or {}), "violations": obs.violations, "checked": obs.checked}
        return True
    examples: list[Counterexample] = []
    for m, relation in matches:
        if relation == "conflict":
            calls = m.evidence.calls if m.evidence else 0
            shown = f"mined {m.kind.value} {m.params or ''} on {calls} calls".replace("  ", " ")
            examples.append(Counterexample(observed=shown.strip()))
        elif relation == "equal" and m.evidence and m.evidence.heldout_violations:
            examples.extend(m.evidence.counterexamples[:3])
            held_out = m.evidence.heldout_violations
            examples.append(Counterexample(observed=f"{held_out} held-out violations when mined"))
    if not examples:
        return False
    d.evidence = Evidence(counterexamples=examples[:5])
    d.label = MergeLabel.OBSERVED_VIOLATES_DECLARED
    return True


def _absorb(m: Contract, d: Contract, label: MergeLabel, *, sources: bool = True) -> None:
    if m.label is not None and _RANK.get(m.label, 0) > _RANK.get(label, 0):
        return
    m.label = label
    if sources:
        m.sources = list(dict.fromkeys([*m.sources, *d.sources]))
    m.declared = {"kind": d.kind.value, "params": d.params, **(d.declared or {})}


def _label_alone(d: Contract, obs: Observation | None) -> None:
    info = dict(d.declared or {})
    if obs is None or not obs.checked:
        d.label = MergeLabel.DECLARED_UNEXERCISED
        info["unexercised"] = (
            "no trace reached this path" if obs is not None
            else "no mined contract speaks to it; give a store (--db) to test it"
        )  # fmt: skip
        d.declared = info
        return
    d.label = MergeLabel.DECLARED_OBSERVED
    d.evidence = Evidence(calls=obs.calls, tasks=obs.tasks)
    info["checked"] = obs.checked
    if d.kind == Kind.ONE_OF:
        seen = {_tag(v) for v in obs.seen}
        unseen = [v for v in d.params.get("values", []) if _tag(v) not in seen]
        if unseen:
            d.label = MergeLabel.DECLARED_UNEXERCISED
            info["unseen"] = unseen
    d.declared = info
