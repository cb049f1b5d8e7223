"""Recording tool calls into a cassette.

:class:`Recorder` sits where :func:`tracemine.monitor.hooks.guard` sits: a decorator on a
Python tool function (sync or async), or a wrapper around an MCP client session's
``call_tool``. Every call is kept as a flat trace record; :meth:`Recorder.save` writes them.
:class:`~tracemine.replay.Player` is a Recorder that answers calls from a cassette first.
"""

from __future__ import annotations

import functools
import inspect
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from tracemine.monitor.hooks import _arguments, as_json, described
from tracemine.replay._canonical import Ignore
from tracemine.replay._cassette import Cassette, merged_ignore
from tracemine.replay._errors import error_code, recorded_error, type_name
from tracemine.replay._session import RecordingSession
from tracemine.replay._step import Step


def _default(value: Any) -> Any:
    viewed = as_json(value)
    return viewed if viewed is not value else str(value)


def _bound(signature: inspect.Signature | None, args: Any, kwargs: dict[str, Any]) -> Any:
    # agents call tools with keyword arguments: those are the arguments, no binding needed
    return kwargs if not args else _arguments(signature, args, kwargs)


def snapshot(value: Any) -> Any:
    """A JSON copy of ``value``: what the cassette keeps, safe from later mutation (its
    ``repr`` when it has no JSON form: recording never fails the tool call)."""
    try:
        return json.loads(json.dumps(value, default=_default, ensure_ascii=False))
    except (TypeError, ValueError, RecursionError):
        return repr(value)


class Recorder:
    """Record every call of the wrapped tools as a flat trace record.

    >>> recorder = Recorder("cassettes/order.jsonl", ignore={"search": ["request_id"]})
    >>> @recorder.guard()  # doctest: +SKIP
    ... def get_order(order_id: str) -> dict: ...
    >>> session = recorder.session(mcp_session)  # doctest: +SKIP
    >>> recorder.save()  # doctest: +SKIP
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        ignore: Ignore | None = None,
        run_id: str | None = None,
        task_id: str | None = None,
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.ignore = merged_ignore(ignore)
        self.run_id = run_id or (self.path.stem if self.path else "run")
        self.task_id = task_id
        # a live call's record, or (step, index) of a replayed one: built when asked for
        self._log: list[dict[str, Any] | tuple[Step, int]] = []
        self.live_calls = 0
        self.replayed_calls = 0
        self._seq = 0
        self._lock = threading.Lock()

    # -- what subclasses decide ----------------------------------------------------------
    def begin(self, tool: str, arguments: dict[str, Any]) -> Step:
        """Number the call and decide who answers it (a Recorder: always the live tool)."""
        with self._lock:
            seq, self._seq = self._seq, self._seq + 1
        return Step(seq, tool, arguments)

    def replayed(self, step: Step) -> tuple[dict[str, Any], Any]:  # pragma: no cover
        """The record answering ``step`` and a fresh copy of its result (Player's part)."""
        raise NotImplementedError

    def replay_record(self, step: Step, index: int) -> dict[str, Any]:  # pragma: no cover
        """This run's record of a replayed call (Player's part)."""
        raise NotImplementedError

    @property
    def records(self) -> list[dict[str, Any]]:
        """The calls of this run so far, in call order, as flat trace records."""
        with self._lock:
            log = list(self._log)
        out = [e if isinstance(e, dict) else self.replay_record(*e) for e in log]
        return sorted(out, key=lambda record: record["seq"])

    def save(self, path: str | Path | None = None) -> Path | None:
        """Write what was recorded to ``path`` (default: the recorder's own)."""
        target = Path(path) if path is not None else self.path
        if target is None:
            return None
        return Cassette(target, self.records, self.ignore).save()

    def close(self) -> Path | None:
        """Save (a :class:`Player` also fails a run whose misses were swallowed)."""
        return self.save()

    def __enter__(self) -> Recorder:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.save()

    # -- keeping records -----------------------------------------------------------------
    def record_of(
        self, step: Step, origin: str, arguments: Any, fields: dict[str, Any]
    ) -> dict[str, Any]:
        record: dict[str, Any] = {"run_id": self.run_id}
        if self.task_id is not None:
            record["task_id"] = self.task_id
        record.update(seq=step.seq, call_id=f"call-{step.seq}", tool=step.tool)
        record["arguments"] = arguments
        record.update(fields)
        record["origin"] = origin
        return record

    def keep_live(self, step: Step, started: float, result: Any = None,
                  error: BaseException | None = None, status: str = "ok",
                  raw: str | None = None) -> None:  # fmt: skip
        fields: dict[str, Any] = {"status": status}
        if error is not None:
            fields.update(error_type=type_name(error), error_message=str(error))
            if error_code(error) is not None:
                fields["error_code"] = error_code(error)
        else:
            fields["result"] = snapshot(result)
        if raw is not None:
            fields["result_raw"] = raw
        fields["duration_ms"] = round((time.perf_counter() - started) * 1000.0, 3)
        arguments = snapshot(step.arguments)
        if not isinstance(arguments, dict):  # no JSON form: kept readable, and loadable
            arguments = {"unserializable_arguments": arguments}
        record = self.record_of(step, "live", arguments, fields)
        with self._lock:
            self.live_calls += 1
            self._log.append(record)

    # -- Python tool functions -----------------------------------------------------------
    def guard(self, tool: str | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorate a tool function (``tool`` defaults to its name). Recording, it returns
        what the function returns; replaying, the recorded JSON result, and a recorded
        error is raised again."""

        def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
            name, signature = described(fn, tool)

            if inspect.iscoroutinefunction(fn):

                @functools.wraps(fn)
                async def wrapper(*args: Any, **kwargs: Any) -> Any:
                    step = self.begin(name, _bound(signature, args, kwargs))
                    if step.recorded is not None:
                        return self.answer(step)
                    started = time.perf_counter()
                    try:
                        result = await fn(*args, **kwargs)
                    except Exception as exc:
                        self.keep_live(step, started, error=exc, status="tool_error")
                        raise
                    self.keep_live(step, started, as_json(result))
                    return result

            else:

                @functools.wraps(fn)
                def wrapper(*args: Any, **kwargs: Any) -> Any:
                    step = self.begin(name, _bound(signature, args, kwargs))
                    if step.recorded is not None:
                        return self.answer(step)
                    started = time.perf_counter()
                    try:
                        result = fn(*args, **kwargs)
                    except Exception as exc:
                        self.keep_live(step, started, error=exc, status="tool_error")
                        raise
                    self.keep_live(step, started, as_json(result))
                    return result

            return wrapper

        return decorate

    def answer(self, step: Step) -> Any:
        """The recorded answer to ``step`` as a tool function gives it: the result, or the
        recorded error raised again."""
        record, result = self.replayed(step)
        if record["status"] == "ok":
            return result
        raise recorded_error(record)

    # -- MCP client sessions -------------------------------------------------------------
    def session(
        self, session: Any = None, *, result_factory: Callable[[Any], Any] | None = None
    ) -> Any:
        """Wrap an MCP client session (anything with an async ``call_tool(name,
        arguments)``); every other attribute is the session's own. A replayed answer is
        built by ``result_factory`` (say ``CallToolResult.model_validate``), else by the
        MCP SDK's type when it is imported, else as an attribute-access dict."""
        return RecordingSession(self, session, result_factory)
