"""Files written whole or not at all.

Every file tracemine writes goes through :func:`write_atomic`: the bytes go to a
temporary file in the target's folder, are flushed to disk, and the temporary file
replaces the target in one rename. A reader, or a process killed half-way, sees the old
file or the new one, never a part of it. The target keeps its permission bits; a new
file gets those a plain ``open`` would give it. Standard library only, so the monitor
and replay can use it.

The temporary file is named after its target, ``.<name>.<8 random characters>.tmp``, and
removed on any error. A process killed while writing leaves it behind; a writer that is
the only one of its target (an export) removes such leftovers with
:func:`remove_stale_temporaries`.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
from pathlib import Path


def _umask() -> int:
    # os.umask can only be read by setting it: set it back at once, at import time
    current = os.umask(0o022)
    os.umask(current)
    return current


_NEW_FILE_MODE = 0o666 & ~_umask()
# the names ``tempfile.mkstemp`` makes with the prefix and suffix below: eight characters
# of its alphabet between them
_RANDOM = r"[a-z0-9_]{8}"


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> Path:
    """Replace ``path`` with ``data`` (text is written as UTF-8) in one step; returns
    the path. A symbolic link is followed, so the file it points to is the one replaced.

    >>> write_atomic(tmp / "out.json", "{}")  # doctest: +SKIP
    """
    target = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        status = os.stat(target)
    except FileNotFoundError:
        mode = _NEW_FILE_MODE
    else:
        if not stat.S_ISREG(status.st_mode):  # /dev/stdout, a pipe: nothing to replace
            with open(target, "wb") as out:
                out.write(payload)
            return target
        mode = stat.S_IMODE(status.st_mode)
    real = Path(os.path.realpath(target))
    handle, name = tempfile.mkstemp(prefix=_prefix(real), suffix=".tmp", dir=real.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(payload)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(name, mode)
        os.replace(name, real)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    _sync_folder(real.parent)
    return target


def remove_stale_temporaries(path: str | os.PathLike[str], older_than: float) -> list[Path]:
    """Remove the temporary files :func:`write_atomic` left beside ``path`` (the file a
    symbolic link points to, as there) when a process writing it was killed: those last
    changed before ``older_than`` (a :func:`time.time`), so that one a writer started
    since is left to it. Returns the files removed; one that cannot be is left."""
    real = Path(os.path.realpath(path))
    named = re.compile(re.escape(_prefix(real)) + _RANDOM + r"\.tmp").fullmatch
    removed = []
    try:
        entries = list(os.scandir(real.parent))
    except OSError:  # no folder yet: nothing was left in it
        return []
    for entry in entries:
        if not named(entry.name):
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            if entry.stat(follow_symlinks=False).st_mtime >= older_than:
                continue
            os.unlink(entry.path)
        except OSError:
            continue
        removed.append(Path(entry.path))
    return removed


def _prefix(real: Path) -> str:
    return f".{real.name}."


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX; elsewhere a folder cannot be opened)."""
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)
