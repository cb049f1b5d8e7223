"""One-line descriptions of contracts (``result.total_cents >= 0``) and their order."""

from __future__ import annotations

import json

from tracemine.mine.evidence.schema import SHAPE, summary
from tracemine.model.contract import Contract, Kind, between
from tracemine.monitor._predicates import type_text

_KIND_ORDER = {kind: position for position, kind in enumerate(Kind)}


def describe(contract: Contract) -> str:
    """What the contract says, as an expression a reviewer reads at a glance."""
    p, params = contract.paths, contract.params
    first = p[0]
    kind = contract.kind
    text = {
        Kind.PRESENT: lambda: f"{first} is present",
        Kind.NOT_NULL: lambda: f"{first} is not null",
        Kind.TYPE: lambda: f"{first} is {type_text(params.get('type'))}",
        Kind.NON_NEGATIVE: lambda: f"{first} >= 0",
        Kind.POSITIVE: lambda: f"{first} > 0",
        Kind.RANGE: lambda: between(first, params),
        Kind.ONE_OF: lambda: f"{first} in {json.dumps(params.get('values'))}",
        Kind.CONST: lambda: f"{first} == {json.dumps(params.get('value'))}",
        Kind.NON_EMPTY: lambda: f"{first} is not empty",
        Kind.LENGTH: lambda: between(f"len({first})", params),
        Kind.FORMAT: lambda: f"{first} is a {params.get('format')}",
        Kind.PATTERN: lambda: f"{first} matches {params.get('regex')}",
        Kind.UNIQUE: lambda: f"{first} has no duplicates",
        Kind.EQUALS: lambda: f"{first} == {p[-1]}",
        Kind.LE: lambda: f"{first} <= {p[-1]}",
        Kind.LT: lambda: f"{first} < {p[-1]}",
        Kind.SUM_EQUALS: lambda: f"{first} == {p[-1]} (± {params.get('tolerance', 0)})",
        Kind.MEMBER: lambda: f"{first} in {p[-1]}",
        Kind.SUBSET: lambda: _subset(first, p[-1]),
        Kind.SHARES_TOKEN: lambda: f"{first} shares a word with {p[-1]}",
        Kind.RATIO: lambda: _ratio(first, p[-1], params),
        Kind.PAGE_FULL: lambda: _page(p, params),
        Kind.PRODUCT: lambda: _product(p, params),
        Kind.SCHEMA: lambda: _schema(first, params),
    }.get(kind, lambda: f"{kind.value}({', '.join(p)})")()
    if contract.when is not None:
        text += f" when {contract.when.render()}"
    return text


def _subset(left: str, right: str) -> str:
    if right.startswith("keys(") and right.endswith(")"):
        return f"{right[5:-1]} has an entry for every name in {left}"
    if left.startswith("keys(") and left.endswith(")"):
        return f"every entry of {left[5:-1]} is named in {right}"
    return f"every {left} in {right}"


def _ratio(left: str, right: str, params: dict) -> str:
    tolerance = float(params.get("tolerance", 0))
    return f"{left} == {float(params.get('ratio', 0)):.6g} × {right} (± {tolerance:.2%})"


def _product(p: list[str], params: dict) -> str:
    total, left, right = [*p, "?", "?", "?"][:3]
    text = f"{total} == {left} × {right} (± {params.get('tolerance', 0)})"
    return text + (", element by element" if "[*]" in total else "")


def _page(p: list[str], params: dict) -> str:
    size, count, limit = [*p, "?", "?", "?"][:3]
    if params.get("start"):
        rest = f"{count} - {params['start']}"
    elif params.get("page"):
        rest = f"{count} - ({params['page']} - 1) × {limit}"
    else:
        rest = count
    return f"{size} == min({limit}, {rest}): a page is full unless it is the last"


def _schema(side: str, params: dict) -> str:
    typed, required, non_empty = summary(params.get("schema") or {})
    text = (
        f"{side} has its mined shape: {typed} typed values, {required} required keys, "
        f"{non_empty} non-empty"
    )
    if params.get("tier") == SHAPE:
        text += " (required: only keys naming the record the call asked for)"
    return text


def sort_key(contract: Contract) -> tuple:
    """Deterministic order: tool, side, path, kind, condition, id."""
    when = contract.when.render() if contract.when else ""
    return (
        contract.tool,
        contract.side.value,
        contract.paths[0],
        _KIND_ORDER[contract.kind],
        contract.paths[1:],
        when,
        contract.id,
    )
