"""Errors tracemine raises for a user's mistake (never for its own bugs).

    TracemineError
    ├── InputError            a file or option the user gave cannot be used
    │   ├── UnknownFormatError    no reader recognises the file / --format names none
    │   └── TaskKeyError          --task-key is malformed
    ├── StoreError            the DuckDB file is not a tracemine store or is of another version
    ├── MemoryLimitError      a step needs more memory than TRACEMINE_DUCKDB_MEMORY allows
    ├── ContractFileError     a contract file is invalid or of an unknown version
    └── ShardFailed           a shard of a mine across workers failed twice (its worker died,
                              or its task raised); the job stopped and wrote no result

The CLI maps every TracemineError to a one-line message and exit code 2.
"""

from __future__ import annotations


class TracemineError(Exception):
    """Base of all errors meant for the user."""


class InputError(TracemineError):
    """A file or an option the user gave cannot be used."""


class UnknownFormatError(InputError):
    """No reader recognises the file, or --format names none."""


class TaskKeyError(InputError):
    """A --task-key specification is malformed."""


class StoreError(TracemineError):
    """The database is not a tracemine store, or is of another schema version."""


class MemoryLimitError(TracemineError):
    """A step needs more memory than the DuckDB cap (``TRACEMINE_DUCKDB_MEMORY``) allows;
    the message says which step and what to set the cap to."""


class ContractFileError(TracemineError):
    """A contract file is invalid or of an unknown version."""


class ShardFailed(TracemineError):
    """A shard's task failed twice in a mine across workers; the message names the shard
    and the pass, and nothing was written as the result."""
