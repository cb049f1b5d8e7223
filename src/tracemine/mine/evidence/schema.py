"""One structural schema per tool and side: what always held, as one contract.

A tool of five tasks cannot pay for forty per-path ``type``/``present``/``not_null``
contracts priced one by one, yet together they say one thing: the call has the shape it
always had. The schema is that claim. Its members are the structural candidates proposed
on every task (``type``, ``present``, ``not_null`` and ``non_empty`` where emptiness is
structural, and a map's entries being the names its call asked for: :func:`entries`);
its held-out record in a fold is "any structural deviation" of the members that fold's
training tasks proposed, counted in tasks like every candidate's; and its price comes
from the pool of every tool's schema record of that side
(:mod:`tracemine.mine.evidence.pooling`), so a tool below ``--min-tasks`` gets one too.

Some candidates of those kinds are value claims in a structural kind's clothes: an empty
second address line, a search that finds nothing, a key absent from tasks where its
parent was there but null or of another type, an argument the agent may leave out.
:func:`value_claim` names them; they stay out of the schema and are priced as values.
(A key of every hit of a search that sometimes finds nothing is structure: the tasks
without a hit have nothing to miss it.)

A schema that a tool's held-out tasks break is most often broken by a key: tickets of
several variants, each with its own optional fields, and a few mined tasks that all drew
one, or by a list that was never empty before. The tool then gets a second, weaker
candidate, its *shape* (``tier: shape``): the same types, nulls and map entries, nothing
said of emptiness, and only the keys that name the record the call asked for required
(:func:`identity_keys`: ``result.id`` equal to ``args.ticket_id`` on every mined call).
It has a held-out record of its own and a pool of its own (``schema/<side>/shape``), and
selection offers it only where the full schema is left out
(:mod:`tracemine.mine.select.budget`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from tracemine.mine.evidence.pooling import SHAPE, effective, entries
from tracemine.mine.profile.maps import key_like, keyed_by_records
from tracemine.mine.propose.context import MineContext
from tracemine.mine.propose.measure import Measure, measure, parent_path
from tracemine.mine.propose.templates import relational, unary
from tracemine.model.contract import Contract, Evidence, Kind, Side
from tracemine.model.paths import ANY_KEY, WILDCARD, PathError, parse

DIALECT = "https://json-schema.org/draft/2020-12/schema"
MEMBER_KINDS = frozenset({Kind.TYPE, Kind.PRESENT, Kind.NOT_NULL, Kind.NON_EMPTY})
_EXAMPLES = 3
_TOKEN = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def value_claim(
    contract: Contract, ctx: MineContext, children: dict[tuple[str, str, str], list]
) -> str | None:
    """The value type (``string``, ``array``, ``object``, …) when ``contract`` is a value
    claim of a structural kind in ``ctx``, else None: ``non_empty`` on a string, on an
    array or object whose length varies across calls (a list of matches may be empty),
    on search hits however many the mined tasks found (:func:`_hits`), or on an object
    keyed by records (a map: whether it has entries is data, a file
    shared with nobody); ``present`` on a key absent from some task in which its parent
    occurs (the parent is then sometimes null or of another type, so whether the key is
    there depends on the values); and ``present`` or ``non_empty`` on the arguments,
    whose keys the agent picks. ``children``: :func:`child_keys` of ``ctx``, computed
    once for the many contracts of a context."""
    if contract.when is not None or contract.kind not in (Kind.NON_EMPTY, Kind.PRESENT):
        return None
    tool, side = contract.tool, contract.side.value
    profile = ctx.paths.get((tool, side, contract.paths[0]))
    if profile is None:
        return None
    json_type = profile.json_type
    if contract.side == Side.ARGS:
        # which arguments a call passes is the agent's choice, made anew for each task:
        # an argument with a default that every mined task passed is left out by the
        # next (``n: 100``, ``date``), and the call's arguments are then one key short,
        # or ``{}``. What a tool requires is declared (``tracemine merge`` brings it);
        # the traces alone cannot tell it from a habit of the mined tasks.
        return json_type or "mixed"
    if contract.kind == Kind.NON_EMPTY:
        if json_type == "string":
            return "string"
        varies = profile["lmin"] is not None and profile["lmin"] != profile["lmax"]
        if json_type in ("array", "object") and varies:
            return json_type
        if json_type in ("array", "object") and _hits(contract, json_type, children):
            # a list of what a search found: one match in every mined task, none in the next
            return json_type
        if json_type == "object":
            # one record in every mined task (the same file, shared with one address) is
            # no map to the survey, yet its keys are data and so is its having any
            keys = children.get((tool, side, contract.paths[0]), [])
            if keys and all(key is ANY_KEY or _names_record(key) for key in keys):
                return "object"
        return None
    # against the parent, not the root: a key of every element of a list that some
    # searches return empty is missing from those tasks only because there is no
    # element, and the claim is about the element's shape, not about whether one exists
    parent = ctx.paths.get((tool, side, parent_path(contract.paths[0]) or side))
    if parent is not None and profile.tasks < parent.tasks:
        return json_type or "mixed"
    return None


_SEARCH_ARGUMENTS = frozenset({"query", "q", "pattern", "search", "keyword", "keywords",
                               "term", "terms", "regex", "filter", "grep"})  # fmt: skip
"""Tokens of an argument name saying the call filters by what it was asked for."""
_HIT_KEYS = frozenset({"match", "matches", "matching", "hits", "found"})
"""Tokens of a key name saying it holds what a search found."""


def _hits(contract: Contract, json_type: str, children: dict[tuple[str, str, str], list]) -> bool:
    """Whether the list or object ``contract`` says is non-empty holds search hits: a key
    named like them (``matching_lines``, ``hits``; not a hit of them, ``hits[*]``), or a
    list outside any list in the result of a call that filters by an argument named like
    a search (``pattern``, ``query``). Whether a search finds anything is the data's,
    however often the mined tasks found something."""
    try:
        steps = parse(contract.paths[0]).steps
    except PathError:
        return False
    if not steps:
        return False  # the root: the envelope of a search result is there when it finds nothing
    if isinstance(steps[-1], str) and _tokens(steps[-1]) & _HIT_KEYS:
        return True
    if json_type != "array" or contract.side != Side.RESULT or WILDCARD in steps:
        # a hit's own lists (its tags, its lines) are the hit's shape, not what was found
        return False
    arguments = children.get((contract.tool, Side.ARGS.value, Side.ARGS.value), [])
    return any(isinstance(key, str) and bool(_tokens(key) & _SEARCH_ARGUMENTS)
               for key in arguments)  # fmt: skip


def child_keys(ctx: MineContext) -> dict[tuple[str, str, str], list]:
    """Per (tool, side, object path) of ``ctx``, the last steps of the paths under it:
    its keys (``ANY_KEY`` for a map's ``{*}``; list indexes are left out)."""
    out: dict[tuple[str, str, str], list] = {}
    for tool, side, text in ctx.paths:
        try:
            path = parse(text)
        except PathError:
            continue
        parent = path.parent
        if parent is None or not path.steps or path.steps[-1] is WILDCARD:
            continue
        out.setdefault((tool, side, parent.text), []).append(path.steps[-1])
    return out


def is_member(contract: Contract, claim: str | None) -> bool:
    """Whether a candidate of this kind and claim belongs in its side's schema."""
    return ((contract.kind in MEMBER_KINDS or entries(contract)) and contract.when is None
            and claim is None and contract.side != Side.RUN)  # fmt: skip


def echo(contract: Contract) -> str | None:
    """The result path of ``contract`` when it says a result key holds the value of an
    argument named like it (``result.id == args.ticket_id``, ``result.city ==
    args.city``): the key names the record the call asked for. None otherwise."""
    if contract.kind != Kind.EQUALS or contract.when is not None or len(contract.paths) != 2:
        return None
    texts = sorted(contract.paths, key=lambda t: not t.startswith("result"))
    if not (texts[0].startswith("result") and texts[1].startswith("args")):
        return None
    try:
        left, right = parse(texts[0]), parse(texts[1])
    except PathError:
        return None
    if WILDCARD in left.steps or ANY_KEY in left.steps or not left.steps:
        return None
    last, asked = left.steps[-1], right.steps[-1] if right.steps else None
    if not isinstance(last, str) or not isinstance(asked, str):
        return None
    mine, theirs = _tokens(last), _tokens(asked)
    return texts[0] if mine and theirs and (mine <= theirs or theirs <= mine) else None


def _tokens(key: str) -> set[str]:
    return {t.lower() for t in _TOKEN.findall(key)}


def identity_keys(candidates: dict[str, Any]) -> set[tuple[str, str]]:
    """(tool, result path) of every key an every-task ``equals`` candidate shows to echo
    an argument named like it (:func:`echo`)."""
    out = set()
    for entry in candidates.values():
        contract = entry.final
        path = echo(contract) if contract is not None else None
        if path is not None:
            out.add((contract.tool, path))
    return out


def in_shape(contract: Contract, identity: set[tuple[str, str]]) -> bool:
    """Whether a schema member belongs to the tool's shape: every member but
    ``non_empty`` (a search that matched one line in every mined task matches none in
    the next) and the ``present`` of a key that does not name the record asked for."""
    if contract.kind == Kind.NON_EMPTY:
        return False
    return contract.kind != Kind.PRESENT or (contract.tool, contract.paths[0]) in identity


@dataclass
class Group:
    """The structural candidates of one tool and side: those of every task, per fold."""

    final: list[str] = field(default_factory=list)
    folds: dict[int, list[str]] = field(default_factory=dict)


def schemas(candidates: dict[str, Any], contexts: dict[str, MineContext]) -> dict[str, Any]:
    """Classify every candidate (``claim``) and add one schema candidate per tool and
    side that has structural candidates held on every task. Returns the new candidates
    by id (each with ``members``, the ids it covers; a full schema with ``fallback``, the
    id of its shape, where that differs); ``candidates`` gains them too."""
    _few_task_members(candidates, contexts)
    groups: dict[tuple[str, str], Group] = {}
    children: dict[str, dict[tuple[str, str, str], list]] = {}
    for cid in sorted(candidates):
        entry = candidates[cid]
        contract = entry.contract
        if contract.side == Side.RUN:
            continue
        name = "all" if entry.final is not None else f"train:{min(entry.proposals)}"
        ctx = contexts.get(name)
        if ctx is not None and name not in children:
            children[name] = child_keys(ctx)
        entry.claim = value_claim(contract, ctx, children[name]) if ctx is not None else None
        if ctx is not None and _record_key(contract, children[name]):
            # a fold of few tasks may not see a map as one (a result keyed by restaurant
            # names, three of them) and proposes its keys as fields; every held-out task
            # then "misses" them, a break of the fold's schema that is not the schema's,
            # and no field's either: which records a call returns is data, so the key is
            # priced as a value, out of the pool of the keys that are fields
            profile = ctx.paths.get((contract.tool, contract.side.value, contract.paths[0]))
            entry.claim = entry.claim or (profile.json_type if profile else None) or "mixed"
            continue
        if not is_member(contract, entry.claim):
            continue
        group = groups.setdefault((contract.tool, contract.side.value), Group())
        if entry.final is not None:
            group.final.append(cid)
        for fold in entry.proposals:
            group.folds.setdefault(fold, []).append(cid)
    identity = identity_keys(candidates)
    added: dict[str, Any] = {}
    for (tool, side), group in sorted(groups.items()):
        if not group.final:
            continue
        full = _schema_entry(tool, side, group, candidates, {})
        added[full.final.id] = full
        shape = Group(
            final=[c for c in group.final if in_shape(candidates[c].contract, identity)],
            folds={fold: [c for c in cids if in_shape(candidates[c].contract, identity)]
                   for fold, cids in group.folds.items()},
        )  # fmt: skip
        if shape.final and len(shape.final) < len(group.final):
            weak = _schema_entry(tool, side, shape, candidates, {"tier": SHAPE})
            full.fallback = weak.final.id
            added[weak.final.id] = weak
    candidates.update(added)
    return added


def _schema_entry(
    tool: str, side: str, group: Group, candidates: dict[str, Any], extra: dict[str, Any]
) -> Any:
    """The schema candidate of ``group``'s members, with its held-out record per fold."""
    from tracemine.mine.evidence.crossfit import Candidate  # crossfit calls this module

    finals = [candidates[cid].final for cid in group.final]
    support = [c.evidence for c in finals if c.evidence is not None]
    contract = Contract(
        tool=tool, side=Side(side), kind=Kind.SCHEMA, paths=[side],
        params={"schema": build_schema(finals), **extra},
        evidence=Evidence(calls=max((e.calls for e in support), default=0),
                          tasks=max((e.tasks for e in support), default=0)),
    )  # fmt: skip
    entry = Candidate(final=contract, members=tuple(group.final))
    for fold, cids in sorted(group.folds.items()):
        tested = [candidates[cid] for cid in cids if fold in candidates[cid].heldout]
        if not tested:
            continue
        entry.proposals[fold] = contract
        _fold_record(entry, fold, tested)
    return entry


def _few_task_members(candidates: dict[str, Any], contexts: dict[str, MineContext]) -> None:
    """Structural candidates of the tools a context has too few tasks of for templates
    (``min_support``), proposed on the one task there is (and whether a map's entries
    are the names its call asked for), as members for their schema only (a schema is
    priced from the pool; its members alone need ``--min-tasks``), and counted on the
    held-out fold of a training context like any candidate. One task
    cannot tell structure from values where values decide: whether a list or object is
    empty (a file shared with nobody), or whether a key named like a record (an email
    address, an id, a name of several words) is a field; those are not proposed. An
    argument echoed under a key named like it (:func:`echo`) is proposed too: it says
    which key the tool's shape requires."""
    from tracemine.mine.evidence.crossfit import Candidate, _per_task

    busiest: dict[tuple[str, str], tuple[int, int]] = {}
    for name in sorted(contexts):
        if name != "all" and not name.startswith("train:"):
            continue
        ctx = contexts[name]
        tasks: dict[str, int] = {}
        for profile in ctx.profiles():
            tasks[profile.tool] = max(tasks.get(profile.tool, 0), profile.tasks)
        few = {tool for tool, n in tasks.items() if 0 < n < ctx.min_support}
        if not few:
            continue
        one = dataclasses.replace(ctx, min_support=1, paths={
            key: p for key, p in ctx.paths.items() if key[0] in few})  # fmt: skip
        fold = None if name == "all" else int(name.partition(":")[2])
        test = contexts.get(f"test:{fold}") if fold is not None else None
        for template in (unary.presence, unary.types, relational.relations):
            for contract in template(one):
                if contract.tool not in few or not (contract.kind in MEMBER_KINDS
                                                    or entries(contract)
                                                    or echo(contract)):  # fmt: skip
                    continue
                if _record_key(contract) or (fold is not None and echo(contract)):
                    # an echo only says which key the shape requires (read from the
                    # every-task proposals); a record of its own would move the
                    # ``equals`` pool with candidates no tool can keep
                    continue
                entry = candidates.setdefault(contract.id, Candidate())
                if fold is None:
                    entry.final = entry.final or contract
                    continue
                if fold in entry.proposals or test is None:
                    continue
                entry.proposals[fold] = contract
                found = measure(contract, test)
                if found is None or not found.checked:
                    continue
                entry.heldout[fold] = found
                n, calls = _per_task(contract, test, busiest)
                entry.units[fold] = effective(found.checked, found.violations, n, calls)
                entry.tool_calls[fold] = test.tool_calls.get(contract.tool, 0)


def _record_key(
    contract: Contract, children: dict[tuple[str, str, str], list] | None = None
) -> bool:
    """Whether a ``present`` names a key that looks like a record's, not a field's, or
    (given the ``children`` of its context) a key of an object most of whose keys do
    ("Miznon" beside "Bistrot Paul Bert")."""
    if contract.kind != Kind.PRESENT:
        return False
    if _names_record(parse(contract.paths[0]).steps[-1]):
        return True
    if children is None:
        return False
    above = parent_path(contract.paths[0]) or contract.side.value
    keys = children.get((contract.tool, contract.side.value, above), [])
    # as the survey weighs a map's keys (a map's own ``{*}`` is no key to count)
    return keyed_by_records([key for key in keys if isinstance(key, str)])


def _names_record(step: object) -> bool:
    """Whether a path step is a key named like a record's (an id, an email, a name of
    several words), not a field's."""
    return isinstance(step, str) and key_like(step)


def _fold_record(entry: Any, fold: int, tested: list[Any]) -> None:
    """The schema's held-out record in ``fold`` from its members': deviations within one
    object are one deviation (a null breaks ``type`` and ``not_null`` alike; an object of
    another variant misses several keys at once), deviations of different objects are
    added, up to every task checked — an upper estimate of the tasks with any deviation
    (the members are counted from summed profiles, which do not say which tasks broke
    together), so the schema is not priced below its record."""
    per_path: dict[str, tuple[float, int]] = {}
    checked, tasks = 0, 0.0
    examples = []
    for member in tested:
        found: Measure = member.heldout[fold]
        n, k = member.units[fold]
        checked, tasks = max(checked, found.checked), max(tasks, n)
        path = _object_of(member.contract)
        worst_k, worst_v = per_path.get(path, (0.0, 0))
        per_path[path] = (max(worst_k, k), max(worst_v, found.violations))
        examples.extend(found.examples)
        entry.tool_calls[fold] = member.tool_calls.get(fold, 0)
    violations = min(sum(v for _, v in per_path.values()), checked)
    broken = min(sum(k for k, _ in per_path.values()), tasks)
    entry.heldout[fold] = Measure(checked, violations, examples[:_EXAMPLES])
    entry.units[fold] = (tasks, broken)


def _object_of(contract: Contract) -> str:
    """The object whose shape a member speaks of: the parent of its path (the root for
    the root itself)."""
    return _parent_text(contract.paths[0])


@lru_cache(maxsize=1 << 16)
def _parent_text(text: str) -> str:
    # a wide tool has thousands of member paths, each read once per fold and per schema
    path = parse(text)
    return path.parent.text if path.parent is not None else path.text


def build_schema(members: Iterable[Contract]) -> dict[str, Any]:
    """The JSON Schema (2020-12) that the given structural contracts of one side say
    together, rooted at the side: ``type`` (never null), ``not_null``, required keys
    (``present``), ``minItems``/``minProperties`` (``non_empty``), under ``items`` for
    ``[*]`` and ``additionalProperties`` for map entries ``{*}``."""
    members = [c for c in members if c.kind in MEMBER_KINDS]
    types = {c.paths[0]: c.params.get("type") for c in members if c.kind == Kind.TYPE}
    root: dict[str, Any] = {}
    for c in sorted(members, key=lambda c: (c.paths[0], c.kind.value)):
        path = parse(c.paths[0])
        if c.kind == Kind.PRESENT:
            node = _node(root, path.steps[:-1])
            node["required"] = sorted({*node.get("required", []), path.steps[-1]})
            continue
        node = _node(root, path.steps)
        if c.kind == Kind.TYPE:
            node["type"] = c.params["type"]
        elif c.kind == Kind.NOT_NULL and c.paths[0] not in types:
            node["not"] = {"type": "null"}
        elif c.kind == Kind.NON_EMPTY:
            json_type = types.get(c.paths[0])
            if json_type in (None, "array"):
                node["minItems"] = 1
            if json_type in (None, "object"):
                node["minProperties"] = 1
            if json_type is None:
                node["minLength"] = 1
    return {"$schema": DIALECT, **root}


def _node(root: dict[str, Any], steps: tuple[Any, ...]) -> dict[str, Any]:
    node = root
    for step in steps:
        if step is WILDCARD:
            node = node.setdefault("items", {})
        elif step is ANY_KEY:
            node = node.setdefault("additionalProperties", {})
        else:
            node = node.setdefault("properties", {}).setdefault(step, {})
    return node


def summary(schema: dict[str, Any]) -> tuple[int, int, int]:
    """(typed values, required keys, non-empty values) a schema states."""
    typed, required, non_empty = 0, 0, 0
    stack = [schema]
    while stack:
        node = stack.pop()
        typed += "type" in node or "not" in node
        required += len(node.get("required", []))
        non_empty += any(k in node for k in ("minItems", "minProperties"))
        stack.extend(node.get("properties", {}).values())
        stack.extend(node[k] for k in ("items", "additionalProperties") if k in node)
    return typed, required, non_empty


def add_catches(added: dict[str, Any], faults: dict[str, Any]) -> None:
    """A schema catches every sampled fault one of its members catches."""
    for cid, entry in added.items():
        found = faults.get(entry.contract.tool)
        if found is None:
            continue
        caught: set[int] = set()
        for member in entry.members:
            caught |= found.catches.get(member, set())
        if caught:
            found.catches[cid] = caught
