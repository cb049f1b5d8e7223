"""Applying decisions to a contract file, and choosing contracts by id or by filter."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any

from tracemine.errors import ContractFileError, InputError
from tracemine.model.contract import (
    Contract,
    ContractFile,
    ContractStatus,
    Decision,
    Kind,
    MergeLabel,
    Source,
    contract_id,
    load_contracts,
)
from tracemine.review.decisions import ReviewFile, evidence_digest, load_review, review_path


def apply_review(
    contracts: ContractFile, decisions: ReviewFile | Mapping[str, Decision]
) -> ContractFile:
    """A copy of ``contracts`` with each decided contract's status and decision set.

    Decisions match by contract id, which is stable across re-mining. What happened is
    recorded in ``provenance["review"]``: how many decisions applied, which are ``stale``
    (the evidence changed since the decision), which are ``orphaned`` (no contract of
    that id any more) and which ``moved`` (made on a declaration that shared its id with
    a mined contract, now under the declaration's own id). Stale decisions still apply;
    :func:`is_stale` flags them.

    >>> reviewed = apply_review(contracts, load_review("x.review.yaml"))  # doctest: +SKIP
    """
    entries = decisions.decisions if isinstance(decisions, ReviewFile) else decisions
    out = contracts.model_copy(deep=True)
    moved = _moved(out.contracts, entries)
    applied, stale = 0, []
    for contract in out.contracts:
        if contract.id in moved.values():
            continue  # the decision under this id was made on the declaration now apart
        entry = entries.get(moved.get(contract.id, contract.id))
        if entry is None:
            continue
        decision = entry.decision() if hasattr(entry, "decision") else Decision(**dict(entry))
        contract.decision = decision
        contract.status = decision.status
        applied += 1
        if is_stale(contract):
            stale.append(contract.id)
    _follow_schemas(out.contracts, entries)
    known = {c.id for c in out.contracts}
    out.provenance = {
        **out.provenance,
        "review": {
            "decisions": len(entries),
            "applied": applied,
            "stale": stale,
            "orphaned": sorted(set(entries) - known - set(moved.values())),
            "moved": {old: new for new, old in moved.items()},
        },
    }
    return out


def _follow_schemas(contracts: Sequence[Contract], entries: Mapping[str, Any]) -> None:
    """Contracts folded into a schema take the schema's decision, unless they have one
    of their own: the schema is reviewed as one item, and its members are its checks."""
    schemas = {c.id: c for c in contracts if c.kind == Kind.SCHEMA and c.decision is not None}
    for contract in contracts:
        schema = schemas.get(contract.folded_into or "")
        if schema is None or contract.id in entries:
            continue
        contract.status = schema.status
        contract.decision = schema.decision


def _moved(contracts: Sequence[Contract], entries: Mapping[str, Any]) -> dict[str, str]:
    """Decisions made on a declaration while it shared its id with a mined contract (a
    merge before declarations got ids of their own): new id → the id decided on.

    Such a decision is keyed by the shared id; it belongs to the declaration when its
    evidence digest is the declaration's, which a mined contract's never is (their
    sources differ)."""
    moved = {}
    for contract in contracts:
        shared = contract_id(contract)
        if shared == contract.id or contract.id in entries or shared not in entries:
            continue
        digest = getattr(entries[shared], "evidence_digest", None)
        if digest is not None and digest == evidence_digest(contract):
            moved[contract.id] = shared
    return moved


def is_stale(contract: Contract) -> bool:
    """Whether the contract's evidence changed since its decision was made."""
    decision = contract.decision
    if decision is None or decision.evidence_digest is None:
        return False
    return decision.evidence_digest != evidence_digest(contract)


def load_reviewed(
    contracts_path: str | Path, review: str | Path | None = None
) -> tuple[ContractFile, ReviewFile, Path]:
    """Read a contract file and its review file (beside it unless ``review`` is given) and
    apply the decisions. Returns the reviewed contracts, the review and its path."""
    contracts = load_contracts(contracts_path)
    path = Path(review) if review is not None else review_path(contracts_path)
    decisions = load_review(path)
    if not decisions.contracts:
        decisions.contracts = Path(contracts_path).name
    reviewed = apply_review(contracts, decisions)
    for old, new in reviewed.provenance["review"]["moved"].items():
        # saved under the declaration's own id from the next decision on
        decisions.decisions[new] = decisions.decisions.pop(old)
    return reviewed, decisions, path


def reviewed_document(contracts_path: str | Path, review: str | Path) -> tuple[Any, str]:
    """The contract file at ``contracts_path`` as the monitor reads it (parsed JSON) with
    the decisions of ``review`` applied, and a line saying what was applied. A review file
    that is not there, or cannot be read, raises :class:`ContractFileError`."""
    path = Path(review)
    if not path.is_file():
        raise ContractFileError(f"{path}: no such review file")
    reviewed, _, _ = load_reviewed(contracts_path, path)
    said = reviewed.provenance["review"]
    stale, orphaned = len(said["stale"]), len(said["orphaned"])
    more = [f"{stale} stale"] if stale else []
    more += [f"{orphaned} for contracts no longer in the file"] if orphaned else []
    line = f"applied {said['applied']} review decisions from {path}" + (
        f" ({', '.join(more)})" if more else ""
    )
    return reviewed.model_dump(mode="json"), line


def _choices(values: str | Sequence[str] | None, enum: type[StrEnum], option: str) -> set[str]:
    if values is None:
        return set()
    wanted = {values} if isinstance(values, str) else set(values)
    unknown = sorted(wanted - set(enum._value2member_map_))
    if unknown:
        known = ", ".join(e.value for e in enum)
        raise InputError(f"{option} {', '.join(unknown)}: unknown; choose from {known}")
    return wanted


def filter_contracts(
    contracts: ContractFile | Iterable[Contract],
    *,
    tool: str | Sequence[str] | None = None,
    kind: str | Sequence[str] | None = None,
    source: str | Sequence[str] | None = None,
    label: str | Sequence[str] | None = None,
    status: str | Sequence[str] | None = None,
    stale: bool | None = None,
) -> list[Contract]:
    """The contracts matching every filter given; each filter takes one value or several
    (any of them matches). ``source`` matches a contract having that source among its
    sources; ``label`` ``none`` matches contracts without a merge label."""
    items = contracts.contracts if isinstance(contracts, ContractFile) else list(contracts)
    tools = {tool} if isinstance(tool, str) else set(tool or ())
    kinds = _choices(kind, Kind, "--kind")
    sources = _choices(source, Source, "--source")
    labels_given = {label} if isinstance(label, str) else set(label or ())
    labels = _choices(sorted(labels_given - {"none"}), MergeLabel, "--label")
    statuses = _choices(status, ContractStatus, "--status")
    out = []
    for c in items:
        if tools and c.tool not in tools:
            continue
        if kinds and c.kind.value not in kinds:
            continue
        if sources and not sources & {s.value for s in c.sources}:
            continue
        if labels_given and (c.label.value if c.label else "none") not in labels_given | labels:
            continue
        if statuses and c.status.value not in statuses:
            continue
        if stale is not None and is_stale(c) != stale:
            continue
        out.append(c)
    return out


def find_contracts(contracts: ContractFile, ids: Iterable[str]) -> list[Contract]:
    """Contracts by id or unambiguous id prefix (``c_8c7c``), in the order asked."""
    by_id = {c.id: c for c in contracts.contracts}
    out = []
    for wanted in ids:
        if wanted in by_id:
            out.append(by_id[wanted])
            continue
        matches = [c for cid, c in by_id.items() if cid.startswith(wanted)]
        if len(matches) != 1:
            problem = "matches no contract" if not matches else f"matches {len(matches)} contracts"
            raise InputError(f"contract id {wanted!r} {problem}")
        out.append(matches[0])
    return out
