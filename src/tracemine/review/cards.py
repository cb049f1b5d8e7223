"""Review cards: what a person reads and decides about one tool, as a handful of items.

A default mine keeps tens of contracts per tool, one per path and kind; nobody reads them
line by line. A card folds them into items, each one decision:

    structure   per side, the tool's structural schema: the ``schema`` contract and every
                contract ``folded_into`` it, or, in files without one, the side's
                ``type``/``present``/``not_null`` contracts and ``non_empty`` on objects,
                drawn as a tree with one line per field
    values      per object: the side's own fields, and each top-level field with fields
                of its own (``result.items``); the value claims and relations on them (a
                bound, a literal set, a format, ``non_empty`` on a string or a list, a
                relation to another field), one line each with its evidence
    runs        the tool's run-level contracts, one item per kind
    declared    contracts only a spec declares, never contradicted: one item per side
    contradicted  each declaration the traces contradict, alone: it is never decided in
                bulk with anything else

A contract ``implied_by`` another sits in its stronger contract's item, unless it is part
of the structure (a ``type`` implied by a literal set is still the field's type). Item ids derive
from the tool, side, kind of item and field, never from the members, so an item keeps its
id when re-mining changes what it holds; its status then says ``changed``.

>>> cards = build_cards(load_contracts("mined_contracts/candidates.json"))  # doctest: +SKIP
>>> cards[0].items[0].item, cards[0].items[0].status  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tracemine.errors import InputError
from tracemine.model.contract import RUN_KINDS, Contract, ContractFile, MergeLabel, Side, Source
from tracemine.model.paths import WILDCARD, PathError, format_path, parse
from tracemine.monitor._predicates import type_text
from tracemine.review.apply import is_stale

STRUCTURAL = frozenset({"type", "present", "not_null", "non_empty"})
SCHEMA_KIND = "schema"  # one contract per tool and side covering the structural ones
ITEM_ORDER = ("structure", "values", "runs", "declared", "contradicted")
BRIEF_LEGEND = "[tasks · held-out violations · share of calls alarmed · faults caught]"
_FACTS = {"present": "always present", "not_null": "never null", "non_empty": "non-empty"}


@dataclass
class Line:
    """One line of an item: a claim and the evidence for it, indented ``depth`` levels."""

    claim: str
    evidence: str = ""
    depth: int = 0
    brief: str = ""  # the evidence in figures only, read with :data:`BRIEF_LEGEND`


@dataclass
class Item:
    """One decision: accepting or rejecting it decides every contract in ``contracts``."""

    item: str
    tool: str
    side: str
    kind: str
    field: str
    title: str
    lines: list[Line]
    contracts: list[str]
    status: str

    @property
    def text(self) -> str:
        """The title and one line per claim, as plain text."""
        body = ["  " * line.depth + line.claim + (f"  ({line.evidence})" if line.evidence else "")
                for line in self.lines]  # fmt: skip
        return "\n".join([self.title, *body])

    def to_dict(self) -> dict[str, Any]:
        return {"item": self.item, "text": self.text, "contracts": list(self.contracts),
                "status": self.status}  # fmt: skip


@dataclass
class Card:
    """What a reviewer reads about one tool: its items in order, then what was not kept."""

    tool: str
    items: list[Item] = field(default_factory=list)
    not_kept: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "items": [i.to_dict() for i in self.items]}


def build_cards(contracts: ContractFile, *, tool: str | Sequence[str] | None = None) -> list[Card]:
    """One card per tool (run-level contracts of every tool under ``*``), every contract of
    the file in exactly one item. ``tool`` keeps only those tools' cards."""
    wanted = {tool} if isinstance(tool, str) else set(tool or ())
    by_id = {c.id: c for c in contracts.contracts}
    types = {(c.tool, c.side.value, c.paths[0]): c.params.get("type")
             for c in contracts.contracts if c.kind.value == "type" and not c.when}  # fmt: skip
    schemas = {(c.tool, c.side.value) for c in contracts.contracts if c.kind.value == SCHEMA_KIND}
    groups: dict[_Key, list[Contract]] = {}
    for c in contracts.contracts:
        # a structural contract stays in the structure even when a value claim implies it
        # (a type under a literal set): deciding the schema decides it, as folding says
        own = _group(c, types, schemas)
        key = own if own[2] == "structure" else _group(_strongest(c, by_id), types, schemas)
        groups.setdefault(key, []).append(c)
    tools = sorted({key[0] for key in groups} | set(_counts(contracts)))
    cards = []
    for name in tools:
        if wanted and name not in wanted:
            continue
        keys = sorted((k for k in groups if k[0] == name),
                      key=lambda k: (ITEM_ORDER.index(k[2]), k[1] != "args", k[3]))  # fmt: skip
        items = [_item(key, groups[key]) for key in keys]
        cards.append(Card(name, items, _not_kept(contracts, name)))
    unknown = sorted(wanted - {c.tool for c in cards})
    if unknown:
        raise InputError(f"--tool {', '.join(unknown)}: no such tool in the contract file")
    return cards


def cards_json(cards: Iterable[Card]) -> dict[str, Any]:
    """``{"tools": [{"tool", "items": [{"item", "text", "contracts", "status"}]}]}``."""
    return {"tools": [card.to_dict() for card in cards]}


def find_items(cards: Iterable[Card], ids: Iterable[str]) -> list[Item]:
    """Items by id or unambiguous id prefix (``i_3fa2``), in the order asked."""
    items = [item for card in cards for item in card.items]
    out = []
    for wanted in ids:
        matches = [i for i in items if i.item == wanted] or [
            i for i in items if i.item.startswith(wanted)
        ]
        if len(matches) != 1:
            problem = "matches no item" if not matches else f"matches {len(matches)} items"
            raise InputError(f"item id {wanted!r} {problem}")
        out.append(matches[0])
    return out


def item_id(tool: str, side: str, kind: str, name: str) -> str:
    """Stable across re-mining: what the item is about, not what it holds."""
    payload = json.dumps([tool, side, kind, name])
    return "i_" + hashlib.sha256(payload.encode()).hexdigest()[:12]


def item_status(contracts: Sequence[Contract]) -> str:
    """``undecided`` (nothing decided), ``accepted``/``rejected``/``muted`` (all alike),
    ``mixed`` (all decided, not alike), ``changed`` (some decided, and some undecided —
    new since the decision — or decided on evidence that changed since)."""
    statuses = {c.status.value for c in contracts}
    if statuses == {"proposed"}:
        return "undecided"
    if "proposed" in statuses or any(is_stale(c) for c in contracts):
        return "changed"
    return statuses.pop() if len(statuses) == 1 else "mixed"


def _strongest(contract: Contract, by_id: dict[str, Contract]) -> Contract:
    seen = {contract.id}
    while contract.implied_by and contract.implied_by in by_id:
        contract = by_id[contract.implied_by]
        if contract.id in seen:  # a cycle: the file is odd, the card still holds it once
            break
        seen.add(contract.id)
    return contract


_Key = tuple[str, str, str, str]  # tool, side, kind of item, field


def _group(c: Contract, types: dict[Any, Any], schemas: set[tuple[str, str]]) -> _Key:
    side = c.side.value
    if c.label == MergeLabel.OBSERVED_VIOLATES_DECLARED:
        return c.tool, side, "contradicted", c.id
    if Source.MINED not in c.sources and Source.MANUAL not in c.sources:
        return c.tool, side, "declared", ""
    if c.side == Side.RUN or c.kind in RUN_KINDS:
        return c.tool, "run", "runs", c.kind.value  # a gate, a cap, an order: apart
    folded = getattr(c, "folded_into", None)  # set by files with schema contracts
    if c.kind.value == SCHEMA_KIND or folded:
        return c.tool, side, "structure", ""
    if (c.tool, side) not in schemas and _structural(c, types):
        return c.tool, side, "structure", ""
    return c.tool, side, "values", _subtree(c.paths[0])


def _structural(c: Contract, types: dict[Any, Any]) -> bool:
    """In a file without a schema contract: what the schema would have covered. A
    ``non_empty`` on a string or a list is a value claim (a search may find nothing)."""
    if c.kind.value not in STRUCTURAL or c.when is not None:
        return False
    if c.kind.value != "non_empty" or c.paths[0] == c.side.value:  # an envelope's emptiness
        return True
    return types.get((c.tool, c.side.value, c.paths[0])) == "object"


def _subtree(text: str) -> str:
    """The object a value claim is about: the side itself for its own fields
    (``result.status``), else the top-level field it sits under (``result.items``)."""
    try:
        path = parse(text)
    except PathError:
        return text
    return format_path(path.root, path.steps[:1]) if len(path.steps) > 1 else path.root


def _item(key: _Key, members: list[Contract]) -> Item:
    tool, side, kind, name = key
    # a contract implied by another follows it
    order = {c.id: (c.paths, c.kind.value, c.id) for c in members}
    members = sorted(members, key=lambda c: (*order.get(c.implied_by or "", order[c.id]),
                                             c.implied_by is not None, order[c.id]))  # fmt: skip
    lines = _tree(members) if kind == "structure" else [_line(c) for c in members]
    return Item(item=item_id(tool, side, kind, name), tool=tool, side=side, kind=kind, field=name,
                title=_title(kind, side, name, members), lines=lines,
                contracts=[c.id for c in members], status=item_status(members))  # fmt: skip


def _title(kind: str, side: str, name: str, members: Sequence[Contract]) -> str:
    n, held = len(members), _held(members)
    if kind == "structure":
        fields = len({c.paths[0] for c in members if c.kind.value != SCHEMA_KIND})
        return f"{side} structure: {fields} fields, {n} contracts{held}"
    if kind == "values":
        where = f"{name} fields" if name == side else name
        return f"{where}: {n} value claims and relations{held}"
    if kind == "runs":
        return f"run-level {name.replace('_', ' ')}: {n} contracts{held}"
    if kind == "declared":
        return f"{side} declared by a spec only, not contradicted: {n} contracts"
    return f"contradicted by the traces: {members[0].description or members[0].kind.value}"


def _held(members: Sequence[Contract]) -> str:
    evidence = [c.evidence for c in members if c.evidence is not None]
    if not evidence:
        return ""
    violations = sum(e.heldout_violations for e in evidence)
    return f"; {violations} held-out violations, {max(e.tasks for e in evidence)} tasks"


def _line(c: Contract) -> Line:
    claim = c.description or f"{c.kind.value}({', '.join(c.paths)})"
    return Line(("⤷ " if c.implied_by else "") + claim, _evidence(c), brief=_brief(c))


def _brief(c: Contract) -> str:
    e = c.evidence
    if c.implied_by or e is None:
        return _evidence(c)
    figures = [str(e.tasks), str(e.heldout_violations),
               "–" if e.fa_share is None else f"{e.fa_share:.2%}",
               "–" if e.detection is None else f"{e.detection:.0%}"]  # fmt: skip
    extra = [f"unseen {e.unseen_mass:.0%}"] if e.unseen_mass is not None else []
    extra += [f"noisy in {e.flipped_tasks} tasks"] if e.flipped_tasks else []
    return "[" + " · ".join(figures) + "]" + "".join(f", {x}" for x in extra)


def _evidence(c: Contract) -> str:
    e = c.evidence
    if c.implied_by:
        return "implied by the line it follows"
    if e is None:
        return "no evidence: " + ("declared" if Source.MINED not in c.sources else "not measured")
    parts = [f"{e.tasks} tasks", f"{e.heldout_violations} held-out viol."]
    if e.fa_share is not None:
        parts.append(f"alarms {e.fa_share:.2%} of calls")
    if e.detection is not None:
        parts.append(f"catches {e.detection:.0%} of faults")
    if e.unseen_mass is not None:
        parts.append(f"unseen mass {e.unseen_mass:.0%}")
    if e.flipped_tasks:
        parts.append(f"noisy in {e.flipped_tasks} tasks")
    return ", ".join(parts)


def _tree(members: Sequence[Contract]) -> list[Line]:
    """One line per field: its type and the structural facts that held, children under
    their parent (``items`` then ``[*]`` then ``price``)."""
    facts: dict[str, list[str]] = {}
    tasks: dict[str, int] = {}
    lines: list[Line] = []
    for c in members:
        if c.kind.value == SCHEMA_KIND:
            lines.append(Line("the schema as one contract", _evidence(c)))
            continue
        path = c.paths[0]
        fact = (type_text(c.params.get("type")) if c.kind.value == "type"
                else _FACTS.get(c.kind.value, ""))  # fmt: skip
        if c.kind.value == "type":
            facts.setdefault(path, []).insert(0, str(fact))
        else:
            facts.setdefault(path, []).append(str(fact or c.kind.value))
        if c.evidence is not None:
            tasks[path] = min(tasks.get(path, c.evidence.tasks), c.evidence.tasks)
    shown: dict[str, int] = {}
    most = max(tasks.values(), default=0)
    for path in sorted(facts, key=_steps_key):
        label, depth = _tree_label(path, shown)
        shown[path] = depth
        # the title gives the tool's tasks; a field seen in fewer says so
        seen = f"seen in {tasks[path]} tasks" if tasks.get(path, most) < most else ""
        lines.append(Line(f"{label}  {', '.join(facts[path])}", seen, depth))
    return lines


def _steps_key(text: str) -> tuple[str, ...]:
    try:
        return tuple("[*]" if s is WILDCARD else str(s) for s in parse(text).steps)
    except PathError:
        return (text,)


def _tree_label(text: str, shown: dict[str, int]) -> tuple[str, int]:
    """The path relative to its nearest shown ancestor, and its depth under it."""
    try:
        path = parse(text)
    except PathError:
        return text, 0
    for cut in range(len(path.steps) - 1, -1, -1):
        ancestor = format_path(path.root, path.steps[:cut])
        if ancestor in shown:
            rest = format_path("", path.steps[cut:]).lstrip(".")
            return rest, shown[ancestor] + 1
    return text, 0


def _counts(contracts: ContractFile) -> dict[str, dict[str, Any]]:
    summary = contracts.provenance.get("summary")
    return summary if isinstance(summary, dict) else {}


def _not_kept(contracts: ContractFile, tool: str) -> str:
    """What mining left out for ``tool``, from the counts the file keeps (it keeps no
    record of which candidates those were)."""
    counts = _counts(contracts).get(tool)
    if not isinstance(counts, dict) or not counts.get("dropped"):
        return ""
    dropped, candidates = counts.get("dropped", 0), counts.get("candidates", 0)
    selection = contracts.provenance.get("selection", {})
    chosen = selection.get("tools", {}).get(tool) if isinstance(selection, dict) else None
    if isinstance(chosen, dict) and "eligible" in chosen:
        unproven = candidates - chosen["eligible"]
        priced = chosen["eligible"] - chosen.get("kept", chosen["eligible"])
        # schema members come back from either pool: kept, so out of the sum that is shown
        folded = counts.get("folded", 0) or 0
        if unproven + priced - folded == dropped:
            back = (f", less {folded} of those kept all the same as checks of a schema"
                    if folded else "")  # fmt: skip
            return (
                f"not kept: {dropped} of {candidates} candidates — {unproven} not proposed on "
                f"every task and in enough folds, {priced} not worth their false alarms "
                f"within the budget{back} (the file keeps counts, not which)"
            )
    return f"not kept: {dropped} of {candidates} candidates (the file keeps counts, not which)"
