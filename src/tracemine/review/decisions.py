"""The review file: a person's accept / reject / mute decisions, kept beside the contracts
(``mined_contracts/candidates.json`` → ``mined_contracts/candidates.review.yaml``) and
keyed by stable contract id, so they survive re-mining.

Each decision records a digest of the evidence it was made on. When re-mining changes what
a contract claims (its bounds, its value set) or whether it held (held-out violations,
folds), the digest changes and the decision is flagged as stale — still applied, but
shown for another look.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import os
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tracemine._atomic import write_atomic
from tracemine.errors import ContractFileError, InputError
from tracemine.model.contract import Contract, ContractStatus, Decision

REVIEW_VERSION = "1"
REVIEW_SUFFIX = ".review.yaml"


class ReviewEntry(Decision):
    """A decision as stored: the :class:`Decision` plus what the contract was, so the file
    reads on its own (``tool``, ``kind``, ``description`` are never used for matching)."""

    model_config = ConfigDict(extra="forbid")

    tool: str = ""
    kind: str = ""
    description: str = ""

    def decision(self) -> Decision:
        return Decision(**self.model_dump(include=set(Decision.model_fields)))


class ReviewFile(BaseModel):
    """All decisions about one contract file, by contract id."""

    model_config = ConfigDict(extra="forbid")

    schema_version: str = REVIEW_VERSION
    contracts: str = Field(
        default="", description="name of the contract file the decisions are about"
    )
    decisions: dict[str, ReviewEntry] = Field(default_factory=dict)


def review_path(contracts_path: str | Path) -> Path:
    """Where the decisions about a contract file live: beside it, ``<name>.review.yaml``."""
    path = Path(contracts_path)
    return path.with_name(path.stem + REVIEW_SUFFIX)


def evidence_digest(contract: Contract) -> str:
    """What a reviewer saw: the parameters' values, the declared side, the sources and
    label, and whether the contract held out of sample. Support counts are left out on
    purpose — they grow with every re-mine on more data and would flag every decision."""
    evidence = contract.evidence
    held = None
    if evidence is not None:
        held = [evidence.heldout_violations, evidence.folds_proposed, evidence.folds]
    payload = json.dumps(
        [contract.params, contract.declared, sorted(contract.sources),
         contract.label.value if contract.label else None, held],
        sort_keys=True, default=str,
    )  # fmt: skip
    return "e_" + hashlib.sha256(payload.encode()).hexdigest()[:12]


def default_reviewer() -> str:
    """``$TRACEMINE_REVIEWER``, else the login name."""
    name = os.environ.get("TRACEMINE_REVIEWER")
    if name:
        return name
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"


def decide(
    review: ReviewFile,
    contracts: Iterable[Contract],
    status: ContractStatus | str,
    *,
    reason: str = "",
    reviewer: str | None = None,
    at: datetime | None = None,
) -> list[str]:
    """Record ``status`` for each of ``contracts`` in ``review``; returns their ids.

    Rejecting or muting needs a reason: a silenced contract nobody can explain is how
    real faults go unseen later.

    >>> decide(review, [contract], "accepted", reason="matches the API docs")  # doctest: +SKIP
    """
    status = ContractStatus(status)
    if status == ContractStatus.PROPOSED:
        raise InputError("a decision is accepted, rejected or muted")
    if status in (ContractStatus.REJECTED, ContractStatus.MUTED) and not reason.strip():
        raise InputError(f"{status.value} needs a reason (--reason)")
    when = at or datetime.now(UTC).replace(microsecond=0)
    who = reviewer or default_reviewer()
    ids = []
    for contract in contracts:
        review.decisions[contract.id] = ReviewEntry(
            status=status, reason=reason, reviewer=who, at=when,
            evidence_digest=evidence_digest(contract), tool=contract.tool,
            kind=contract.kind.value, description=contract.description,
        )  # fmt: skip
        ids.append(contract.id)
    return ids


def load_review(path: str | Path, *, missing_ok: bool = True) -> ReviewFile:
    """Read a review file (YAML or JSON). A missing file is an empty review unless
    ``missing_ok`` is false; an invalid one raises :class:`ContractFileError`."""
    path = Path(path)
    if not path.exists():
        if missing_ok:
            return ReviewFile()
        raise InputError(f"{path}: no such review file")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ContractFileError(f"{path}: cannot read review file: {exc}") from None
    if data is None:
        return ReviewFile()
    if not isinstance(data, dict) or str(data.get("schema_version")) != REVIEW_VERSION:
        version = data.get("schema_version") if isinstance(data, dict) else None
        raise ContractFileError(
            f"{path}: review file version {version!r} is not supported "
            f"(this tracemine reads {REVIEW_VERSION!r})"
        )
    try:
        return ReviewFile.model_validate({**data, "schema_version": str(data["schema_version"])})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ContractFileError(f"{path}: {where}: {first['msg']}") from None


def save_review(review: ReviewFile, path: str | Path) -> Path:
    """Write ``review`` as YAML, decisions sorted by tool then id so diffs stay small."""
    path = Path(path)
    ordered = dict(sorted(review.decisions.items(), key=lambda item: (item[1].tool, item[0])))
    data: dict[str, Any] = review.model_dump(mode="json", exclude={"decisions"})
    data["decisions"] = {
        cid: entry.model_dump(mode="json", exclude_none=True) for cid, entry in ordered.items()
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    write_atomic(path, text)
    return path
