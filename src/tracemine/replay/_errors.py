"""What replay raises.

    TracemineError
    ├── InputError
    │   └── CassetteError       a cassette file cannot be read (names file, line and field)
    └── ReplayMiss              a call the cassette cannot answer (never sent live instead)
    ReplayedToolError           a recorded tool error whose exception type cannot be rebuilt
    ReplayedProtocolError       the same, for a recorded protocol (transport) error

A recorded error is raised again as its own type when that type is already imported and
takes the message as its one argument; otherwise as one of the two stand-ins above, which
keep the recorded type name, message and code.
"""

from __future__ import annotations

import ast
import builtins
import sys
from dataclasses import dataclass
from typing import Any

from tracemine.errors import InputError, TracemineError


class CassetteError(InputError):
    """A cassette file is missing where it must exist, or cannot be read."""


class ReplayMiss(TracemineError):
    """No recorded call answers this one. Carries the tool, the canonical arguments, the
    key, and the nearest recorded key with the arguments that differ."""

    def __init__(
        self,
        message: str,
        *,
        tool: str,
        arguments: str,
        key: str,
        nearest: str | None = None,
        differences: list[tuple[str, str | None, str | None]] | None = None,
    ) -> None:
        super().__init__(message)
        self.tool, self.arguments, self.key = tool, arguments, key
        self.nearest = nearest
        self.differences = differences or []


@dataclass
class ErrorData:
    """The code and message of a replayed protocol error (the shape of MCP's ``ErrorData``)."""

    code: int | None
    message: str


class ReplayedToolError(Exception):
    """A recorded tool error, raised again when its own type cannot be rebuilt."""

    def __init__(self, error_type: str | None, message: str, code: int | None = None) -> None:
        super().__init__(f"{error_type or 'error'}: {message}")
        self.error_type, self.message = error_type, message
        self.error = ErrorData(code, message)


class ReplayedProtocolError(ReplayedToolError):
    """A recorded protocol error (the session raised instead of answering)."""


def type_name(exc: BaseException) -> str:
    cls, name = type(exc), type(exc).__qualname__
    return name if cls.__module__ == "builtins" else f"{cls.__module__}.{name}"


def error_code(exc: BaseException) -> int | None:
    """The JSON-RPC code of an exception that carries one (``McpError.error.code``)."""
    code = getattr(getattr(exc, "error", None), "code", None)
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def _resolve(name: str) -> type[BaseException] | None:
    """The exception class called ``name``, looked up only among builtins and modules
    already imported: reading a cassette never imports code."""
    module, _, qualname = name.rpartition(".")
    owner: Any = builtins if not module else sys.modules.get(module)
    for part in qualname.split("."):
        owner = getattr(owner, part, None)
    if isinstance(owner, type) and issubclass(owner, Exception):
        return owner
    return None


def rebuild(
    error_type: str | None, message: str, code: int | None, *, protocol: bool
) -> BaseException:
    """The exception a recorded error stands for."""
    cls = _resolve(error_type) if error_type else None
    if cls is not None:
        if code is not None:  # built from the JSON-RPC error, as MCP's McpError is
            data = getattr(sys.modules.get("mcp.types"), "ErrorData", ErrorData)
            try:
                built = cls(data(code=code, message=message))
                if str(built) == message:
                    return built
            except Exception:
                pass
        try:
            exc = cls(message)
        except Exception:
            exc = None
        if exc is not None and str(exc) != message:  # KeyError shows its argument's repr
            try:
                again = cls(ast.literal_eval(message))
                if str(again) == message:
                    return again
            except Exception:
                pass
        if exc is not None:
            return exc
    stand_in = ReplayedProtocolError if protocol else ReplayedToolError
    return stand_in(error_type, message, code)


_DEFAULT_ERRORS = {"timeout": "TimeoutError", "cancelled": "CancelledError"}
_DEFAULT_MESSAGES = {"missing": "the recorded call never got a result",
                     "unknown": "the recording does not say how the call ended"}  # fmt: skip


def recorded_error(record: dict[str, Any]) -> BaseException:
    """The exception a recorded call that did not succeed stands for."""
    status = record["status"]
    return rebuild(record.get("error_type") or _DEFAULT_ERRORS.get(status),
                   record.get("error_message") or _DEFAULT_MESSAGES.get(status, status),
                   record.get("error_code"),
                   protocol=status != "tool_error")  # fmt: skip
