"""The normalized trace record: one row per tool call, lossless enough that nothing the
source said is lost.

Readers build records as plain dicts keyed by :data:`CALL_FIELDS` (pydantic validation per
record would dominate ingest time); :class:`CallRecord` is the schema those dicts follow, and
``ingest(..., validate=True)`` checks every record against it.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

JSONValue = Any
"""Any JSON value: dict, list, str, int, float, bool or None."""


class Status(StrEnum):
    """How a call ended, as far as the source tells."""

    OK = "ok"
    TOOL_ERROR = "tool_error"  # the tool answered, flagging an error (isError, is_error, ok=false)
    PROTOCOL_ERROR = "protocol_error"  # the transport failed (JSON-RPC error object)
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    DENIED = "denied"
    MISSING = "missing"  # a call whose result never arrived
    UNKNOWN = "unknown"


class TaskIdSource(StrEnum):
    EXPLICIT = "explicit"  # the format carries a task id
    CONFIGURED = "configured"  # derived with --task-key
    NONE = "none"


class IdPairing(StrEnum):
    EXACT = "exact"  # result matched to its call by id
    INFERRED = "inferred"  # matched by position or by the span that holds both
    NONE = "none"  # no result to pair


class CallRecord(BaseModel):
    """One tool call and what came back, normalized from any source format."""

    model_config = ConfigDict(extra="forbid")

    # provenance
    source_format: str
    source_file: str
    source_line: int | None = Field(None, description="1-based line (JSONL) or element index")
    source_pointer: str | None = Field(None, description="JSON pointer inside that record")
    adapter_version: str
    # grouping
    run_id: str
    task_id: str | None = None
    task_id_source: TaskIdSource = TaskIdSource.NONE
    trial: int | None = None
    session_id: str | None = None
    run_outcome: str | None = None
    # ordering
    seq: int | None = Field(None, description="0-based position of the call in its run")
    turn: int | None = None
    parallel_index: int | None = None
    # identity
    call_id: str | None = None
    result_call_id: str | None = None
    id_pairing: IdPairing = IdPairing.NONE
    # tool
    tool: str
    server: str | None = None
    schema_ref: str | None = None
    # arguments
    arguments_raw: str | None = None
    arguments: JSONValue = None
    arguments_error: str | None = None
    # result
    result: JSONValue = None
    result_text: str | None = None
    result_raw: str | None = None
    result_truncated: bool = False
    result_redacted: bool = False
    # status
    status: Status = Status.UNKNOWN
    error_type: str | None = None
    error_message: str | None = None
    # timing
    started_at: datetime | None = None
    ended_at: datetime | None = None
    duration_ms: float | None = None
    # what the reader noticed: duplicate_call_id, result_id_mismatch, ...
    anomalies: list[str] = Field(default_factory=list)


class RunRecord(BaseModel):
    """What a source says about one run (a conversation, a trace, a session)."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    task_id: str | None = None
    task_id_source: TaskIdSource = TaskIdSource.NONE
    trial: int | None = None
    session_id: str | None = None
    run_outcome: str | None = None
    reward: float | None = None
    family: str | None = Field(None, description="task type or label, when the source has one")
    source_format: str
    source_file: str
    metadata: dict[str, JSONValue] = Field(default_factory=dict)


class QuarantineRecord(BaseModel):
    """Something read that could not be stored as a call, and why."""

    model_config = ConfigDict(extra="forbid")

    source_file: str
    source_line: int | None = None
    source_pointer: str | None = None
    reason: str
    excerpt: str = ""


CALL_FIELDS: tuple[str, ...] = tuple(CallRecord.model_fields)
RUN_FIELDS: tuple[str, ...] = tuple(RunRecord.model_fields)
