"""What ``incident`` found and wrote: the report that :mod:`tracemine.incident.api`
builds and :mod:`tracemine.incident.outputs` writes beside the contracts."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Separating(BaseModel):
    contract_id: str
    tool: str
    kind: str
    paths: list[str]
    description: str
    tasks: int = Field(description="known-good tasks that support it")
    observed: str = Field(description="what the failing run showed")
    claim: str = Field("", description="what it claims of every known-good run")
    why_not: str = Field("", description="for an alternative: why it was not written")


class IncidentReport(BaseModel):
    """What ``incident`` found and wrote."""

    name: str
    trace: str
    run_id: str
    db: str
    out: str
    vocabulary: int = Field(description="contracts fitted on the known-good runs")
    nominal_runs: int
    nominal_tasks: int
    alarming_on_nominal: int = Field(description="fitted contracts some known-good run breaks")
    violated: int = Field(description="fitted contracts the failing run breaks")
    separating: list[Separating] = Field(default_factory=list, description="written")
    alternatives: list[Separating] = Field(default_factory=list)
    missing_vocabulary: list[str] = Field(
        default_factory=list,
        description="when nothing separates: relations that would have, and what the "
        "vocabulary or mining lacks to say them",
    )
    control_runs: list[str] = Field(default_factory=list)
    personal_values_replaced: int = Field(
        0, description="distinct personal values the cassettes hold as stand-ins"
    )
    files: list[str] = Field(default_factory=list)
