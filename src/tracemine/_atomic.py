"""Files written whole or not at all.

Every file tracemine writes goes through :func:`write_atomic`: the bytes go to a
temporary file in the target's folder, are flushed to disk, and the temporary file
replaces the target in one rename. A reader, or a process killed half-way, sees the old
file or the new one, never a part of it. The target keeps its permission bits; a new
file gets those a plain ``open`` would give it. Standard library only, so the monitor
and replay can use it.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def _umask() -> int:
    # os.umask can only be read by setting it: set it back at once, at import time
    current = os.umask(0o022)
    os.umask(current)
    return current


_NEW_FILE_MODE = 0o666 & ~_umask()


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
    handle, name = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
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
