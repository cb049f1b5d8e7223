"""A LangChain / LangGraph tool wrapper that checks each tool result with a :class:`Monitor`.

Wrap the tools you hand to the model or to a LangGraph ``ToolNode``::

    tools = [MonitoredTool(tool, monitor) for tool in tools]

A call made with a tool call (what ``ToolNode`` and ``AIMessage.tool_calls`` give) comes
back as the tool's own ``ToolMessage`` with the note after its content when a contract is
violated (``receipt.annotate``; a list of content blocks gets the note as one more text
block). The content is otherwise as the tool made it, the artifact, status and ids are
untouched, and the note is a trailer every reader of results cuts off. A call made with
plain arguments returns the tool's output unchanged. Either way the receipt is
``last_receipt`` and goes to ``on_receipt``. A tool that raises raises as before, and
leaves ``last_receipt`` None. Wrapping a tool the contracts say nothing about warns.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from typing import Any

from tracemine.integrations._common import RunSource, current_run, missing
from tracemine.monitor import Monitor, Receipt
from tracemine.monitor.hooks import as_json

try:
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import BaseTool
    from pydantic import ConfigDict, PrivateAttr
except ImportError:
    raise missing(__name__, "langchain", "langchain-core") from None

__all__ = ["MonitoredTool"]


class MonitoredTool(BaseTool):
    """``tool`` with its results checked by ``monitor``; same name, description, schema.

    ``agent_run``: a :class:`~tracemine.monitor.Run` (or a callable giving the current
    one) to record the calls into for :meth:`Monitor.finalize`.

    >>> node = ToolNode([MonitoredTool(get_order, monitor)])  # doctest: +SKIP
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    tool: BaseTool
    monitor: Monitor
    agent_run: Any = None
    on_receipt: Callable[[Receipt], Any] | None = None
    _last: Receipt | None = PrivateAttr(default=None)

    def __init__(
        self,
        tool: BaseTool,
        monitor: Monitor,
        *,
        agent_run: RunSource = None,
        on_receipt: Callable[[Receipt], Any] | None = None,
    ) -> None:
        super().__init__(
            name=tool.name, description=tool.description, args_schema=tool.args_schema,
            return_direct=tool.return_direct, response_format=tool.response_format,
            tool=tool, monitor=monitor, agent_run=agent_run, on_receipt=on_receipt,
        )  # fmt: skip
        if tool.name not in monitor.tools:
            # said where the tool is wrapped: otherwise every call passes, coverage 'unknown'
            warnings.warn(
                f"MonitoredTool: the contracts hold none for tool {tool.name!r}: its results "
                "are not checked (receipts say coverage 'unknown'); contracts are for "
                f"{_names(monitor.tools)}",
                UserWarning,
                stacklevel=2,
            )

    @property
    def last_receipt(self) -> Receipt | None:
        """The receipt of the latest call."""
        return self._last

    def run(self, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
        """The wrapped tool's ``run`` (which ``invoke`` calls), its result checked."""
        self._last = None  # a tool that raises leaves no receipt, not the previous call's
        output = self.tool.run(tool_input, *args, **kwargs)
        return self._checked(tool_input, output, kwargs.get("tool_call_id"))

    async def arun(self, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
        """The wrapped tool's ``arun`` (which ``ainvoke`` calls), its result checked."""
        self._last = None
        output = await self.tool.arun(tool_input, *args, **kwargs)
        return self._checked(tool_input, output, kwargs.get("tool_call_id"))

    def _run(self, *args: Any, **kwargs: Any) -> Any:  # never reached: run() is the wrapper's
        return self.tool._run(*args, **kwargs)

    def _checked(self, tool_input: Any, output: Any, call_id: Any) -> Any:
        try:
            message = output if isinstance(output, ToolMessage) else None
            result = as_json(output) if message is None else _text(message.content)
            status = "tool_error" if message is not None and message.status == "error" else "ok"
            run = current_run(self.agent_run)
            if run is not None:
                run.record_call(call_id, self.name, tool_input)
            receipt = self.monitor.check(self.name, tool_input, result, call_id=call_id,
                                         run=run, status=status)  # fmt: skip
            self._last = receipt
            if self.on_receipt is not None:
                self.on_receipt(receipt)
            if message is None or receipt.ok:
                return output
            return message.model_copy(update={"content": _annotated(message.content, receipt)})
        except Exception:  # advisory: the tool's result goes back whatever the monitor did
            return output


def _names(tools: Iterable[str]) -> str:
    names = sorted(tools)
    shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    return shown or "no tool"


def _text(content: Any) -> Any:
    """The text a model reads from a message's content (text blocks joined)."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "\n".join(parts)


def _annotated(content: Any, receipt: Receipt) -> Any:
    if isinstance(content, str):
        return receipt.annotate(content)
    return [*content, {"type": "text", "text": receipt.note()}]
