"""Cases a user writes, in a JSON file::

    {"cases": [{
      "id": "refund-1",
      "request": "I want a refund for order #W1234567.",
      "system": "You are a support agent.",                    (optional)
      "family": "commerce.refund",                             (optional)
      "tools": [{"name": "get_order", "description": "…", "parameters": {JSON Schema}}],
      "fixtures": [{"tool": "get_order", "arguments": {…}, "result": {…}}, …],
      "expected_calls": [{"tool": "create_refund", "arguments": {"order_id": "#W1234567"}}],
      "accepted_claims": ["refund issued for order #W1234567"],
      "safe_stop": "I could not complete this task safely"    (optional)
    }]}

``fixtures`` are the values the tools answer with, in the order a correct agent would
call them: they are the nominal trajectory the fault schedule and the scripted agent's
plan are drawn from. Each read tool gets its recovery tool ``refresh_<tool>``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tracemine.arms.cases import SAFE_STOP, Case, claim_template, is_write, plan, recovery_tool
from tracemine.errors import InputError


class _Tool(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})


class _Fixture(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: Any


class _Expected(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class _Case(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    request: str = Field(min_length=1)
    system: str = "You are a helpful agent with tools."
    family: str | None = None
    tools: list[_Tool] = Field(min_length=1)
    fixtures: list[_Fixture] = Field(min_length=1)
    expected_calls: list[_Expected] = Field(default_factory=list)
    accepted_claims: list[str] = Field(min_length=1)
    safe_stop: str = SAFE_STOP


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")
    cases: list[_Case] = Field(min_length=1)


def load_cases(path: str | Path) -> list[Case]:
    """Read a cases file; a mistake is one :class:`InputError` naming the case and field."""
    file = Path(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{file}: cannot read the cases file: {exc}") from None
    try:
        parsed = _File.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
        raise InputError(f"{file}: {where.lstrip('.') or 'top level'}: {first['msg']}") from None
    seen: set[str] = set()
    cases = []
    for number, raw in enumerate(parsed.cases):
        if raw.id in seen:
            raise InputError(f"{file}: cases[{number}].id: {raw.id!r} is used twice")
        seen.add(raw.id)
        names = {t.name for t in raw.tools}
        listed = [
            ("fixtures", [f.tool for f in raw.fixtures]),
            ("expected_calls", [e.tool for e in raw.expected_calls]),
        ]
        for field, tools in listed:
            for index, tool in enumerate(tools):
                if tool not in names:
                    raise InputError(
                        f"{file}: cases[{number}].{field}[{index}].tool: "
                        f"{tool!r} is not among the case's tools"
                    )
        cases.append(_to_case(raw))
    return cases


def _to_case(raw: _Case) -> Case:
    calls = [
        {
            "seq": i,
            "turn": i,
            "call_id": f"fixture_{i}",
            "tool": f.tool,
            "status": "ok",
            "arguments": f.arguments,
            "result": f.result,
        }
        for i, f in enumerate(raw.fixtures)
    ]
    tools = [t.model_dump() for t in raw.tools]
    names = {t["name"] for t in tools}
    for tool in list(tools):
        named = recovery_tool(tool["name"])
        if not is_write(tool["name"]) and named not in names:
            what = (
                f"Drop the cached {tool['name']} answer for these arguments, so the next "
                f"{tool['name']} call reads it afresh."
            )
            tools.append({"name": named, "parameters": tool["parameters"], "description": what})
    return Case(
        case_id=raw.id,
        family=raw.family,
        system=raw.system,
        request=raw.request,
        tools=tools,
        fixtures=[f.model_dump() for f in raw.fixtures],
        nominal=calls,
        expected_calls=[e.model_dump() for e in raw.expected_calls],
        accepted_claims=raw.accepted_claims,
        safe_stop=raw.safe_stop,
        plan=plan(calls, raw.request),
        claim=claim_template(raw.accepted_claims[0], calls),
    )
