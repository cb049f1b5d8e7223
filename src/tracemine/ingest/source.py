"""Reading a trace file as a stream of units: JSONL lines, or elements of a top-level
JSON array (streamed with ijson), or one whole JSON object. ``.gz`` is read transparently.
Memory stays flat for JSONL and for arrays, however large the file."""

from __future__ import annotations

import gzip
import hashlib
import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

import ijson

from tracemine.ingest.readers.base import excerpt, loads, not_numbers

_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(slots=True)
class BadUnit:
    """A unit that could not be parsed; it goes to quarantine whole."""

    reason: str
    raw: Any


def open_binary(path: Path) -> IO[bytes]:
    with open(path, "rb") as probe:
        magic = probe.read(2)
    if magic == _GZIP_MAGIC:
        return cast(IO[bytes], gzip.open(path, "rb"))
    return open(path, "rb")


def file_hash(path: Path) -> tuple[str, int]:
    """sha256 of the file's bytes as stored (compressed or not) and its size."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def layout(path: Path) -> str:
    """'jsonl', 'array' or 'document', judged from the first line. A file that is one
    JSON array on one line is an 'array', read element by element as the same array
    written over many lines is (a JSONL line that is an array is a unit of its own)."""
    with open_binary(path) as handle:
        try:
            first = handle.readline(1 << 26)
            stripped = first.strip()
            if stripped[:1] == b"[" and stripped[-1:] == b"]" and _only_blank_after(handle):
                return "array"
        except (OSError, EOFError):
            # a gzip stream truncated inside its first line: read as lines, the break is
            # quarantined like a truncation anywhere else in the file
            return "jsonl"
    if not stripped:
        return "jsonl"
    try:
        loads(stripped)
        return "jsonl"
    except (ValueError, RecursionError):
        pass
    finally:
        not_numbers()  # a probe: the line is read again, and noted then
    if stripped[:1] == b"[":
        return "array"
    if stripped[:1] == b"{":
        return "document"
    return "jsonl"


def _only_blank_after(handle: IO[bytes]) -> bool:
    """Whether nothing but white space follows in ``handle``."""
    while chunk := handle.read(1 << 16):
        if chunk.strip():
            return False
    return True


Progress = Callable[[int], None]


def iter_units(path: Path, progress: Progress | None = None) -> Iterator[tuple[int, Any]]:
    """Yield ``(position, unit)``: position is the 1-based line (JSONL), element number
    (array) or document number (documents one after another); a unit that cannot be
    parsed is a :class:`BadUnit`. ``progress`` is called now and then with the number of
    bytes of the file read so far."""
    shape = layout(path)
    if shape == "jsonl":
        yield from _iter_jsonl(path, progress)
    elif shape == "array":
        yield from _iter_array(path)
    else:
        yield from _iter_document(path)


def _position(handle: IO[bytes]) -> int:
    inner = getattr(handle, "fileobj", None)  # gzip: report compressed bytes read
    try:
        return int((inner or handle).tell())
    except (OSError, ValueError):
        return 0


def _iter_jsonl(path: Path, progress: Progress | None) -> Iterator[tuple[int, Any]]:
    with open_binary(path) as handle:
        line_no = 0
        while True:
            if progress is not None and line_no % 8192 == 0:
                progress(_position(handle))
            try:
                raw = handle.readline()
            except (OSError, EOFError) as exc:
                yield line_no + 1, BadUnit(f"file is truncated or corrupt: {exc}", b"")
                return
            if not raw:
                return
            line_no += 1
            if not raw.strip():
                continue
            try:
                yield line_no, loads(raw)
            except UnicodeDecodeError as exc:
                yield line_no, BadUnit(f"invalid UTF-8: {exc.reason}", raw)
            except RecursionError:
                yield line_no, BadUnit("JSON nested too deeply", raw)
            except ValueError as exc:
                yield line_no, BadUnit(f"invalid JSON: {exc}", raw)


def _iter_array(path: Path) -> Iterator[tuple[int, Any]]:
    with open_binary(path) as handle:
        position = 0
        try:
            for position, item in enumerate(ijson.items(handle, "item", use_float=True), 1):
                yield position, item
        except (ijson.JSONError, ValueError, OSError, EOFError) as exc:
            yield (
                position + 1,
                BadUnit(f"JSON array is truncated or invalid after element {position}: {exc}", ""),
            )


def _iter_document(path: Path) -> Iterator[tuple[int, Any]]:
    with open_binary(path) as handle:
        try:
            raw = handle.read()
        except (OSError, EOFError) as exc:
            yield 1, BadUnit(f"file is truncated or corrupt: {exc}", b"")
            return
    try:
        yield 1, loads(raw)
    except UnicodeDecodeError as exc:
        yield 1, BadUnit(f"invalid UTF-8: {exc.reason}", raw)
    except RecursionError:
        yield 1, BadUnit("JSON nested too deeply", raw)
    except ValueError as exc:
        yield from _iter_documents(raw, f"invalid JSON document: {exc}")


def _iter_documents(raw: bytes, invalid: str) -> Iterator[tuple[int, Any]]:
    """JSON documents one after another (what OpenTelemetry's ``ConsoleSpanExporter``
    prints: a pretty-printed object a span), numbered from 1; ``invalid`` is the reason
    given when not even the first is whole."""
    position = 0
    try:
        documents = ijson.items(io.BytesIO(raw), "", multiple_values=True, use_float=True)
        for position, document in enumerate(documents, 1):
            yield position, document
    except (ijson.JSONError, ValueError, RecursionError) as exc:
        if position == 0:
            yield 1, BadUnit(invalid, excerpt(raw))
        else:
            yield position + 1, BadUnit(f"JSON document {position + 1} is invalid: {exc}", "")
