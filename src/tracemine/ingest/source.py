"""Reading a trace file as a stream of units: JSONL lines, or elements of a top-level
JSON array (streamed with ijson), or one whole JSON object, or the rows of a parquet file
(a dataframe saved with ``to_parquet``). ``.gz`` is read transparently for the JSON
layouts. Memory stays flat for JSONL, for arrays and for parquet, however large the file."""

from __future__ import annotations

import base64
import codecs
import hashlib
import io
import math
import uuid
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path
from typing import IO, Any

import ijson

from tracemine.ingest.limits import DEFAULT, LimitExceeded, Limits
from tracemine.ingest.readers.base import (
    EXCERPT_CHARS,
    NestedTooDeeply,
    excerpt,
    loads,
    not_numbers,
)

_GZIP_MAGIC = b"\x1f\x8b"
_PARQUET_MAGIC = b"PAR1"  # a parquet file starts (and ends) with it
_PARQUET_BATCH = 1024  # rows of a parquet file turned into Python objects at a time


@dataclass(slots=True)
class BadUnit:
    """A unit that could not be parsed; it goes to quarantine whole. ``stops``: the file
    is read no further (cut short, corrupt, past a limit), which its report says."""

    reason: str
    raw: Any
    stops: bool = False


class _Inflater:
    """A gzip file's bytes, decompressed a compressed chunk at a time, members one after
    another (as ``cat a.gz b.gz`` makes them). :class:`gzip.GzipFile` raises where the
    stream is cut and drops what it had decompressed for the read in progress (up to the
    megabyte the stream above asked for, or all of it when that was the first read): here
    every byte before the cut is handed on, and the cut is noted in ``cut_at`` and read
    as the end of the file, so the lines before it are stored and the incomplete last one
    is quarantined as what it is. A corrupt byte is raised only once what came before it
    was handed on."""

    _CHUNK = 1 << 16  # compressed bytes read at a time

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.zlib = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # gzip header and trailer
        self.input = b""  # compressed bytes read and not yet given to zlib
        self.started = False  # whether the current member has had a byte
        self.cut_at: int | None = None  # compressed size of a stream that ends too soon
        self.error: BaseException | None = None  # raised on the read after its bytes

    def read(self, size: int) -> bytes:
        """Up to ``size`` decompressed bytes; b"" at the end, or at a cut."""
        if self.error is not None:
            raise self.error
        while True:
            if not self.input:
                self.input = self.raw.read(self._CHUNK)
                if not self.input:
                    if not self.started:
                        return b""
                    # zlib may still hold output of input it took, past the last ``size``
                    if out := self._inflate(size):
                        return out
                    if self.started:
                        self.cut_at = self.raw.tell()
                    return b""
            if not self.started:
                # between members, gzip allows zero bytes of padding
                self.input = self.input.lstrip(b"\0")
                if not self.input:
                    continue
                if self.zlib.eof:
                    self.zlib = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
                self.started = True
            if out := self._inflate(size):
                return out

    def _inflate(self, size: int) -> bytes:
        """Up to ``size`` bytes out of ``self.input``."""
        before = self.zlib.copy()
        try:
            out = self.zlib.decompress(self.input, size)
        except zlib.error as exc:
            out = self._before_error(before, size)
            if not out:
                raise
            self.error, self.input = exc, b""
            return out
        self.input = self.zlib.unconsumed_tail
        if self.zlib.eof:
            self.input, self.started = self.zlib.unused_data, False
        return out

    def _before_error(self, zobj: Any, size: int) -> bytes:
        """What ``zobj`` decompresses of ``self.input`` before the byte it fails on: fed a
        little at a time, so at most a few records around the corrupt byte are lost."""
        out = bytearray()
        data = self.input
        for start in range(0, len(data), 256):
            try:
                out += zobj.decompress(data[start : start + 256], size - len(out))
            except zlib.error:
                break
            if len(out) >= size or zobj.eof:
                break
        return bytes(out)


# byte order marks, longest first (a UTF-32-LE one starts as a UTF-16-LE one does)
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# the first four bytes of a JSON text, 0 for a zero byte, without a BOM
_ZEROS = {"000x": "utf-32-be", "x000": "utf-32-le", "0x0x": "utf-16-be", "x0x0": "utf-16-le"}


def _encoding(head: bytes) -> tuple[str, int]:
    """The text encoding of a file that starts with ``head`` (up to 4 bytes) and how many
    bytes of BOM to skip. Without a BOM, the zero bytes around the first character, ASCII
    in any JSON text (RFC 4627 §3), tell UTF-16 and UTF-32 apart from UTF-8."""
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name, len(bom)
    zeros = "".join("0" if byte == 0 else "x" for byte in head)
    if found := _ZEROS.get(zeros):
        return found, 0
    return "utf-8", 0


class _Counted(io.RawIOBase):
    """A file's bytes as read (decompressed, for gzip; as UTF-8, for a file saved as
    UTF-16 or UTF-32), counted chunk by chunk: the gzip expansion ratio is checked here,
    once a chunk, so a bomb stops while it streams, and no line or record is ever looked
    at for it. A byte order mark is taken off here too (a UTF-16 file read as bytes splits
    at every other byte, and its lines are garbage)."""

    def __init__(self, path: Path, limits: Limits) -> None:
        # unbuffered: the stream above buffers, and ``tell`` is what was read
        self.raw: IO[bytes] = open(path, "rb", buffering=0)  # noqa: SIM115 (closed by close)
        self.gzip = self.raw.read(2) == _GZIP_MAGIC
        self.raw.seek(0)
        self.inflater = _Inflater(self.raw) if self.gzip else None
        self.limits = limits
        self.given = 0  # bytes handed on (decompressed)
        self.unit_cap: int | None = None  # most bytes from ``mark`` on (one record)
        self.mark = 0
        self.pending = b""  # bytes read ahead (the BOM probe) or decoded, not yet handed on
        self.decoder: codecs.IncrementalDecoder | None = None
        self.encoding = "utf-8"
        self.probed = False  # on the first read: what opening raises, reading raises

    @property
    def cut_at(self) -> int | None:
        """Compressed size of a gzip stream that ends before its end, else None."""
        return self.inflater.cut_at if self.inflater is not None else None

    def _probe_encoding(self) -> None:
        head = b""
        while len(head) < 4 and (more := self._read(4 - len(head))):
            head += more
        self.encoding, skip = _encoding(head)
        head = head[skip:]
        if self.encoding == "utf-8":
            self.pending = head
        else:
            # lone surrogates pass through, to be refused as the line's invalid UTF-8
            self.decoder = codecs.getincrementaldecoder(self.encoding)("surrogatepass")
            self.pending = self._decoded(head, final=False)

    def _decoded(self, data: bytes, final: bool) -> bytes:
        assert self.decoder is not None
        try:
            text = self.decoder.decode(data, final=final)
        except UnicodeDecodeError:  # an odd byte at the end: a cut character, kept as one
            text = "\ufffd"
        return text.encode("utf-8", "surrogatepass")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if not self.probed:
            self.probed = True
            self._probe_encoding()
        if not self.pending and self.decoder is not None:
            while not self.pending:
                data = self._read(max(len(buffer) // 2, 4))
                self.pending = self._decoded(data, final=not data)
                if not data:
                    break
        if self.pending:
            n = min(len(buffer), len(self.pending))
            buffer[:n] = self.pending[:n]
            self.pending = self.pending[n:]
            return n
        if self.inflater is None:  # plain UTF-8, the common case: no copy
            return self._counted(int(self.raw.readinto(buffer) or 0))  # type: ignore[attr-defined]
        out = self._read(len(buffer))
        buffer[: len(out)] = out
        return len(out)

    def _read(self, size: int) -> bytes:
        """Up to ``size`` bytes of the file, decompressed, counted."""
        source = self.inflater or self.raw
        out = source.read(size) or b""
        self._counted(len(out))
        return out

    def _counted(self, n: int) -> int:
        if n:
            self.given += n
            if self.gzip and self.given > self.limits.gzip_ratio_after:
                read = max(self.raw.tell(), 1)
                if self.given > self.limits.max_gzip_ratio * read:
                    raise LimitExceeded(
                        f"gzip expands past {self.limits.max_gzip_ratio:g}:1 "
                        f"({self.given} bytes from the first {read}; --max-gzip-ratio): "
                        "the rest of the file is not read"
                    )
            if self.unit_cap is not None and self.given - self.mark > self.unit_cap:
                cap = self.limits.max_record_bytes
                raise LimitExceeded(
                    f"a record over the {cap}-byte limit (--max-record-bytes): "
                    "the rest of the file is not read"
                )
        return n

    def position(self) -> int:
        """Bytes of the file read so far (compressed ones, for gzip)."""
        try:
            return int(self.raw.tell()) if self.gzip else self.given
        except (OSError, ValueError):
            return 0

    def close(self) -> None:
        try:
            self.raw.close()
        finally:
            super().close()


class _Stream(io.BufferedReader):
    """A trace file opened for reading units (see :class:`_Counted`)."""

    raw: _Counted


def open_binary(path: Path, limits: Limits = DEFAULT) -> _Stream:
    """The file's bytes, decompressed if it is gzip, buffered in large chunks."""
    return _Stream(_Counted(path, limits), buffer_size=1 << 20)


# what a stream raises when its file breaks: gzip's own errors (a bad header or CRC, a
# stream cut short) and zlib's (a corrupted byte inside the compressed data)
_BROKEN = (OSError, EOFError, zlib.error)


def _broken(exc: BaseException, handle: _Stream, after: str) -> BadUnit:
    """The one quarantine row of a file that cannot be read past some point."""
    if isinstance(exc, LimitExceeded):
        return BadUnit(f"{exc} (after {after})", b"", stops=True)
    where = "compressed byte" if handle.raw.gzip else "byte"
    return BadUnit(
        f"file is truncated or corrupt near {where} {handle.raw.position()} (after {after}): "
        f"{type(exc).__name__}: {exc}",
        b"",
        stops=True,
    )


def _cut(cut_at: int, after: str, raw: Any = b"") -> BadUnit:
    """The one quarantine row of a gzip file cut short at compressed byte ``cut_at``:
    what its stream held before the cut is read, ``raw`` is the incomplete record the cut
    ends in (if any)."""
    return BadUnit(
        f"file cut: the gzip stream ends before its end (truncated at byte {cut_at}, "
        f"after {after})",
        raw,
        stops=True,
    )


def file_hash(path: Path) -> tuple[str, int]:
    """sha256 of the file's bytes as stored (compressed or not) and its size."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def is_parquet(path: Path) -> bool:
    """Whether the file starts with parquet's magic bytes (whatever its name)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(len(_PARQUET_MAGIC)) == _PARQUET_MAGIC
    except OSError:
        return False  # said when the file is read


def layout(path: Path, limits: Limits = DEFAULT) -> str:
    """'parquet' for a file that starts with parquet's magic bytes ('gzip-parquet' for
    one inside gzip, which is not read); else 'jsonl', 'array' or 'document', judged
    from the first line. A file that is one JSON array on one line is an 'array', read
    element by element as the same array written over many lines is (a JSONL line that
    is an array is a unit of its own)."""
    if is_parquet(path):
        return "parquet"
    with open_binary(path, limits) as handle:
        try:
            first = handle.readline(_probe_bytes(limits) + 1)
            if handle.raw.gzip and first.startswith(_PARQUET_MAGIC):
                return "gzip-parquet"
            if handle.raw.cut_at is not None and first[-1:] != b"\n":
                return "jsonl"  # cut inside the first line: quarantined as lines are
            stripped = first.strip()
            if stripped[:1] == b"[" and stripped[-1:] == b"]" and _only_blank_after(handle):
                return "array"
        except (*_BROKEN, LimitExceeded):
            # a gzip stream truncated or broken inside its first line: read as lines, the
            # break is quarantined like a break anywhere else in the file
            return "jsonl"
    if not stripped:
        return "jsonl"
    if len(first) > _probe_bytes(limits) and first[-1:] != b"\n":
        # a first line past the cap: an array on one line streams, element by element;
        # anything else is read as lines, this one quarantined and the others read
        return "array" if stripped[:1] == b"[" else "jsonl"
    try:
        loads(stripped)
        return "jsonl"
    except NestedTooDeeply:  # a whole line, too deep to read: one of the file's lines
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


def _only_blank_after(handle: Any) -> bool:
    """Whether nothing but white space follows in ``handle``."""
    while chunk := handle.read(1 << 16):
        if chunk.strip():
            return False
    return True


def _probe_bytes(limits: Limits) -> int:
    """How much of the first line the layout probe reads: up to 64 MiB, and at least 8 MiB
    even under a smaller record cap (a first line a little over the cap is still seen
    whole, so a JSONL line that holds an array is not taken for an array file)."""
    return min(max(limits.max_record_bytes, 8 << 20), 1 << 26)


Progress = Callable[[int], None]


def iter_units(
    path: Path, progress: Progress | None = None, limits: Limits = DEFAULT
) -> Iterator[tuple[int, Any]]:
    """Yield ``(position, unit)``: position is the 1-based line (JSONL), element number
    (array) or row number (parquet); a unit that cannot be parsed is a :class:`BadUnit`,
    and so is one past ``limits``, and the point where the file broke (truncated, corrupt,
    a gzip bomb): the file is read no further. ``progress`` is called now and then with
    the number of bytes of the file read so far."""
    shape = layout(path, limits)
    if shape == "parquet":
        yield from _iter_parquet(path, progress)
    elif shape == "gzip-parquet":  # parquet is read in place, by its footer: not a stream
        reason = (
            f"{path.name} is a gzip-compressed parquet file: decompress it first "
            "(parquet compresses its own pages)"
        )
        yield 1, BadUnit(reason, b"", stops=True)
    elif shape == "jsonl":
        yield from _iter_jsonl(path, progress, limits)
    elif shape == "array":
        yield from _iter_array(path, limits)
    else:
        yield from _iter_document(path, limits)


def _iter_parquet(path: Path, progress: Progress | None) -> Iterator[tuple[int, Any]]:
    """The rows of a parquet file, each a unit: a dict from column name to value, read a
    batch of rows at a time (a row group is the most pyarrow holds), numbered from 1.
    Values become what JSON would hold (:func:`_plain`). A file pyarrow cannot open, or
    that breaks part way, ends in one :class:`BadUnit` naming the file."""
    import pyarrow as pa  # a dependency, but a heavy one: imported for parquet files only
    import pyarrow.parquet as pq

    broken = (pa.ArrowException, OSError, ValueError, EOFError)
    try:
        handle = pq.ParquetFile(path)
    except broken as exc:
        reason = f"parquet file {path.name} cannot be read (corrupt or truncated): {exc}"
        yield 1, BadUnit(reason, b"", stops=True)
        return
    position = 0
    try:
        total = max(handle.metadata.num_rows, 1)
        size = path.stat().st_size
        for batch in handle.iter_batches(batch_size=_PARQUET_BATCH):
            for row in batch.to_pylist(maps_as_pydicts="lossy"):
                position += 1
                yield position, {str(key): _plain(value) for key, value in row.items()}
            if progress is not None:
                progress(min(size * position // total, size))
    except broken as exc:
        reason = (
            f"parquet file {path.name} is corrupt or truncated after row {position}: "
            f"{type(exc).__name__}: {exc}"
        )
        yield position + 1, BadUnit(reason, b"", stops=True)
    finally:
        handle.close()


def _plain(value: Any) -> Any:
    """A parquet value as JSON would hold it: structs and maps as dicts, lists as lists,
    times as ISO 8601 text, a duration as seconds, decimals as numbers, bytes as text
    (base64 when not UTF-8). A NaN float is None: it is how pandas writes a missing
    number, and parquet's own missing value is None too."""
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, Decimal):
        return float(value) if value.is_finite() else str(value)
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return base64.b64encode(value).decode("ascii")
    if isinstance(value, uuid.UUID):
        return str(value)
    return str(value)


def _parsed(raw: bytes) -> Any:
    """The unit a line holds, or why it holds none."""
    try:
        return loads(raw)
    except UnicodeDecodeError as exc:
        return BadUnit(f"invalid UTF-8: {exc.reason}", raw)
    except RecursionError:
        return BadUnit("JSON nested too deeply", raw)
    except ValueError as exc:
        return BadUnit(f"invalid JSON: {exc}", raw)


def _iter_jsonl(path: Path, progress: Progress | None, limits: Limits) -> Iterator[tuple[int, Any]]:
    cap = limits.max_record_bytes
    with open_binary(path, limits) as handle:
        line_no = 0
        while True:
            if progress is not None and line_no % 8192 == 0:
                progress(handle.raw.position())
            try:
                raw = handle.readline(cap + 1)
                if len(raw) > cap and raw[-1:] != b"\n":
                    size = len(raw) + _skip_line(handle)
                    line_no += 1
                    yield (
                        line_no,
                        BadUnit(
                            f"record of {size} bytes or more, over the {cap}-byte limit "
                            "(--max-record-bytes)",
                            raw[:EXCERPT_CHARS],
                        ),
                    )
                    continue
                if raw[-1:] != b"\n" and (cut_at := handle.raw.cut_at) is not None:
                    # the stream ends inside this line (or, empty, just after the last):
                    # whatever it holds is a part of a record, never a record
                    yield line_no + 1, _cut(cut_at, f"line {line_no}", raw[:EXCERPT_CHARS])
                    return
                if not raw:
                    return
                line_no += 1
                if not raw.strip():
                    line_no += _skip_blank(handle)
                    continue
            except (*_BROKEN, LimitExceeded) as exc:
                yield line_no + 1, _broken(exc, handle, f"line {line_no}")
                return
            try:  # inline, not through _parsed: this is the loop every line goes through
                yield line_no, loads(raw)
            except UnicodeDecodeError as exc:
                yield line_no, BadUnit(f"invalid UTF-8: {exc.reason}", raw)
            except RecursionError:
                yield line_no, BadUnit("JSON nested too deeply", raw)
            except ValueError as exc:
                yield line_no, BadUnit(f"invalid JSON: {exc}", raw)


def _skip_line(handle: _Stream) -> int:
    """Read past the rest of an over-long line, a chunk at a time; its bytes."""
    skipped = 0
    while chunk := handle.readline(1 << 20):
        skipped += len(chunk)
        if chunk[-1:] == b"\n":
            break
    return skipped


_BLANK = b" \t\r\n"


def _skip_blank(handle: _Stream) -> int:
    """After a blank line: skip the blank lines that follow it a buffer at a time (a file
    of nothing but newlines is read at the speed of the disk); how many were skipped."""
    skipped = 0
    while True:
        ahead = handle.peek(1 << 16)
        rest = ahead.lstrip(_BLANK)
        # up to the last newline of the blank run: the next line's own indent stays
        cut = ahead.rfind(b"\n", 0, len(ahead) - len(rest)) + 1
        if cut == 0:
            return skipped
        skipped += ahead.count(b"\n", 0, cut)
        handle.read(cut)
        if rest:
            return skipped


def _iter_array(path: Path, limits: Limits, skip: int | None = None) -> Iterator[tuple[int, Any]]:
    """The elements of a JSON array file after the first ``skip``. The C parser refuses
    an integer past 64 bits (valid JSON): the rest of the file is then read again by
    ijson's pure-Python parser, which has no such limit."""
    items = ijson.items if skip is None else ijson.get_backend("python").items
    with open_binary(path, limits) as handle:
        # ijson builds an element whole before it hands it over: the stream itself stops
        # once more than the cap (and what ijson reads ahead) was read since the last one
        handle.raw.unit_cap = limits.max_record_bytes + (2 << 20)
        position = 0
        try:
            for position, item in enumerate(items(handle, "item", use_float=True), 1):
                if position > (skip or 0):
                    yield position, item
                handle.raw.mark = handle.raw.given
        except (LimitExceeded, *_BROKEN) as exc:
            yield position + 1, _broken(exc, handle, f"element {position}")
        except (ijson.JSONError, ValueError) as exc:
            if "integer overflow" in str(exc) and skip is None:
                yield from _iter_array(path, limits, skip=position)
                return
            if (cut_at := handle.raw.cut_at) is not None:
                yield position + 1, _cut(cut_at, f"element {position}")
                return
            reason = f"JSON array is truncated or invalid after element {position}: {exc}"
            yield position + 1, BadUnit(reason, "")


def _iter_document(path: Path, limits: Limits) -> Iterator[tuple[int, Any]]:
    cap = limits.max_record_bytes
    with open_binary(path, limits) as handle:
        try:
            raw = handle.read(cap + 1)
            if len(raw) > cap:  # the rest is not read: a document is one unit
                yield (
                    1,
                    BadUnit(
                        f"document over the {cap}-byte limit (--max-record-bytes)",
                        raw[:EXCERPT_CHARS],
                    ),
                )
                return
        except (*_BROKEN, LimitExceeded) as exc:
            yield 1, _broken(exc, handle, "the start of the document")
            return
        cut_at = handle.raw.cut_at
    if cut_at is not None:  # the documents before the cut, and the cut
        yield from _iter_documents(raw, "", cut_at)
        return
    unit = _parsed(raw)
    if isinstance(unit, BadUnit) and unit.reason.startswith("invalid JSON:"):
        # documents one after another, as a console exporter prints them, or one broken
        reason = unit.reason.replace("invalid JSON:", "invalid JSON document:")
        yield from _iter_documents(raw, reason)
        return
    if isinstance(unit, BadUnit):
        unit.raw = excerpt(raw)
    yield 1, unit


def _iter_documents(
    raw: bytes, invalid: str, cut_at: int | None = None
) -> Iterator[tuple[int, Any]]:
    """JSON documents one after another (what OpenTelemetry's ``ConsoleSpanExporter``
    prints: a pretty-printed object a span), numbered from 1; ``invalid`` is the reason
    given when not even the first is whole. ``cut_at``: ``raw`` is what a gzip stream cut
    at that byte held, and the document the cut falls in is quarantined as cut."""
    position = 0
    try:
        documents = ijson.items(io.BytesIO(raw), "", multiple_values=True, use_float=True)
        for position, document in enumerate(documents, 1):
            yield position, document
    except (ijson.JSONError, ValueError, RecursionError) as exc:
        if cut_at is None and position == 0:
            yield 1, BadUnit(invalid, excerpt(raw))
        elif cut_at is None:
            yield position + 1, BadUnit(f"JSON document {position + 1} is invalid: {exc}", "")
        else:
            after = f"document {position}" if position else "the start of the document"
            yield position + 1, _cut(cut_at, after, "" if position else excerpt(raw))
        return
    if cut_at is not None:
        yield position + 1, _cut(cut_at, f"document {position}")
