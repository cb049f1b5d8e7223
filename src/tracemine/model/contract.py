"""Contracts: properties of one tool's calls, or of whole runs, that held on nominal
traces — and the versioned file that carries them to review, export and the monitor.

A contract is data. The SQL that mines it, the frame that reviews it and the function
that checks it live in their own stages. Parameters by kind (``params``):

    type        {"type": "integer"|"number"|"string"|"boolean"|"array"|"object"|"null"}
    range       {"min": x, "max": y}            (either may be absent)
    one_of      {"values": [...]}
    length      {"min": n, "max": m}            (arrays, strings, objects)
    format      {"format": "date-time"|"date"|"uuid"|"email"|"uri"|"currency"|...}
    pattern     {"regex": "^#W[0-9]{7}$"}
    const       {"value": v}
    sum_equals  {"tolerance": t}                paths: [sum(...), total]
    equals/le/lt/member/subset                   paths: [left, right]
    requires_prior {"tool": A, "same": ["args.order_id", "args.order_id"]?}   (run)
    provenance  {"from_tool": A, "from_path": "result.total_cents"}   paths: [this arg] (run)
    call_cap    {"max": n}                                                        (run)
    expected_tools {"family": f, "required": [...], "forbidden": [...]}           (run)
    completeness {}       every call answered exactly once with its own id        (run)

``when`` makes any of them conditional: the contract applies only to calls where the
predicate holds (``args.status == "open"``).
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = "1"
"""Version of the contract file format; readers refuse other versions."""


class Kind(StrEnum):
    # unary
    PRESENT = "present"
    NOT_NULL = "not_null"
    TYPE = "type"
    NON_NEGATIVE = "non_negative"
    POSITIVE = "positive"
    RANGE = "range"
    ONE_OF = "one_of"
    NON_EMPTY = "non_empty"
    LENGTH = "length"
    FORMAT = "format"
    PATTERN = "pattern"
    UNIQUE = "unique"
    CONST = "const"
    # relational, within one call
    EQUALS = "equals"
    LE = "le"
    LT = "lt"
    SUM_EQUALS = "sum_equals"
    MEMBER = "member"
    SUBSET = "subset"
    # run-level
    COMPLETENESS = "completeness"
    REQUIRES_PRIOR = "requires_prior"
    PROVENANCE = "provenance"
    CALL_CAP = "call_cap"
    EXPECTED_TOOLS = "expected_tools"


RUN_KINDS = frozenset(
    {Kind.COMPLETENESS, Kind.REQUIRES_PRIOR, Kind.PROVENANCE, Kind.CALL_CAP, Kind.EXPECTED_TOOLS}
)
RELATIONAL_KINDS = frozenset(
    {Kind.EQUALS, Kind.LE, Kind.LT, Kind.SUM_EQUALS, Kind.MEMBER, Kind.SUBSET}
)


class Side(StrEnum):
    ARGS = "args"
    RESULT = "result"
    RUN = "run"


class Source(StrEnum):
    MINED = "mined"
    DECLARED = "declared"
    PROSE = "prose"
    MANUAL = "manual"


class MergeLabel(StrEnum):
    DECLARED_OBSERVED = "declared+observed"
    OBSERVED_TIGHTER = "observed-tighter"
    DECLARED_UNEXERCISED = "declared-unexercised"
    OBSERVED_VIOLATES_DECLARED = "observed-violates-declared"
    OBSERVED_ONLY = "observed-only"


class ContractStatus(StrEnum):
    PROPOSED = "proposed"
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    MUTED = "muted"


class Predicate(BaseModel):
    """``path op value``: the condition of a conditional contract."""

    model_config = ConfigDict(extra="forbid")

    path: str
    op: Literal["==", "!=", "in", "not_in", "<", "<=", ">", ">=", "present", "absent"]
    value: Any = None

    def render(self) -> str:
        if self.op in ("present", "absent"):
            return f"{self.path} is {self.op}"
        return f"{self.path} {self.op} {json.dumps(self.value)}"


class Counterexample(BaseModel):
    """A call (or run) where the property did not hold; values redacted."""

    model_config = ConfigDict(extra="forbid")

    run_id: str | None = None
    task_id: str | None = None
    call_id: str | None = None
    seq: int | None = None
    observed: str = ""


class Evidence(BaseModel):
    """Why the contract is believed: support, cross-fitted held-out checks, a bound."""

    model_config = ConfigDict(extra="forbid")

    calls: int = 0
    tasks: int = Field(0, description="distinct tasks whose calls support it")
    folds: int = Field(0, description="folds cross-fitting ran")
    folds_proposed: int = Field(0, description="folds in which the miner proposed it")
    heldout_calls: int = 0
    heldout_violations: int = 0
    fa_upper: float | None = Field(
        None, description="upper confidence bound on the false-alarm rate (held-out)"
    )
    confidence: float = 0.95
    counterexamples: list[Counterexample] = Field(default_factory=list)


class Recovery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tools: list[str] = Field(default_factory=list)
    hint: str = ""


class Decision(BaseModel):
    """A reviewer's accept / reject / mute, kept by contract id across re-mining."""

    model_config = ConfigDict(extra="forbid")

    status: ContractStatus
    reason: str = ""
    reviewer: str = ""
    at: datetime | None = None
    evidence_digest: str | None = Field(
        None, description="digest of the evidence the decision saw; a change flags it"
    )


class Contract(BaseModel):
    """One property of one tool's calls (or of a run)."""

    model_config = ConfigDict(extra="forbid")

    id: str = ""
    tool: str
    side: Side
    kind: Kind
    paths: list[str]
    params: dict[str, Any] = Field(default_factory=dict)
    when: Predicate | None = None
    description: str = ""
    sources: list[Source] = Field(default_factory=lambda: [Source.MINED])
    label: MergeLabel | None = None
    status: ContractStatus = ContractStatus.PROPOSED
    decision: Decision | None = None
    evidence: Evidence | None = None
    implied_by: str | None = None
    recovery: Recovery | None = None
    declared: dict[str, Any] | None = Field(
        None, description="what the schema declared, when it differs from params"
    )

    def model_post_init(self, context: Any, /) -> None:
        if not self.id:
            self.id = contract_id(self)


_SHAPE_VALUE_KINDS = {Kind.TYPE: "type", Kind.FORMAT: "format"}


def contract_id(contract: Contract) -> str:
    """Stable across re-mining: kind, tool, side, paths, the *shape* of the parameters
    (their keys, not their values — except where the value is the identity, as a type or
    a format) and the condition."""
    params_shape: dict[str, Any] = {key: None for key in sorted(contract.params)}
    identity_key = _SHAPE_VALUE_KINDS.get(contract.kind)
    if identity_key:
        params_shape[identity_key] = contract.params.get(identity_key)
    if contract.kind in (Kind.REQUIRES_PRIOR, Kind.PROVENANCE):
        params_shape = {k: contract.params.get(k) for k in sorted(contract.params)}
    if contract.kind == Kind.EXPECTED_TOOLS:
        params_shape = {"family": contract.params.get("family")}
    when = contract.when.model_dump(mode="json") if contract.when else None
    payload = json.dumps(
        [
            contract.kind.value,
            contract.tool,
            contract.side.value,
            contract.paths,
            params_shape,
            when,
        ],
        sort_keys=True,
        default=str,
    )
    return "c_" + hashlib.sha256(payload.encode()).hexdigest()[:12]


class ContractFile(BaseModel):
    """The versioned contract file (``contracts.json``) every later stage reads."""

    model_config = ConfigDict(extra="forbid")

    schema_version: str = SCHEMA_VERSION
    generator: str = "tracemine"
    generated_at: datetime | None = None
    provenance: dict[str, Any] = Field(
        default_factory=dict, description="where the contracts came from: store, spec, params"
    )
    contracts: list[Contract] = Field(default_factory=list)
