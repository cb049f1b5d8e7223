"""Contracts: properties of one tool's calls, or of whole runs, that held on nominal
traces — and the versioned file that carries them to review, export and the monitor.

A contract is data. The SQL that mines it, the frame that reviews it and the function
that checks it live in their own stages. Parameters by kind (``params``):

    type        {"type": "integer"|"number"|"string"|"boolean"|"array"|"object"|"null"}
                or a list of them, as JSON Schema writes it: {"type": ["string", "null"]}
    range       {"min": x, "max": y}            (either may be absent)
    one_of      {"values": [...]}
    length      {"min": n, "max": m}            (arrays, strings, objects)
    format      {"format": "date-time"|"date"|"uuid"|"email"|"uri"|"currency"|...}
    pattern     {"regex": "^#W[0-9]{7}$"}
    const       {"value": v}
    sum_equals  {"tolerance": t}                paths: [sum(...), total]
    equals/le/lt/member/subset                   paths: [left, right]
    shares_token {}                             paths: [result string, args string]
                the result's string has a word of the argument's (case, punctuation
                and separators aside: ``Gare de Lyon`` and ``Paris-Gare-de-Lyon``)
    ratio       {"ratio": r, "tolerance": t}     paths: [x, y]; x / y within r·(1 ± t)
    product     {"tolerance": t}                paths: [x, a, b]; x == a · b within t (plus
                1e-9 of x): numbers of the call, or ``len(...)`` of a list; three paths
                under one list (``result.items[*].line_total``, ``…[*].unit_price``,
                ``…[*].quantity``) are read element by element
    page_full   {"start": path?, "page": path?}  paths: [len(list), count, limit]; the list
                holds min(limit, count - start) items, ``start`` an offset argument or
                ``(page - 1) · limit`` from a 1-based page argument, else 0
    requires_prior {"tool": A, "same": ["args.order_id", "args.order_id"]?}   (run)
    provenance  {"from_tool": A, "from_path": "result.total_cents"}   paths: [this arg] (run)
    bounded_by  {"from_tool": A, "from_path": "result.total_cents"}   paths: [this arg] (run)
                every number at the argument is at most a value at ``from_path`` of an
                earlier ok ``from_tool`` call (a refund within the order total)
    call_cap    {"max": n}                                                        (run)
    expected_tools {"family": f, "required": [...], "forbidden": [...]}           (run)
    completeness {}       every call answered exactly once with its own id        (run)
    schema      {"schema": {...}}               paths: [args|result]; the JSON Schema
                (2020-12) of what always held on one side of a tool: the per-path
                structural contracts it covers name it in ``folded_into``; with
                ``"tier": "shape"``, the types only, and the keys that name the record
                the call asked for (kept where variants break the whole schema)

``when`` makes any of them conditional: the contract applies only to calls where the
predicate holds (``args.status == "open"``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from pathlib import Path as FilePath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tracemine._atomic import write_atomic
from tracemine.errors import ContractFileError

SCHEMA_VERSION = "2"
"""Version of the contract file format this tracemine writes."""
READABLE_VERSIONS = ("1", "2")
"""Versions it reads: version 2 added the ``schema`` kind and ``folded_into``, so a
version 1 file is a version 2 file without them. Readers refuse other versions."""


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
    SHARES_TOKEN = "shares_token"
    RATIO = "ratio"
    PAGE_FULL = "page_full"
    PRODUCT = "product"
    # run-level
    COMPLETENESS = "completeness"
    REQUIRES_PRIOR = "requires_prior"
    PROVENANCE = "provenance"
    BOUNDED_BY = "bounded_by"
    CALL_CAP = "call_cap"
    EXPECTED_TOOLS = "expected_tools"
    # one side of one tool as a whole
    SCHEMA = "schema"


RUN_KINDS = frozenset(
    {Kind.COMPLETENESS, Kind.REQUIRES_PRIOR, Kind.PROVENANCE, Kind.BOUNDED_BY, Kind.CALL_CAP,
     Kind.EXPECTED_TOOLS}
)  # fmt: skip
RELATIONAL_KINDS = frozenset(
    {Kind.EQUALS, Kind.LE, Kind.LT, Kind.SUM_EQUALS, Kind.MEMBER, Kind.SUBSET,
     Kind.SHARES_TOKEN, Kind.RATIO, Kind.PAGE_FULL, Kind.PRODUCT}
)  # fmt: skip


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
        None,
        description="one-sided Clopper-Pearson upper bound on the false-alarm rate per "
        "held-out task, from this contract's own counts",
    )
    heldout_tasks: float | None = Field(
        None,
        description="held-out checks in tasks: each fold's calls scaled by the path's "
        "tasks per call (calls of one task repeat each other)",
    )
    heldout_task_violations: float | None = Field(
        None, description="held-out violations in tasks, scaled as heldout_tasks"
    )
    family: str | None = Field(
        None, description="the family whose held-out failures were pooled (kind/side[/type])"
    )
    fa_posterior: float | None = Field(
        None,
        description="posterior mean false-alarm rate on a new task: the family's fitted "
        "Beta prior updated with this contract's held-out tasks",
    )
    fa_posterior_upper: float | None = Field(None, description="95% upper point of that posterior")
    fa_share: float | None = Field(
        None,
        description="what it spends of its tool's false-alarm budget: fa_posterior times "
        "the share of the tool's calls it checks",
    )
    detection: float | None = Field(
        None,
        description="estimated mean detection, over its tool's fault classes, of the "
        "library's faults injected into sampled calls, by this contract alone",
    )
    unseen_mass: float | None = Field(
        None,
        description="literal sets: the Good-Turing estimate of the chance that a new task "
        "shows a value outside the set (values seen in one task over all task-values); a "
        "set is proposed only when it is small",
    )
    confidence: float = 0.95
    counterexamples: list[Counterexample] = Field(default_factory=list)
    trial_tasks: int | None = Field(
        None,
        description="held-out tasks with two or more nominal trials that exercised it "
        "(verdicts of the version fitted on the other folds)",
    )
    flipped_tasks: int | None = Field(
        None,
        description="of those, the tasks whose trials disagree on it (violated in one, "
        "held in another): more than 0 marks the contract noisy",
    )
    flip_rate: float | None = Field(
        None, description="pairs of trials of one task whose verdicts differ ÷ all such pairs"
    )


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


_NUMBER = {"type": "number"}
_PAIR: tuple[int, int | None] = (2, 2)
_JSON_TYPE = {"enum": ["integer", "number", "string", "boolean", "array", "object", "null"]}


def _needs(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": [name], "properties": {name: schema}}


_Rule = tuple[tuple[int, int | None], dict[str, Any]]
_BOUNDS: dict[str, Any] = {
    "anyOf": [{"required": ["min"]}, {"required": ["max"]}],
    "properties": {"min": _NUMBER, "max": _NUMBER},
}
_EARLIER: dict[str, Any] = {
    "required": ["from_tool", "from_path"],
    "properties": {"from_tool": {"type": "string"}, "from_path": {"type": "string"}},
}
KIND_RULES: dict[Kind, _Rule] = {
    Kind.TYPE: ((1, None), _needs("type", {"anyOf": [_JSON_TYPE, {
        "type": "array", "items": _JSON_TYPE, "minItems": 1, "uniqueItems": True}]})),
    Kind.RANGE: ((1, None), _BOUNDS),
    Kind.LENGTH: ((1, None), _BOUNDS),
    Kind.ONE_OF: ((1, None), _needs("values", {"type": "array"})),
    Kind.FORMAT: ((1, None), _needs("format", {"type": "string"})),
    Kind.PATTERN: ((1, None), _needs("regex", {"type": "string"})),
    Kind.CONST: ((1, None), {"required": ["value"]}),
    Kind.SUM_EQUALS: (_PAIR, {"properties": {"tolerance": {"type": "number", "minimum": 0}}}),
    Kind.REQUIRES_PRIOR: ((0, None), {"required": ["tool"], "properties": {
        "tool": {"type": "string"},
        "same": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2}}}),
    Kind.PROVENANCE: ((1, 1), _EARLIER),
    Kind.BOUNDED_BY: ((1, 1), _EARLIER),
    Kind.CALL_CAP: ((0, None), _needs("max", {"type": "integer", "minimum": 0})),
    Kind.EXPECTED_TOOLS: ((0, None), {"properties": {
        "family": {"type": ["string", "null"]},
        "required": {"type": "array", "items": {"type": "string"}},
        "forbidden": {"type": "array", "items": {"type": "string"}}}}),
    Kind.COMPLETENESS: ((0, None), {}),
    Kind.SCHEMA: ((1, 1), _needs("schema", {"type": "object"})),
    Kind.SHARES_TOKEN: (_PAIR, {}),
    Kind.RATIO: (_PAIR, {"required": ["ratio", "tolerance"], "properties": {
        "ratio": {"type": "number", "not": {"const": 0}},
        "tolerance": {"type": "number", "minimum": 0}}}),
    Kind.PAGE_FULL: ((3, 3), {"properties": {
        "start": {"type": "string"}, "page": {"type": "string"}},
        "not": {"required": ["start", "page"]}}),
    Kind.PRODUCT: ((3, 3), {"required": ["tolerance"], "properties": {
        "tolerance": {"type": "number", "minimum": 0}}}),
}  # fmt: skip
for _kind in (Kind.PRESENT, Kind.NOT_NULL, Kind.NON_NEGATIVE, Kind.POSITIVE, Kind.NON_EMPTY,
              Kind.UNIQUE):  # fmt: skip
    KIND_RULES[_kind] = ((1, None), {})
for _kind in (Kind.EQUALS, Kind.LE, Kind.LT, Kind.MEMBER, Kind.SUBSET):
    KIND_RULES[_kind] = (_PAIR, {})
"""Per kind: how many paths it takes (min, max) and the JSON Schema of its ``params``.
Published in the contract file's JSON Schema and checked by :func:`load_contracts`."""


def kind_rule_schema(kind: Kind) -> dict[str, Any]:
    """The JSON Schema a contract of ``kind`` satisfies beyond the model's field types."""
    (least, most), params = KIND_RULES[kind]
    paths: dict[str, Any] = {"minItems": least} | ({"maxItems": most} if most else {})
    return {"properties": {"paths": paths, "params": params}}


def _kind_rules(schema: dict[str, Any]) -> None:
    schema["allOf"] = [
        {"if": {"properties": {"kind": {"const": kind.value}}}, "then": kind_rule_schema(kind)}
        for kind in Kind
    ]


def between(subject: str, params: dict[str, Any]) -> str:
    """A range's bounds in words (``0 <= result.total <= 500``), as every description of
    a ``range`` or ``length`` contract writes them, mined or declared."""
    low, high = params.get("min"), params.get("max")
    if low is not None and low == high:
        return f"{subject} == {low}"
    if low is None:
        return f"{subject} <= {high}"
    if high is None:
        return f"{subject} >= {low}"
    return f"{low} <= {subject} <= {high}"


class Contract(BaseModel):
    """One property of one tool's calls (or of a run)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_kind_rules)

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
    folded_into: str | None = Field(
        None,
        description="the schema contract that covers this structural contract: reviewed, "
        "priced and bought with it; the monitor enforces it while the schema is enforced",
    )
    recovery: Recovery | None = None
    declared: dict[str, Any] | None = Field(
        None, description="what the schema declared, when it differs from params"
    )

    def model_post_init(self, context: Any, /) -> None:
        if not self.id:
            self.id = contract_id(self)


_SHAPE_VALUE_KINDS = {Kind.TYPE: "type", Kind.FORMAT: "format"}
_VALUED_KINDS = frozenset({Kind.REQUIRES_PRIOR, Kind.PROVENANCE, Kind.BOUNDED_BY, Kind.PAGE_FULL,
                           Kind.EXPECTED_TOOLS})  # fmt: skip
_ID_JSON = json.JSONEncoder(sort_keys=True, default=str)
"""What ``json.dumps(..., sort_keys=True, default=str)`` builds on every call, built once."""
_IDS: dict[tuple[Any, ...], str] = {}
"""Ids by :func:`_id_key`: a mine proposes each candidate once per context (every task
and each training fold), so most ids are asked for several times."""
_MAX_IDS = 1 << 18


def contract_id(contract: Contract) -> str:
    """Stable across re-mining: kind, tool, side, paths, the *shape* of the parameters
    (their keys, not their values — except where the value is the identity, as a type or
    a format) and the condition."""
    key = _id_key(contract)
    if key is not None:
        found = _IDS.get(key)
        if found is not None:
            return found
    params_shape: dict[str, Any] = {key: None for key in sorted(contract.params)}
    identity_key = _SHAPE_VALUE_KINDS.get(contract.kind)
    if identity_key:
        params_shape[identity_key] = contract.params.get(identity_key)
    if contract.kind in _VALUED_KINDS - {Kind.EXPECTED_TOOLS}:
        params_shape = {k: contract.params.get(k) for k in sorted(contract.params)}
    if contract.kind == Kind.EXPECTED_TOOLS:
        params_shape = {"family": contract.params.get("family")}
    when = contract.when.model_dump(mode="json") if contract.when else None
    payload = _ID_JSON.encode(
        [
            contract.kind.value,
            contract.tool,
            contract.side.value,
            contract.paths,
            params_shape,
            when,
        ]
    )
    cid = "c_" + hashlib.sha256(payload.encode()).hexdigest()[:12]
    if key is not None:
        if len(_IDS) >= _MAX_IDS:
            _IDS.clear()
        _IDS[key] = cid
    return cid


def _id_key(contract: Contract) -> tuple[Any, ...] | None:
    """What :func:`contract_id` reads, as a hashable key whose equal keys dump to equal
    JSON; ``None`` (not memoized) for a condition, for kinds whose parameter values count
    and for an identity value other than a string or a list of strings (``1 == 1.0 ==
    True`` as keys, not as JSON)."""
    if contract.when is not None or contract.kind in _VALUED_KINDS:
        return None
    identity: Any = None
    identity_key = _SHAPE_VALUE_KINDS.get(contract.kind)
    if identity_key:
        value = contract.params.get(identity_key)
        if isinstance(value, str):
            identity = value
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            identity = tuple(value)
        elif value is not None:
            return None
    # kind and side are string enums: as keys they hash and compare as their values
    return (contract.kind, contract.tool, contract.side, tuple(contract.paths),
            tuple(sorted(contract.params)), identity)  # fmt: skip


def declared_id(contract: Contract) -> str:
    """The id of a declaration kept on its own beside a contract of its :func:`contract_id`
    (the mined enum the traces showed, another spec's enum on the same path): it covers
    the parameters' *values*, since those are what differ, and is marked declared, since
    a contradicted declaration can say exactly what the mined contract says. It depends
    on the declaration alone, so it is as stable as the spec."""
    when = contract.when.model_dump(mode="json") if contract.when else None
    payload = json.dumps(
        ["declared", contract.kind.value, contract.tool, contract.side.value, contract.paths,
         contract.params, when],
        sort_keys=True, default=str,
    )  # fmt: skip
    return "c_" + hashlib.sha256(payload.encode()).hexdigest()[:12]


def repeated_id(ids: Sequence[str]) -> tuple[str, int, int] | None:
    """The first id that occurs twice in ``ids``, with both positions; ``None`` if all
    differ. Decisions, receipts and ``implied_by`` name contracts by id, so an id must
    stand for one contract in a file."""
    first: dict[str, int] = {}
    for index, cid in enumerate(ids):
        if cid in first:
            return cid, first[cid], index
        first[cid] = index
    return None


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


def contract_file_schema() -> dict[str, Any]:
    """The JSON Schema (2020-12) of the contract file, as committed in
    ``schemas/contracts.schema.json``."""
    schema = ContractFile.model_json_schema(mode="serialization")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:tracemine:contracts:v{SCHEMA_VERSION}",
        **schema,
    }


def load_contracts(path: str | FilePath) -> ContractFile:
    """Read a contract file. A file that is not JSON, of another ``schema_version``,
    invalid, or giving two contracts one id raises :class:`ContractFileError` naming the
    file and the field, e.g.
    ``candidates.json: contracts[3] (c_1a2b…): params.regex: field required``."""
    path = FilePath(path)
    try:
        data = json.loads(path.read_bytes())
    except OSError as exc:
        raise ContractFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ContractFileError(f"{path}: not JSON: {exc}") from None
    return parse_contracts(data, origin=str(path))


def parse_contracts(data: Any, origin: str = "contract file") -> ContractFile:
    """Validate an already parsed contract document; see :func:`load_contracts`."""
    if not isinstance(data, dict) or "schema_version" not in data:
        raise ContractFileError(f"{origin}: no schema_version field; not a tracemine contract file")
    if str(data["schema_version"]) not in READABLE_VERSIONS:
        raise ContractFileError(
            f"{origin}: schema_version {data['schema_version']!r} is not supported "
            f"(this tracemine reads versions {', '.join(READABLE_VERSIONS)})"
        )
    try:
        parsed = ContractFile.model_validate(data)
    except ValidationError as exc:
        raise ContractFileError(f"{origin}: {_describe(exc.errors(), data)}") from None
    parsed.schema_version = SCHEMA_VERSION  # an older version reads as this one
    problems = [p for i, c in enumerate(parsed.contracts) for p in _kind_problems(i, c)]
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise ContractFileError(f"{origin}: {'; '.join(problems[:3])}{more}")
    repeated = repeated_id([c.id for c in parsed.contracts])
    if repeated:
        cid, first, second = repeated
        raise ContractFileError(
            f"{origin}: contract id {cid} is repeated: contracts[{first}] and contracts[{second}]"
        )
    return parsed


def save_contracts(contracts: ContractFile, path: str | FilePath) -> FilePath:
    """Write ``contracts`` as JSON (parents created); returns the path."""
    path = FilePath(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, contracts.model_dump_json(indent=2, exclude_none=False) + "\n")
    return path


def _where(loc: tuple[Any, ...], data: Any) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    if len(loc) >= 2 and loc[0] == "contracts" and isinstance(loc[1], int):
        item = data.get("contracts", [])[loc[1]] if isinstance(data, dict) else None
        if isinstance(item, dict) and isinstance(item.get("id"), str) and item["id"]:
            head = f"contracts[{loc[1]}]"
            text = f"{head} ({item['id']}){text[len(head) :]}"
    return text or "(top level)"


def _describe(errors: list[Any], data: Any) -> str:
    lines = [f"{_where(tuple(e['loc']), data)}: {e['msg']}" for e in errors[:3]]
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return "; ".join(lines) + more


def _kind_problems(index: int, contract: Contract) -> list[str]:
    # imported here: jsonschema and the path parser are only needed when reading files
    from jsonschema import Draft202012Validator

    from tracemine.model.paths import PathError, parse

    head = f"contracts[{index}] ({contract.id})"
    problems = []
    document = {"paths": contract.paths, "params": contract.params}
    for error in Draft202012Validator(kind_rule_schema(contract.kind)).iter_errors(document):
        field = ".".join(str(p) for p in error.absolute_path) or "params"
        problems.append(f"{head}: {field}: {error.message} (kind {contract.kind.value})")
    texts = [*contract.paths, *([contract.when.path] if contract.when else [])]
    for text in texts:
        try:
            parse(text)
        except PathError as exc:
            problems.append(f"{head}: paths: {exc}")
    return problems
