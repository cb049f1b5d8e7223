"""What an ingest tells its caller: a report per file, and the whole ingest's."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, Field


class FileReport(BaseModel):
    """What happened to one file."""

    source_file: str
    source_format: str | None = None
    outcome: str  # ingested | skipped | replaced
    detail: str = ""
    units_read: int = 0
    units_stored: int = 0
    units_quarantined: int = 0
    items_quarantined: int = 0
    runs: int = 0
    calls: int = 0
    calls_missing_result: int = 0
    calls_without_content: int = Field(
        0,
        description="calls whose arguments or result the trace did not record (OTel "
        "content capture off, OpenInference inputs or outputs hidden)",
    )
    runs_without_task: int = 0
    stopped: str = Field(
        "",
        description="why and where the file was not read to its end (a gzip stream cut "
        "short or corrupt, a gzip bomb, a record past a limit), as quarantined; what came "
        "before it is stored. Empty when the file was read whole",
    )
    seconds: float = 0.0


class IngestReport(BaseModel):
    """What an ingest did, file by file. ``units_read == units_stored + units_quarantined``."""

    db: str
    files: list[FileReport]
    task_key_suggestions: list[str] = Field(
        default_factory=list,
        description="when some runs of the store have no task id: the --task-key values "
        "that would give them one, with the tasks each gives",
    )

    def total(self, field: str) -> int:
        return sum(int(getattr(report, field)) for report in self.files)


ProgressCallback = Callable[[str, int, int], None]
"""Called with (file, bytes read, file size)."""
