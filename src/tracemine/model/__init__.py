"""Types shared by every stage."""

from tracemine.model.trace import (
    CALL_FIELDS,
    RUN_FIELDS,
    CallRecord,
    IdPairing,
    QuarantineRecord,
    RunRecord,
    Status,
    TaskIdSource,
)

__all__ = [
    "CALL_FIELDS",
    "RUN_FIELDS",
    "CallRecord",
    "IdPairing",
    "QuarantineRecord",
    "RunRecord",
    "Status",
    "TaskIdSource",
]
