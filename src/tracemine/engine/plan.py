"""Shards of a corpus: its files, and byte ranges of the large ones, cut at line ends.

A source is a local path (a file, or a folder of trace files), a glob, or an fsspec URL
(``s3://bucket/traces/*.jsonl``, ``gs://…``, ``memory://…``: whatever filesystem package
is installed). Each file is one shard unless it is larger than ``shard_bytes``, not
compressed, JSON lines, and its reader can read it in pieces (every line holds whole
runs: :meth:`tracemine.ingest.readers.base.Reader.splittable`); then it is cut into ranges
of about ``shard_bytes``, each starting after a line end. A shard's place in the plan is
its ingest id minus one, so its calls get the keys one store of the corpus would give
them. Planning reads only listings and the first and cut-point bytes of each file.
"""

from __future__ import annotations

import hashlib
import itertools
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tracemine.errors import InputError, UnknownFormatError
from tracemine.ingest.detect import detect_format, reader_for
from tracemine.ingest.pipeline import TRACE_SUFFIXES, expand_paths
from tracemine.ingest.source import BadUnit, iter_units, layout

SHARD_BYTES = 256_000_000
"""A splittable file larger than this is cut into ranges of about this size."""
HEAD_BYTES = 4_000_000
"""Bytes read from the start of a remote file to tell its format."""
_GLOB = frozenset("*?[")


@dataclass(frozen=True)
class Shard:
    """One unit of work: the file at ``url``, or its bytes ``start`` to ``end`` (a range
    of whole lines, whose first is line ``first_line`` of the file; None until counted).
    ``token`` names the version of the file read (its size and modification stamp)."""

    index: int
    url: str
    format: str
    size: int
    token: str
    start: int = 0
    end: int | None = None
    first_line: int | None = 1

    @property
    def ingest_id(self) -> int:
        return self.index + 1

    @property
    def whole(self) -> bool:
        return self.end is None

    @property
    def length(self) -> int:
        """The shard's bytes (0 for a remote file whose listing gave no size)."""
        return self.size - self.start if self.end is None else self.end - self.start

    @property
    def local(self) -> bool:
        return "://" not in self.url or self.url.startswith("file://")

    @property
    def name(self) -> str:
        return self.url if self.whole else f"{self.url} (bytes {self.start}-{self.end})"

    def key(self) -> str:
        """What the shard's store is named after: the file's version, the range, the
        format and the ingest id (a store is the shard read as that id)."""
        text = f"{self.url}|{self.token}|{self.start}|{self.end}|{self.format}|{self.ingest_id}"
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _filesystem(url: str) -> tuple[Any, str]:
    import fsspec

    try:
        return fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as exc:  # an unknown protocol, or its package missing
        raise InputError(f"{url}: cannot read this URL: {exc}") from None


def expand(sources: list[str]) -> list[str]:
    """The trace files the sources name, in order: files as named, the trace files in
    folders and globs sorted; a source that names nothing is an error."""
    found: list[str] = []
    for source in sources:
        text = str(source)
        if "://" not in text and not (_GLOB & set(text)):
            found.extend(p.as_posix() for p, _ in expand_paths([text]))
            continue
        fs, path = _filesystem(text)
        protocol = text.split("://", 1)[0] if "://" in text else None
        names = sorted(fs.glob(path)) if _GLOB & set(path) else [path]
        files: list[str] = []
        for name in names:
            if fs.isdir(name):
                files += sorted(p for p in fs.find(name) if p.endswith(TRACE_SUFFIXES))
            elif fs.exists(name):
                files.append(name)
        if not files:
            raise InputError(f"{text}: no such file, or no trace files there")
        found.extend(fs.unstrip_protocol(f) if protocol else f for f in files)
    return found


def plan(sources: list[str], *, format: str | None = None,
         shard_bytes: int = SHARD_BYTES) -> list[Shard]:  # fmt: skip
    """The shards of ``sources``, in order (see the module's docstring)."""
    if format is not None:
        reader_for(format)
    shards: list[Shard] = []
    for url in expand(sources):
        fs, path = _filesystem(url)
        info = fs.info(path)
        size = int(info.get("size") or 0)
        token = hashlib.sha256(str(sorted(info.items(), key=str)).encode()).hexdigest()[:16]
        name, split = _format(fs, path, url, format)
        base = Shard(len(shards), url, name, size, token)
        if not split or size <= shard_bytes:
            shards.append(base)
            continue
        pieces = -(-size // shard_bytes)
        cuts = [0, *(_line_end(fs, path, k * size // pieces) for k in range(1, pieces)), size]
        bounds = sorted(set(cuts))
        for start, end in itertools.pairwise(bounds):
            first = 1 if start == 0 else None
            shards.append(replace(base, index=len(shards), start=start, end=end,
                                  first_line=first))  # fmt: skip
    return shards


def _format(fs: Any, path: str, url: str, forced: str | None) -> tuple[str, bool]:
    """The file's reader (``forced``, or detected from its first units) and whether the
    file may be cut into byte ranges."""
    with fs.open(path, "rb") as handle:
        head = handle.read(HEAD_BYTES)
    compressed = head[:2] == b"\x1f\x8b"
    with tempfile.TemporaryDirectory() as tmp:
        sample = Path(tmp) / "head"
        sample.write_bytes(head if compressed else head[: head.rfind(b"\n") + 1] or head)
        try:
            name = forced or detect_format(sample)
        except UnknownFormatError as exc:
            raise UnknownFormatError(str(exc).replace(str(sample), url)) from None
        lines = not compressed and layout(sample) == "jsonl"
        first = next((u for _, u in iter_units(sample) if not isinstance(u, BadUnit)), None)
    split = lines and first is not None and reader_for(name).splittable(first)
    return name, split


def _line_end(fs: Any, path: str, offset: int) -> int:
    """The offset just after the first line end at or after ``offset``."""
    with fs.open(path, "rb") as handle:
        handle.seek(offset)
        position = offset
        while chunk := handle.read(1 << 16):
            found = chunk.find(b"\n")
            if found >= 0:
                return position + found + 1
            position += len(chunk)
    return position
