"""The cassette file: a flat-format trace with a header line.

    {"tracemine_cassette": 1, "ignore": {"search": ["request_id"]}}
    {"run_id": "r1", "seq": 0, "call_id": "call-0", "tool": "get_order",
     "arguments": {"order_id": "#W1"}, "status": "ok", "result": {...}, "duration_ms": 3.1}
    {"run_id": "r1", "seq": 1, "call_id": "call-1", "tool": "refund", "arguments": {...},
     "status": "tool_error", "error_type": "ValueError", "error_message": "too much"}

Every line after the header is a record of the flat trace format, so ``tracemine ingest``
and ``tracemine check`` read a cassette like any trace file (the flat reader skips the
header). Replay-only fields the reader ignores: ``origin`` (``live`` or ``replay``: how the
call was answered when it was recorded), ``error_code`` (a protocol error's code) and
``result_raw`` (an MCP ``CallToolResult`` exactly as it came, as JSON text).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracemine._atomic import write_atomic
from tracemine.replay._canonical import Ignore
from tracemine.replay._errors import CassetteError

FORMAT_VERSION = 1
HEADER_KEY = "tracemine_cassette"
STATUSES = ("ok", "tool_error", "protocol_error", "timeout", "cancelled", "denied", "missing",
            "unknown")  # fmt: skip


@dataclass
class Cassette:
    """The records of a cassette, in file order, and the arguments its keys ignore."""

    path: Path | None = None
    records: list[dict[str, Any]] = field(default_factory=list)
    ignore: dict[str, list[str]] = field(default_factory=dict)
    lines: list[int] = field(default_factory=list, repr=False)

    @classmethod
    def load(cls, path: str | Path) -> Cassette:
        """Read a cassette; :class:`CassetteError` names the line and field of bad input."""
        file = Path(path)
        try:
            text = file.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise CassetteError(f"{file}: no such cassette") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise CassetteError(f"{file}: cannot read cassette: {exc}") from None
        cassette = cls(path=file)
        # one record a line, split on "\n" only: str.splitlines also breaks at U+2028,
        # U+0085 …, which json.dumps(ensure_ascii=False) leaves raw inside strings
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                unit = json.loads(line)
            except ValueError as exc:
                raise CassetteError(f"{file}:{number}: not JSON ({exc})") from None
            if not isinstance(unit, dict):
                raise CassetteError(
                    f"{file}:{number}: expected one call per line as an object, "
                    f"got {type(unit).__name__}"
                )
            if HEADER_KEY in unit:
                cassette.ignore = _header_ignore(unit, f"{file}:{number}")
                continue
            cassette.records.append(_checked(unit, f"{file}:{number}"))
            cassette.lines.append(number)
        return cassette

    def save(self, path: str | Path | None = None) -> Path:
        """Write the cassette (atomically: a reader never sees half a file)."""
        target = Path(path) if path is not None else self.path
        if target is None:
            raise CassetteError("the cassette has no path to be saved to")
        target.parent.mkdir(parents=True, exist_ok=True)
        header = {HEADER_KEY: FORMAT_VERSION, "ignore": self.ignore}
        lines = [json.dumps(header, ensure_ascii=False)]
        lines += [json.dumps(r, ensure_ascii=False, default=str) for r in self.records]
        write_atomic(target, "\n".join(lines) + "\n")
        return target


def _header_ignore(unit: dict[str, Any], where: str) -> dict[str, list[str]]:
    version = unit[HEADER_KEY]
    if version != FORMAT_VERSION:
        raise CassetteError(
            f"{where}: field '{HEADER_KEY}': cassette format {version!r} is not known "
            f"(this tracemine reads {FORMAT_VERSION})"
        )
    ignore = unit.get("ignore") or {}
    if not isinstance(ignore, dict) or not all(
        isinstance(names, list) and all(isinstance(n, str) for n in names)
        for names in ignore.values()
    ):
        raise CassetteError(
            f"{where}: field 'ignore': expected an object mapping tool names to lists of "
            "argument names"
        )
    return {str(tool): list(names) for tool, names in ignore.items()}


def _checked(unit: dict[str, Any], where: str) -> dict[str, Any]:
    tool = unit.get("tool")
    if not isinstance(tool, str) or not tool:
        raise CassetteError(f"{where}: field 'tool': expected the tool's name, got {tool!r}")
    arguments = unit.get("arguments", {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            raise CassetteError(
                f"{where}: field 'arguments': expected a JSON object, got unparseable text"
            ) from None
    if arguments is not None and not isinstance(arguments, dict):
        raise CassetteError(
            f"{where}: field 'arguments': expected an object, got {type(arguments).__name__}"
        )
    status = unit.get("status", "ok")
    if status not in STATUSES:
        raise CassetteError(
            f"{where}: field 'status': expected one of {', '.join(STATUSES)}, got {status!r}"
        )
    if status == "ok" and "result" not in unit:
        raise CassetteError(f"{where}: field 'result': a call with status 'ok' needs a result")
    for name in ("error_message", "error_type", "result_raw"):
        if unit.get(name) is not None and not isinstance(unit[name], str):
            raise CassetteError(f"{where}: field '{name}': expected a string")
    code = unit.get("error_code")
    if code is not None and (not isinstance(code, int) or isinstance(code, bool)):
        raise CassetteError(f"{where}: field 'error_code': expected an integer, got {code!r}")
    return {**unit, "arguments": arguments or {}, "status": status}


def merged_ignore(*sources: Ignore | None) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for source in sources:
        for tool, names in (source or {}).items():
            known = out.setdefault(tool, [])
            known.extend(n for n in names if n not in known)
    return out


def run_ids(records: Iterable[Mapping[str, Any]]) -> set[str]:
    return {str(r.get("run_id")) for r in records}
