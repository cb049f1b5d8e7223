"""Putting the monitor between a tool and the model without changing either.

- :func:`guard` decorates a Python tool function (sync or async): the function's return
  value comes back unchanged; the receipt goes to ``fn.last_receipt``, ``fn.receipts``
  (the latest 100), :func:`last_receipt` (per thread / task) and ``on_receipt``.
- :class:`MonitoredSession` wraps an MCP client session. It is duck-typed — any object with
  an async ``call_tool(name, arguments)`` returning something with ``structuredContent``,
  ``content`` and ``isError`` — so the MCP SDK stays an optional extra.

Tool exceptions propagate untouched (recorded in the run as ``tool_error`` first). The
hooks see no call ids, so a run they record into should be started with ``declared=False``
(the default): each checked call is then recorded as it happens.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections import deque
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, Protocol

from tracemine.model.result import result_value
from tracemine.monitor._receipt import Receipt
from tracemine.monitor._run import Run

_KEEP = 100
_last: ContextVar[Receipt | None] = ContextVar("tracemine_last_receipt", default=None)
RunSource = Run | Callable[[], Run | None] | None


class Checker(Protocol):
    """What a hook needs of a :class:`~tracemine.monitor.Monitor`: its ``check``. The
    hooks take the monitor as an argument and never build one, so they name only this."""

    def check(
        self,
        tool: str,
        arguments: Any,
        result: Any,
        *,
        call_id: str | None = None,
        run: Run | None = None,
        status: str | None = "ok",
    ) -> Receipt: ...


def last_receipt() -> Receipt | None:
    """The receipt of the latest guarded call in this thread or asyncio task."""
    return _last.get()


def _current(run: RunSource) -> Run | None:
    if run is None or isinstance(run, Run):
        return run
    try:
        found = run()
    except Exception:
        return None
    return found if isinstance(found, Run) else None


def as_json(value: Any) -> Any:
    """A JSON view of what a Python tool returned (pydantic models, dataclasses); the
    value itself is left alone."""
    try:
        if _is_pydantic(value):
            return value.model_dump(mode="json")
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return dataclasses.asdict(value)
    except Exception:
        pass
    return value


def _is_pydantic(value: Any) -> bool:
    """A pydantic model, told by its class (pydantic is not imported here): any other
    object with a ``model_dump`` attribute is the tool's business, not called."""
    return any(
        c.__name__ == "BaseModel" and c.__module__.startswith("pydantic")
        for c in type(value).__mro__
    )


def _arguments(signature: inspect.Signature | None, args: Any, kwargs: Any) -> dict[str, Any]:
    if signature is None:
        return dict(kwargs)
    try:
        bound = signature.bind(*args, **kwargs).arguments
    except TypeError:
        return dict(kwargs)
    out: dict[str, Any] = {}
    for name, value in bound.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            out.update(value)
        elif name not in ("self", "cls"):
            out[name] = list(value) if kind is inspect.Parameter.VAR_POSITIONAL else value
    return out


def described(fn: Callable[..., Any], tool: str | None) -> tuple[str, inspect.Signature | None]:
    """The tool name a decorated function answers to, and its signature when it has one."""
    name = str(tool or getattr(fn, "__name__", "tool"))
    try:
        return name, inspect.signature(fn)
    except (TypeError, ValueError):
        return name, None


def guard(
    monitor: Checker,
    tool: str | None = None,
    *,
    run: RunSource = None,
    on_receipt: Callable[[Receipt], Any] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a tool function so every call is checked (``tool`` defaults to its name).
    ``run`` is a :class:`Run` or a function returning the current one.

    >>> @monitor.guard("get_order")  # doctest: +SKIP
    ... def get_order(order_id: str) -> dict: ...
    >>> order = get_order(order_id="#W1"); get_order.last_receipt.ok  # doctest: +SKIP
    """

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        name, signature = described(fn, tool)
        receipts: deque[Receipt] = deque(maxlen=_KEEP)

        def deliver(args: Any, kwargs: Any, result: Any, status: str) -> None:
            try:
                arguments = _arguments(signature, args, kwargs)
                receipt = monitor.check(name, arguments, as_json(result), run=_current(run),
                                        status=status)  # fmt: skip
                receipts.append(receipt)
                wrapper.last_receipt = receipt  # type: ignore[attr-defined]
                _last.set(receipt)
                if on_receipt is not None:
                    on_receipt(receipt)
            except Exception:  # advisory: a failing hook never reaches the tool's caller
                pass

        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def wrapper(*args: Any, **kwargs: Any) -> Any:
                try:
                    result = await fn(*args, **kwargs)
                except Exception as exc:
                    deliver(args, kwargs, repr(exc), "tool_error")
                    raise
                deliver(args, kwargs, result, "ok")
                return result

        else:

            @functools.wraps(fn)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                try:
                    result = fn(*args, **kwargs)
                except Exception as exc:
                    deliver(args, kwargs, repr(exc), "tool_error")
                    raise
                deliver(args, kwargs, result, "ok")
                return result

        wrapper.receipts = receipts  # type: ignore[attr-defined]
        wrapper.last_receipt = None  # type: ignore[attr-defined]
        return wrapper

    return decorate


def mcp_payload(result: Any) -> tuple[Any, str]:
    """The JSON value and status a ``CallToolResult`` carries, as the ``mcp`` reader
    reads it from a transcript: ``structuredContent`` when present, else the text blocks
    joined by newlines and read as every result text is
    (:func:`tracemine.model.result.result_value`), else the blocks themselves. ``isError``
    makes it a ``tool_error``."""

    def field(name: str, attribute: str) -> Any:
        # a dict has the wire's camelCase keys; the SDK's objects, snake_case attributes
        # since mcp 2 (``is_error``), camelCase before (``isError``)
        if isinstance(result, dict):
            return result.get(name)
        found = getattr(result, attribute, None)
        return found if found is not None else getattr(result, name, None)

    status = "tool_error" if field("isError", "is_error") is True else "ok"
    structured = field("structuredContent", "structured_content")
    if structured is not None:
        return structured, status
    blocks = field("content", "content") or []
    texts = []
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else getattr(block, "type", None)
        text = block.get("text") if isinstance(block, dict) else getattr(block, "text", None)
        if kind == "text" and isinstance(text, str):
            texts.append(text)
    if texts:
        return result_value("\n".join(texts)), status
    return ([as_json(block) for block in blocks] or None), status


class MonitoredSession:
    """An MCP client session whose ``call_tool`` results are checked; every other
    attribute is the wrapped session's. Results come back exactly as the server sent them.

    >>> session = MonitoredSession(client_session, monitor, run=run)  # doctest: +SKIP
    >>> result = await session.call_tool("get_order", {"order_id": "#W1"})  # doctest: +SKIP
    >>> session.last_receipt.note()  # doctest: +SKIP
    """

    def __init__(
        self,
        session: Any,
        monitor: Checker,
        *,
        run: RunSource = None,
        on_receipt: Callable[[Receipt], Any] | None = None,
    ) -> None:
        self._session, self._monitor, self._run, self._on_receipt = (
            session,
            monitor,
            run,
            on_receipt,
        )
        self.receipts: deque[Receipt] = deque(maxlen=_KEEP)
        self.last_receipt: Receipt | None = None

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None = None, *args: Any, **kwargs: Any
    ) -> Any:
        result = await self._session.call_tool(name, arguments, *args, **kwargs)
        try:
            value, status = mcp_payload(result)
            receipt = self._monitor.check(name, arguments or {}, value, run=_current(self._run),
                                          status=status)  # fmt: skip
            self.receipts.append(receipt)
            self.last_receipt = receipt
            _last.set(receipt)
            if self._on_receipt is not None:
                self._on_receipt(receipt)
        except Exception:  # advisory: the server's answer always reaches the caller
            pass
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)
