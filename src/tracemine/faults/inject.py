"""The seeded injector: faults into runs, with a ground-truth record for each.

A run is faulted with probability ``rate``; a faulted run gets exactly one fault (one
class, one site), so every difference from nominal in it is explained by its record.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pydantic import BaseModel

from tracemine.errors import InputError
from tracemine.faults import completeness, semantic, structural
from tracemine.faults._base import Context, Site
from tracemine.faults.paths import concrete, get, pattern
from tracemine.faults.taxonomy import FaultClass

APPLIERS: dict[FaultClass, Callable[[dict[str, Any], Context], Iterator[Site]]] = {
    FaultClass.MISSING_RESULT: completeness.missing_result,
    FaultClass.DUPLICATE_CALL_ID: completeness.duplicate_call_id,
    FaultClass.MISMATCHED_CALL_ID: completeness.mismatched_call_id,
    FaultClass.REORDERED_RESULTS: completeness.reordered_results,
    FaultClass.LATE_RESULT: completeness.late_result,
    FaultClass.EXECUTION_ERROR: completeness.execution_error,
    FaultClass.FIELD_OMITTED: structural.field_omitted,
    FaultClass.FIELD_NULL: structural.field_null,
    FaultClass.WRONG_TYPE: structural.wrong_type,
    FaultClass.NEGATIVE_QUANTITY: semantic.negative_quantity,
    FaultClass.EMPTY_MATCH: semantic.empty_match,
    FaultClass.TRUNCATED_LIST: semantic.truncated_list,
    FaultClass.HTML_ERROR_PAGE: semantic.html_error_page,
    FaultClass.UNIT_MISMATCH: semantic.unit_mismatch,
    FaultClass.WRONG_ID: semantic.wrong_id,
    FaultClass.STALE_VALUE: semantic.stale_value,
    FaultClass.AMOUNT_FROM_ID: semantic.amount_from_id,
    FaultClass.UNKNOWN_ENUM: semantic.unknown_enum,
}
_EXCERPT = 160


class FaultRecord(BaseModel):
    """Ground truth for one call a fault touched. A fault touching two calls (swapped
    results) has two records with the same ``fault_id``."""

    fault_id: str
    fault_class: FaultClass
    group: str
    run_id: str
    task_id: str | None
    call_id: str | None
    seq: int | None
    tool: str
    side: str  # args | result | call (ids, status, timing)
    path: str  # concrete: result.items[2].quantity
    path_pattern: str  # as contracts address it: result.items[*].quantity
    before: str | None
    after: str | None
    detail: str


def inject(
    runs: Sequence[dict[str, Any]],
    classes: Sequence[FaultClass | str] = tuple(FaultClass),
    rate: float = 0.2,
    seed: int = 0,
) -> tuple[list[dict[str, Any]], list[FaultRecord]]:
    """Copies of ``runs`` with faults injected, and their ground truth.

    Each run is faulted with probability ``rate``, with one of ``classes`` that fits the
    run, the least used so far first (so classes come out balanced); a fault is kept only
    if it changes the run. The input
    is not modified; the same runs, classes, rate and seed give the same output.

    >>> faulty, truth = inject(runs, ["negative_quantity"], rate=0.5, seed=1)  # doctest: +SKIP
    """
    if not 0.0 <= rate <= 1.0:
        raise InputError(f"--rate must be between 0 and 1 (got {rate})")
    wanted = [FaultClass(c) for c in classes]
    if not wanted:
        raise InputError("no fault class given")
    ctx = Context(list(runs))
    rng = random.Random(f"tracemine-faults/{seed}")
    out = [_fresh(run) for run in runs]
    records: list[FaultRecord] = []
    used: Counter[FaultClass] = Counter({c: 0 for c in wanted})
    for run in out:
        if rng.random() >= rate:
            continue
        order = list(wanted)
        rng.shuffle(order)
        # the least injected class that fits goes first, so classes come out balanced
        order.sort(key=lambda c: used[c])
        for fault_class in order:
            found = _inject_one(run, fault_class, ctx, rng, f"f{used.total() + 1:05d}")
            if found:
                records.extend(found)
                used[fault_class] += 1
                break
    return out, records


def _inject_one(
    run: dict[str, Any], fault_class: FaultClass, ctx: Context, rng: random.Random, fault_id: str
) -> list[FaultRecord]:
    sites = list(APPLIERS[fault_class](run, ctx))
    rng.shuffle(sites)
    for site in sites:
        backup = copy.deepcopy(run)
        before = [_value_at(run, index, site) for index in (site.index, *site.also)]
        detail = site.apply(run, rng)
        if detail is None or _fingerprint(run) == _fingerprint(backup):
            # the fault would not change anything here: undo and try another site
            run.clear()
            run.update(backup)
            continue
        if site.side == "call":  # ids, status, timing: the record field itself
            path = path_pattern = ".".join(str(t) for t in site.tokens)
        else:
            path, path_pattern = concrete(site.side, site.tokens), pattern(site.side, site.tokens)
        records = []
        for index, old in zip((site.index, *site.also), before, strict=True):
            call = run["calls"][index]
            records.append(
                FaultRecord(
                    fault_id=fault_id, fault_class=fault_class, group=fault_class.group,
                    run_id=run["run_id"], task_id=run.get("task_id"), call_id=call.get("call_id"),
                    seq=call.get("seq", index), tool=call["tool"], side=site.side,
                    path=path, path_pattern=path_pattern,
                    before=old, after=_value_at(run, index, site), detail=detail,
                )
            )  # fmt: skip
        return records
    return []


def _value_at(run: dict[str, Any], index: int, site: Site) -> str | None:
    call = run["calls"][index]
    if site.side == "call":
        value = call.get(site.tokens[0]) if site.tokens else None
        if site.tokens == ["result_call_id"] and value is None:
            value = call.get("call_id")  # answered under its own id unless said otherwise
    else:
        root = call.get("arguments" if site.side == "args" else "result")
        try:
            value = get(root, site.tokens)
        except (KeyError, IndexError, TypeError):
            return None  # the value is gone (an omitted field)
    text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= _EXCERPT:
        return text
    # a digest of the whole value, so two long values that differ never read the same
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]
    return f"{text[:_EXCERPT]}… ({len(text)} chars, sha1 {digest})"


def _fresh(value: Any) -> Any:
    """A deep copy that shares nothing, even where the input shares objects (a result
    reused by two calls must not take a fault meant for one)."""
    if isinstance(value, dict):
        return {key: _fresh(child) for key, child in value.items()}
    if isinstance(value, list):
        return [_fresh(child) for child in value]
    return value


def _fingerprint(run: dict[str, Any]) -> str:
    return json.dumps(run, sort_keys=True, default=str)


def variants(
    runs: Sequence[dict[str, Any]],
    classes: Sequence[FaultClass | str],
    *,
    max_sites: int = 16,
    seed: int = 0,
) -> Iterator[tuple[int, FaultClass, dict[str, Any]]]:
    """Every fault of ``classes`` that fits each run, one faulted copy each: (run index,
    class, faulted run). Up to ``max_sites`` sites per run and class, drawn with ``seed``;
    a fault that changes nothing is skipped. Where :func:`inject` draws one fault per run
    for an evaluation, this enumerates them, so a miner can ask which contracts would
    catch each one."""
    ctx = Context(list(runs))
    rng = random.Random(f"tracemine-variants/{seed}")
    for index, run in enumerate(runs):
        plain = _fingerprint(run)
        for fault_class in (FaultClass(c) for c in classes):
            sites = list(APPLIERS[fault_class](run, ctx))
            if len(sites) > max_sites:
                sites = rng.sample(sites, max_sites)
            for site in sites:
                faulty = _fresh(run)
                if site.apply(faulty, rng) is None or _unchanged(faulty, run, plain):
                    continue
                yield index, fault_class, faulty


def _unchanged(faulty: dict[str, Any], run: dict[str, Any], plain: str) -> bool:
    """Whether a faulted copy reads as ``plain``, the fingerprint of ``run``. Runs hold
    JSON values, and equal fingerprints make equal values (a copy's leaves are the run's
    own objects, so even a NaN compares equal to itself): a copy that compares unequal
    has changed, and only one that compares equal (``1``, ``1.0`` and ``True`` compare
    equal) is fingerprinted. A wide call is thousands of values: a comparison costs far
    less than writing them out."""
    return faulty == run and _fingerprint(faulty) == plain
