"""tracemine: mine outcome contracts from known-good agent tool-call traces and check them.

The public API; everything not named in ``__all__`` is internal and may change.
"""

from tracemine.errors import (
    ContractFileError,
    InputError,
    StoreError,
    TaskKeyError,
    TracemineError,
    UnknownFormatError,
)
from tracemine.ingest import FileReport, IngestReport, StoreStats, ingest, stats
from tracemine.model import CallRecord, QuarantineRecord, RunRecord, Status

__version__ = "0.1.0"

__all__ = [
    "CallRecord",
    "ContractFileError",
    "FileReport",
    "IngestReport",
    "InputError",
    "QuarantineRecord",
    "RunRecord",
    "Status",
    "StoreError",
    "StoreStats",
    "TaskKeyError",
    "TracemineError",
    "UnknownFormatError",
    "__version__",
    "ingest",
    "stats",
]
