"""What every export target shares: which contracts go out, and the report of what did
not (a target never drops a contract silently)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from tracemine.model.contract import Contract, ContractFile, ContractStatus, Kind


class Unexpressed(BaseModel):
    """A contract a target could not carry, and why."""

    id: str
    tool: str
    kind: str
    description: str = ""
    reason: str


class ExportReport(BaseModel):
    """What an export wrote and what it left out."""

    format: str
    out: str
    files: list[str] = Field(default_factory=list)
    selected: int = Field(0, description="contracts chosen for export (accepted, or proposed)")
    exported: int = Field(0, description="contracts the target expresses")
    unexpressed: list[Unexpressed] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


@dataclass(slots=True)
class Exported:
    """A target's output: files by path and what could not be expressed."""

    files: dict[Path, str] = field(default_factory=dict)
    exported: int = 0
    unexpressed: list[Unexpressed] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def skip(self, contract: Contract, reason: str) -> None:
        self.unexpressed.append(
            Unexpressed(id=contract.id, tool=contract.tool, kind=contract.kind.value,
                        description=contract.description, reason=reason)
        )  # fmt: skip


@dataclass(slots=True)
class Options:
    """Target-specific inputs: the source spec and tool mapping (``openapi-overlay``),
    recorded traces (``pytest``)."""

    spec: Path | None = None
    mapping: Path | dict[str, Any] | None = None
    traces: list[Path] = field(default_factory=list)


def select_contracts(contracts: ContractFile, include_proposed: bool = False) -> list[Contract]:
    """The contracts to ship: accepted ones, plus proposed ones when asked. Rejected and
    muted contracts never go out."""
    wanted = {ContractStatus.ACCEPTED}
    if include_proposed:
        wanted.add(ContractStatus.PROPOSED)
    # a contract folded into a schema goes out with it, as the monitor enforces it
    schemas = {c.id: c.status for c in contracts.contracts if c.kind == Kind.SCHEMA}
    return [c for c in contracts.contracts if _status(c, schemas) in wanted]


def _status(contract: Contract, schemas: dict[str, ContractStatus]) -> ContractStatus:
    followed = schemas.get(contract.folded_into or "")
    stays = (ContractStatus.REJECTED, ContractStatus.MUTED)
    return contract.status if followed is None or contract.status in stays else followed


def by_tool(contracts: Iterable[Contract]) -> dict[str, list[Contract]]:
    out: dict[str, list[Contract]] = {}
    for c in contracts:
        out.setdefault(c.tool, []).append(c)
    return dict(sorted(out.items()))
