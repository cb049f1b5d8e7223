"""A tool output guardrail for the OpenAI Agents SDK that checks each function tool's output.

Attach it where the SDK takes tool output guardrails::

    guardrail = monitor_guardrail(monitor)
    @function_tool(tool_output_guardrails=[guardrail])
    def get_order(order_id: str) -> dict: ...

The guardrail checks the tool's name, its arguments (``ToolContext.tool_arguments``) and
its output with :meth:`Monitor.check` under the tool call's id. The receipt is the
guardrail's ``output_info``, so it is kept in ``RunResult.tool_output_guardrail_results``.

- Nothing looked wrong: the output goes through untouched (``allow``).
- Advisory (the default), a contract violated: the model reads the output text
  unchanged with the receipt's note after it (``receipt.annotate``). A guardrail's one way
  to change what the model reads is the SDK's ``reject_content(message)``; the message is
  the output followed by the note trailer, which every reader of results cuts off, so the
  recorded evidence stays what the tool returned.
- ``strict=True``, a contract violated: the output is rejected; the model reads the note
  instead.

A tool that raised answers with the SDK's default error text, which the guardrail checks as
a tool error (``status="tool_error"``: the result's contracts are not evaluated, and a run
records the error for the gate); a custom ``failure_error_function``'s text is checked as
the tool's output.
"""

from __future__ import annotations

from typing import Any

from tracemine.integrations._common import (
    RunSource,
    as_text,
    current_run,
    missing,
    parse_arguments,
)
from tracemine.monitor import Monitor, Receipt, Unevaluated
from tracemine.monitor.hooks import as_json

try:
    from agents import (
        ToolGuardrailFunctionOutput,
        ToolOutputGuardrail,
        ToolOutputGuardrailData,
        default_tool_error_function,
    )
except ImportError:
    raise missing(__name__, "openai-agents", "openai-agents") from None

__all__ = ["guardrail_receipt", "monitor_guardrail"]

# A function tool that raises answers the model with the SDK's default error text, and the
# output guardrails then see that text as the output: it is a tool error, not a result.
_SDK_ERROR = default_tool_error_function(None, Exception(""))  # type: ignore[arg-type]


def monitor_guardrail(
    monitor: Monitor, *, strict: bool = False, run: RunSource = None, name: str = "tracemine"
) -> ToolOutputGuardrail[Any]:
    """A tool output guardrail running ``monitor`` on every output of the tools it is
    attached to. ``run``: a :class:`~tracemine.monitor.Run` (or a callable giving the
    current one) to record the calls into for :meth:`Monitor.finalize`.

    >>> @function_tool(tool_output_guardrails=[monitor_guardrail(monitor)])  # doctest: +SKIP
    """

    def check(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        receipt = guardrail_receipt(monitor, data, current_run(run))
        if receipt.ok:
            return ToolGuardrailFunctionOutput.allow(output_info=receipt)
        if strict:
            return ToolGuardrailFunctionOutput.reject_content(receipt.note(), output_info=receipt)
        message = receipt.annotate(as_text(as_json(data.output)))
        return ToolGuardrailFunctionOutput.reject_content(message, output_info=receipt)

    return ToolOutputGuardrail(guardrail_function=check, name=name)


def guardrail_receipt(monitor: Monitor, data: Any, run: Any = None) -> Receipt:
    """The receipt for the tool call a guardrail sees: :meth:`Monitor.check` on the tool
    context's name, arguments and call id and the tool's output. Never raises."""
    try:
        context = data.context
        tool, call_id = context.tool_name, context.tool_call_id
        arguments = parse_arguments(context.tool_arguments)
        output = as_json(data.output)
    except Exception as exc:  # advisory: a context the SDK shaped otherwise is no reason to fail
        reason = f"tool call not readable ({type(exc).__name__})"
        return Receipt("", coverage="partial", not_evaluated=(Unevaluated("*", "*", reason),))
    status = "tool_error" if isinstance(output, str) and output.startswith(_SDK_ERROR) else "ok"
    if run is not None:
        run.record_call(call_id, tool, arguments)
    return monitor.check(tool, arguments, output, call_id=call_id, run=run, status=status)
