"""Declared constraints → contracts with source ``declared`` (and ``prose``).

Results: the 2xx JSON response bodies of an operation (any of them may come back, so
only what they all guarantee). Arguments: path and query parameters by name, and the
JSON or form request body's fields beside them (``args.<field>``) — the flat object an
agent's tool call carries. A body that is not an object sits under ``args.body``.

    required              → present            nullable false / type → not_null, type
    minimum/maximum (…)   → non_negative, positive, range
    enum / const          → one_of             minItems/maxItems → non_empty, length
    minLength/maxLength   → length             pattern, format, uniqueItems → …, unique

Walking stops at a ``$ref`` it is already inside (recursive schemas), below
``MAX_DEPTH`` steps, and once ``MAX_NODES`` values per side have been seen or are waiting
to be (huge generated schemas).
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

from tracemine import _gc
from tracemine.model.contract import Contract, ContractStatus, Decision, Kind, Side, Source
from tracemine.model.paths import format_path
from tracemine.monitor import pattern_refusal
from tracemine.openapi import prose
from tracemine.openapi.load import Spec
from tracemine.openapi.nodes import Child, Node, child
from tracemine.openapi.operations import ARG_LOCATIONS, Operation
from tracemine.openapi.refs import Refs, SpecError
from tracemine.openapi.schema import flatten
from tracemine.openapi.wording import declared_description

MAX_DEPTH = 8
MAX_NODES = 1000
FORMATS = frozenset({"date-time", "date", "time", "uuid", "email", "uri", "hostname", "ipv4",
                     "ipv6"})  # fmt: skip
"""String formats a checker can test; others (int64, password, binary …) are not counted."""
_VALUE_KINDS = frozenset(
    {Kind.RANGE, Kind.NON_NEGATIVE, Kind.POSITIVE, Kind.ONE_OF, Kind.NON_EMPTY, Kind.LENGTH}
    | {Kind.PATTERN, Kind.FORMAT, Kind.UNIQUE}
)
_refusals: dict[str, str | None] = {}
_steps: dict[str, str] = {}


@dataclass(slots=True)
class Fact:
    """One declared constraint before it becomes a :class:`Contract`."""

    side: str
    path: str
    kind: Kind
    params: dict[str, Any]
    pointer: str
    source: Source = Source.DECLARED
    text: str = ""


@dataclass(slots=True)
class Coverage:
    """How much of a document declares checkable constraints (for the corpus benchmark).
    ``typed``: type, nullability or required; ``valued``: bounds, enum, lengths, pattern,
    format or uniqueness."""

    response_fields: int = 0
    response_typed: int = 0
    response_valued: int = 0
    params: int = 0
    params_typed: int = 0
    params_valued: int = 0
    truncated: int = 0
    facts: int = 0
    notes: list[str] = field(default_factory=list)


def operation_facts(op: Operation, refs: Refs, coverage: Coverage | None = None) -> list[Fact]:
    """The declared (and prose) constraints of one operation, both sides. Raises
    :class:`SpecError` for a broken ``$ref`` on the way, naming file and pointer."""
    try:
        return _operation_facts(op, refs, coverage)
    except RecursionError:
        raise SpecError(f"{op.spec}: {op.key}: schemas nested too deeply to read") from None


def _operation_facts(op: Operation, refs: Refs, coverage: Coverage | None) -> list[Fact]:
    facts: list[Fact] = []
    if op.responses:
        facts.extend(_result_facts(op, refs, coverage))
    args = _args_root(op, refs, coverage)
    if args is not None:
        _walk(args, "args", refs, facts, coverage, "")
    if coverage is not None:
        coverage.facts += len(facts)
    return facts


def _result_facts(op: Operation, refs: Refs, coverage: Coverage | None) -> list[Fact]:
    """The result side; operations that return the same schema (get, update, list of a
    resource …) share one walk, paths being relative to ``result`` anyway."""
    root = child(tuple(op.responses), union=True)
    key = ("walk", _what_is_walked(op, refs) if root.key else None, op.response_description)
    cached = refs.flat_cache.get(key) if root.key else None
    if cached is None:
        counted = Coverage()
        facts: list[Fact] = []
        _walk(root, "result", refs, facts, counted, op.response_description)
        cached = (facts, counted)
        if root.key:
            refs.flat_cache[key] = cached
    facts, counted = cached
    if coverage is not None:
        coverage.response_fields += counted.response_fields
        coverage.response_typed += counted.response_typed
        coverage.response_valued += counted.response_valued
        coverage.truncated += counted.truncated
    return facts


def _what_is_walked(op: Operation, refs: Refs) -> str:
    """Names the result schemas by what they are rather than where they sit: a bare
    ``{"$ref": X}`` flattens to X's own node (entered, so the walk stops if it meets X
    again), whichever operation it is written in. Most documents return a component schema
    this way, so operations returning the same one share one walk. A reference that cannot
    be followed keeps its position; the walk then fails as before."""
    keys = []
    for loc in op.responses:
        schema = loc.node
        if isinstance(schema, dict) and len(schema) == 1 and "$ref" in schema:
            try:
                target = refs.resolve(schema["$ref"], loc)
            except SpecError:
                target = None
            if target is not None:
                keys.append("$ref " + target.base + target.pointer)
                continue
        keys.append(loc.base + loc.pointer)
    return ",".join(keys)


def declared_contracts(spec: Spec, tools: dict[str, Operation] | None = None) -> list[Contract]:
    """Contracts for the operations of ``spec`` that have a tool: ``tools`` maps tool
    names to operations (see :func:`~tracemine.openapi.map_tools`); by default each
    operation is the tool named by its operationId (or the name an MCP/function doc
    gives it), and operations with neither are skipped."""
    if tools is None:
        tools = {op.key: op for op in spec.operations if op.operation_id or op.tool}
    contracts: list[Contract] = []
    with _gc.paused():
        for tool, op in tools.items():
            if op.spec != spec.source:
                continue
            for fact in operation_facts(op, spec.refs):
                contracts.append(to_contract(fact, tool, op))
    return contracts


def to_contract(fact: Fact, tool: str, op: Operation) -> Contract:
    paths = [fact.path + "[*]"] if fact.kind == Kind.UNIQUE else [fact.path]
    # facts of a shared schema share their params: each contract gets its own copy
    # named both ways: the operation a reader knows it by, the pointer a tool resolves
    declared = {"spec": op.spec, "operation": op.key, "pointer": fact.pointer}
    if op.method and op.path and op.key != f"{op.method.upper()} {op.path}":
        declared["endpoint"] = f"{op.method.upper()} {op.path}"
    if fact.text:
        declared["text"] = fact.text
    text = declared_description(fact.kind, paths[0], fact.params, op.spec, fact.source)
    contract = Contract(
        tool=tool, side=Side(fact.side), kind=fact.kind, paths=paths, params=dict(fact.params),
        description=text, sources=[fact.source],
        declared=declared,
    )  # fmt: skip
    refusal = refused_pattern(fact)
    if refusal:
        # kept, so the file says what was declared, but muted: a monitor refuses to load
        # a file that enforces a pattern it cannot run safely
        reason = f"not enforceable: the monitor refuses this pattern ({refusal})"
        contract.status = ContractStatus.MUTED
        contract.decision = Decision(status=ContractStatus.MUTED, reason=reason,
                                     reviewer="tracemine")  # fmt: skip
    return contract


def refused_pattern(fact: Fact) -> str | None:
    """Why the monitor would refuse the pattern ``fact`` declares, or None (not a pattern,
    or one it runs). The monitor's own check is asked, so the two cannot disagree."""
    return _refusal(fact.params["regex"]) if fact.kind == Kind.PATTERN else None


def _refusal(regex: str) -> str | None:
    if regex in _refusals:
        return _refusals[regex]
    found = _refusals[regex] = pattern_refusal(regex)
    if len(_refusals) > 50_000:  # huge generated documents: keep memory bounded
        _refusals.clear()
    return found


def _args_root(op: Operation, refs: Refs, coverage: Coverage | None) -> Child | Node | None:
    """Parameters and the request body as one object: the tool call's arguments."""
    node = Node(types=frozenset({"object"}), pointer=op.pointer)
    required: set[str] = set()
    for param in op.params:
        if coverage is not None:
            _count_param(param.schema, param.required, refs, coverage)
        if param.location not in ARG_LOCATIONS:
            continue
        node.properties[param.name] = child((param.schema,) if param.schema else ())
        if param.required:
            required.add(param.name)
    if op.body is not None:
        body = flatten(op.body, refs)
        if body.may_be("object") and (body.properties or not node.properties):
            for name, part in body.properties.items():
                node.properties.setdefault(name, part)
            if op.body_required:
                required |= body.required
        else:
            node.properties["body"] = child((op.body,))
            if op.body_required:
                required.add("body")
    node.required = frozenset(required)
    return node if node.properties else None


def _count_param(schema: Any, required: bool, refs: Refs, coverage: Coverage) -> None:
    coverage.params += 1
    node = flatten(schema, refs) if schema is not None else Node()
    _, kinds = _declared(node, required)
    coverage.params_typed += bool(kinds)
    coverage.params_valued += bool(kinds & _VALUE_KINDS)


class _Cut(Exception):
    """The walk reached ``MAX_NODES``: it stops where it is."""


_FIRST = object()  # a subtree met once: recorded if met again


def _walk(root: Child | Node, side: str, refs: Refs, facts: list[Fact],
          coverage: Coverage | None, root_text: str) -> None:  # fmt: skip
    """Depth first, each object's properties in order and then its array items, as far as
    ``MAX_DEPTH`` and until ``MAX_NODES`` values have been seen or are waiting.

    The same subtree (a shared component below the same ancestors, at the same depth) is
    reached from many operations. The second time, its facts are recorded with paths
    relative to it; after that they are copied under the new path instead of walked again,
    unless the ``MAX_NODES`` cap would fall inside it here, in which case it is walked as
    before and cut at the same value. ``peak`` is how close to the cap a subtree takes the
    walk: the most of (values seen + values waiting) at any of its checks, counted from
    where it starts."""
    counting = coverage is not None and side == "result"
    subtrees = refs.flat_cache.get(("subtrees", side))
    if subtrees is None:
        subtrees = refs.flat_cache[("subtrees", side)] = {}
    seen = 0
    waiting = 1  # the root
    fields = typed = valued = 0
    add = facts.append
    steps = _steps

    def visit(spec: Any, path: str, stack: frozenset[str], depth: int, required: bool,
              member: bool) -> int:  # fmt: skip
        """Walks one subtree; returns its peak (-1: it has no check)."""
        nonlocal seen, waiting, fields, typed, valued
        waiting -= 1
        key = None
        recording = False
        if depth and type(spec) is Child and spec.key is not None:
            key = (spec.key, stack, depth, required, member)
            entry = subtrees.get(key)
            if entry is None:
                subtrees[key] = _FIRST
            elif entry is _FIRST:
                recording = True
            else:
                relative, count, peak, n_fields, n_typed, n_valued, made = entry
                if peak < 0 or seen + waiting + peak < MAX_NODES:
                    # met again at the same path (a shared parameter, a body field): the
                    # same facts, as the walks of operations returning one schema share theirs
                    copied = made.get(path)
                    if copied is None:
                        copied = [
                            Fact(side, path + suffix, kind, params, pointer, source, excerpt)
                            for suffix, kind, params, pointer, source, excerpt in relative
                        ]
                        if len(made) < 64:
                            made[path] = copied
                    facts.extend(copied)
                    seen += count
                    fields += n_fields
                    typed += n_typed
                    valued += n_valued
                    return peak
        seen_before, waiting_before = seen, waiting
        start, fields_before, typed_before, valued_before = len(facts), fields, typed, valued
        node = spec if isinstance(spec, Node) else flatten(spec, refs, stack)
        seen += 1
        text = root_text if depth == 0 else ""
        memo = node.memo
        hit = memo.get((required, side, text)) if memo is not None else None
        found, kinds = hit if hit is not None else _node_facts(node, required, side, text)
        for kind, params, pointer, source, excerpt in found:
            add(Fact(side, path, kind, params, pointer, source, excerpt))
        if counting and member:
            fields += 1
            if kinds:
                typed += 1
                valued += not _VALUE_KINDS.isdisjoint(kinds)
        peak = -1
        if not node.recursive and depth < MAX_DEPTH:
            if seen + waiting >= MAX_NODES:
                if coverage is not None:
                    coverage.truncated += 1
                raise _Cut
            peak = 1
            refs_in = node.refs
            inner = stack if not refs_in or refs_in <= stack else stack | refs_in
            types = node.types
            items = node.items if types is None or "array" in types else None
            properties = node.properties if types is None or "object" in types else None
            waiting += (items is not None) + len(properties or ())
            depth += 1
            base = seen_before + waiting_before
            if properties:
                required_names = node.required
                for name, part in properties.items():
                    at = seen + waiting - 1
                    step = steps.get(name) or _step(name)
                    sub = visit(part, path + step, inner, depth, name in required_names, True)
                    if sub >= 0 and at + sub - base > peak:
                        peak = at + sub - base
            if items is not None:
                at = seen + waiting - 1
                sub = visit(items, path + "[*]", inner, depth, False, False)
                if sub >= 0 and at + sub - base > peak:
                    peak = at + sub - base
        if recording:
            cut = len(path)
            subtrees[key] = (
                [(f.path[cut:], f.kind, f.params, f.pointer, f.source, f.text)
                 for f in facts[start:]],
                seen - seen_before, peak, fields - fields_before, typed - typed_before,
                valued - valued_before, {},
            )  # fmt: skip
        return peak

    try:
        with suppress(_Cut):
            visit(root, side, frozenset(), 0, False, False)
    finally:
        # visit refers to itself through its closure: a reference cycle that would keep the
        # facts and the whole document alive until the cyclic collector came round
        visit = None  # type: ignore[assignment]
    if counting:
        coverage.response_fields += fields  # type: ignore[union-attr]
        coverage.response_typed += typed  # type: ignore[union-attr]
        coverage.response_valued += valued  # type: ignore[union-attr]


def _step(name: str) -> str:
    step = _steps.get(name)
    if step is None:
        step = format_path("", (name,))
        if len(_steps) < 100_000:
            _steps[name] = step
    return step


def _node_facts(
    node: Node, required: bool, side: str, root_text: str
) -> tuple[list[tuple[Any, ...]], frozenset[Kind]]:
    """Declared and prose facts of one node and side, kept in the node's memo: a shared
    node (a component schema reached from many operations) computes them once. The walk
    looks in the memo before calling this."""
    own, kinds = _declared(node, required)
    found: list[tuple[Any, ...]] = [(k, p, node.pointer, Source.DECLARED, "") for k, p in own]
    text = node.description or root_text
    if text:
        for kind, params, excerpt in prose.propose(text, node, set(kinds), side):
            found.append((kind, params, node.pointer, Source.PROSE, excerpt))
    assert node.memo is not None  # made by _declared
    node.memo[(required, side, root_text)] = (found, kinds)
    return found, kinds


def _declared(
    node: Node, required: bool
) -> tuple[list[tuple[Kind, dict[str, Any]]], frozenset[Kind]]:
    """:func:`_constraints` and their kinds, once per node (a parameter's schema is counted
    for coverage and then walked)."""
    key = ("declared", required)
    memo = node.memo
    if memo is None:
        memo = node.memo = {}
    hit = memo.get(key)
    if hit is None:
        own = _constraints(node, required)
        hit = memo[key] = (own, frozenset(kind for kind, _ in own))
    return hit


def _constraints(node: Node, required: bool) -> list[tuple[Kind, dict[str, Any]]]:
    """The declared constraints of one node, in the contract vocabulary."""
    out: list[tuple[Kind, dict[str, Any]]] = []
    if required:
        out.append((Kind.PRESENT, {}))
    # a value that may be null keeps no `type` (the vocabulary has no "T or null") and a
    # `one_of` that admits null: both would fail on null, the other value kinds pass on it
    nullable = node.null_ok or (node.types is not None and "null" in node.types)
    if node.types is not None and not nullable:
        concrete = node.types - {"null"}
        if concrete:
            out.append((Kind.NOT_NULL, {}))
        if concrete == {"integer", "number"}:
            concrete = frozenset({"number"})
        if len(concrete) == 1:
            out.append((Kind.TYPE, {"type": next(iter(concrete))}))
    # the cheap tests first: most nodes declare none of these
    if (node.minimum is not None or node.maximum is not None) and node.may_be("number"):
        out.append(_bounds(node))
    if node.enum:
        values = [v for v in node.enum if v is not None]
        if values:
            out.append((Kind.ONE_OF, {"values": [*values, None] if nullable else values}))
    if (node.min_items or node.max_items is not None) and node.may_be("array"):
        out.append(_lengths(node.min_items, node.max_items, non_empty=True))
    elif (node.min_length or node.max_length is not None) and node.may_be("string"):
        out.append(_lengths(node.min_length, node.max_length, non_empty=False))
    if node.pattern and node.may_be("string"):
        # kept even when the monitor would refuse it (ECMA-262 Python cannot read, such as
        # \p{L}): a declaration left out is said, by to_contract and by merge_files
        out.append((Kind.PATTERN, {"regex": node.pattern}))
    if node.format in FORMATS and node.may_be("string"):
        out.append((Kind.FORMAT, {"format": node.format}))
    if node.unique and node.may_be("array"):
        out.append((Kind.UNIQUE, {}))
    return out


def _bounds(node: Node) -> tuple[Kind, dict[str, Any]]:
    low, high = node.minimum, node.maximum
    if high is None and low == 0:
        return (Kind.POSITIVE, {}) if node.min_exclusive else (Kind.NON_NEGATIVE, {})
    params: dict[str, Any] = {}
    if low is not None:
        params["min"] = low
        if node.min_exclusive:
            params["min_exclusive"] = True
    if high is not None:
        params["max"] = high
        if node.max_exclusive:
            params["max_exclusive"] = True
    return Kind.RANGE, params


def _lengths(low: int | None, high: int | None, *, non_empty: bool) -> tuple[Kind, dict[str, Any]]:
    if non_empty and low == 1 and high is None:
        return Kind.NON_EMPTY, {}
    params = {k: v for k, v in (("min", low or None), ("max", high)) if v is not None}
    return Kind.LENGTH, params
