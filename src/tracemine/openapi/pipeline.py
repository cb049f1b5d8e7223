"""``tracemine merge`` as one library call: read the candidates and the specs, map tools to
operations, extract declared contracts, merge, and write the labelled file."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracemine import _gc
from tracemine.model.contract import Contract, ContractFile, load_contracts, save_contracts
from tracemine.openapi.declared import Fact, operation_facts, refused_pattern, to_contract
from tracemine.openapi.load import Spec, load_spec
from tracemine.openapi.mapping import ToolMap, map_tools, read_mapping
from tracemine.openapi.merge import label_counts, merge
from tracemine.openapi.observe import Observer
from tracemine.openapi.operations import Operation


@dataclass(slots=True)
class MergeReport:
    """What a merge did: the merged file, how tools met operations, per-label counts."""

    merged: ContractFile
    tool_map: ToolMap
    specs: list[dict[str, Any]] = field(default_factory=list)
    declared: int = 0
    labels: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    out: str | None = None
    refused_patterns: list[dict[str, str]] = field(default_factory=list)
    """Declared patterns left out because the monitor refuses them: ``tool``, ``spec``,
    ``operation``, ``pointer``, ``path``, ``regex`` and ``reason`` (also said in
    ``warnings``, one line a pattern)."""


def merge_files(
    candidates: str | Path | ContractFile,
    specs: Sequence[str | Path],
    *,
    mapping: str | Path | dict[str, Any] | None = None,
    db: str | Path | None = None,
    out: str | Path | None = None,
) -> MergeReport:
    """Merge mined candidates with what ``specs`` declare; write ``out`` when given.

    Tools are the ones the candidates (and the store, with ``db``) name; without either,
    every operation that names itself is a tool. Operations no tool maps to are reported
    and contribute no contracts."""
    if not isinstance(candidates, ContractFile):
        candidates = load_contracts(candidates)
    loaded: list[Spec] = [load_spec(s) for s in specs]
    if isinstance(mapping, str | Path):
        mapping = read_mapping(mapping)
    observer = Observer(db) if db is not None else None
    try:
        # run-level contracts speak of whole runs (tool "*" for some), not of an operation
        tools: set[str] | None = {c.tool for c in candidates.contracts if c.side != "run"} or None
        if observer is not None:
            tools = (tools or set()) | observer.tools or None
        tool_map = map_tools(loaded, sorted(tools) if tools is not None else None, mapping)
        owner = {id(op): spec for spec in loaded for op in spec.operations}
        declared: list[Contract] = []
        refused: list[dict[str, str]] = []
        with _gc.paused():
            for tool, op in tool_map.tools.items():
                for fact in operation_facts(op, owner[id(op)].refs):
                    # a monitor refuses a whole file for one pattern it cannot run, and a
                    # reviewer accepting everything would un-mute one kept muted: left out
                    if reason := refused_pattern(fact):
                        refused.append(_refused(fact, tool, op, reason))
                        continue
                    declared.append(to_contract(fact, tool, op))
        merged = merge(candidates, declared, observer=observer)
    finally:
        if observer is not None:
            observer.con.close()
    merged.provenance["merge"].update(
        specs=[s.source for s in loaded], mapping=bool(mapping), db=str(db) if db else None,
        unmapped_tools=tool_map.unmapped_tools,
        unmapped_operations=len(tool_map.unmapped_operations),
    )  # fmt: skip
    warnings = [w for s in loaded for w in s.warnings]
    for spec in loaded:
        warnings += [
            f"{spec.source}: remote $ref not followed: {r}" for r in sorted(spec.refs.remote)
        ]
    warnings += [f"ambiguous: {a}" for a in tool_map.ambiguous]
    warnings += _refused_lines(refused)
    report = MergeReport(
        merged=merged, tool_map=tool_map, declared=len(declared), warnings=warnings,
        specs=[{"source": s.source, "kind": s.kind, "operations": len(s.operations)}
               for s in loaded],
        labels=label_counts(merged.contracts), refused_patterns=refused,
    )  # fmt: skip
    if out is not None:
        report.out = str(save_contracts(merged, out))
    return report


def _refused(fact: Fact, tool: str, op: Operation, reason: str) -> dict[str, str]:
    return {"tool": tool, "spec": op.spec, "operation": op.key, "pointer": fact.pointer,
            "path": fact.path, "regex": fact.params["regex"], "reason": reason}  # fmt: skip


def _refused_lines(refused: list[dict[str, str]]) -> list[str]:
    """One warning a refused pattern where it is written (a shared schema's pattern is
    reached from every operation returning it), naming the operations it was declared for."""
    where: dict[tuple[str, str, str, str], list[str]] = {}
    for r in refused:
        ops = where.setdefault((r["spec"], r["pointer"], r["regex"], r["reason"]), [])
        if r["operation"] not in ops:
            ops.append(r["operation"])
    lines = []
    for (spec, pointer, regex, reason), ops in where.items():
        named = ", ".join(ops[:3]) + (f" and {len(ops) - 3} more" if len(ops) > 3 else "")
        lines.append(f"{spec}: pattern {regex!r} at {pointer} ({named}) left out: the monitor "
                     f"refuses it ({reason})")  # fmt: skip
    return lines
