"""The tool output guardrail in a real Agents SDK run, a scripted model calling the tool
(the SDK's own ``agents.testing.ScriptedModel``: no network)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call
from integration_calls import ARGS, BAD, GOOD

from tracemine.integrations.openai_agents import monitor_guardrail
from tracemine.model.result import NOTE_MARK, strip_note
from tracemine.monitor import Monitor, Run


def run_agent(monitor: Monitor, result: dict[str, Any], **options: Any) -> tuple[Any, str]:
    """Run an agent whose model calls get_order once; the result and the text the model
    read back as the tool's output."""

    @function_tool(tool_output_guardrails=[monitor_guardrail(monitor, **options)])
    def get_order(order_id: str) -> dict[str, Any]:
        """Look up an order by its id."""
        return result

    model = ScriptedModel([[function_call("get_order", ARGS, call_id="call_1")],
                           [assistant_message("done")]])  # fmt: skip
    agent = Agent(name="support", model=model, tools=[get_order])
    outcome = asyncio.run(Runner.run(agent, "where is my order?",
                                     run_config=RunConfig(tracing_disabled=True)))  # fmt: skip
    (read,) = [item["output"] for item in model.calls[1].input
               if isinstance(item, dict) and item.get("type") == "function_call_output"]  # fmt: skip
    return outcome, read


@pytest.mark.parametrize("result", [BAD, GOOD])
def test_the_guardrail_gives_the_verdict_monitor_check_gives(monitor: Monitor,
                                                             result: dict[str, Any]) -> None:  # fmt: skip
    outcome, _ = run_agent(monitor, result)
    (guardrail,) = outcome.tool_output_guardrail_results
    expected = monitor.check("get_order", ARGS, result, call_id="call_1")
    assert guardrail.output.output_info == expected
    assert guardrail.guardrail.get_name() == "tracemine"


def test_advisory_the_model_reads_the_output_unchanged_then_the_note(monitor: Monitor) -> None:
    outcome, read = run_agent(monitor, BAD)
    receipt = monitor.check("get_order", ARGS, BAD, call_id="call_1")
    assert read == receipt.annotate(json.dumps(BAD))
    assert json.loads(strip_note(read)) == BAD  # the evidence read back is what the tool returned
    assert outcome.final_output == "done"


def test_a_result_that_holds_goes_through_untouched(monitor: Monitor) -> None:
    outcome, read = run_agent(monitor, GOOD)
    assert NOTE_MARK not in read
    assert outcome.tool_output_guardrail_results[0].output.behavior["type"] == "allow"


def test_strict_rejects_the_content_and_gives_the_note(monitor: Monitor) -> None:
    _, read = run_agent(monitor, BAD, strict=True)
    assert read == monitor.check("get_order", ARGS, BAD).note()


def test_calls_are_recorded_into_a_run_for_the_gate(monitor: Monitor) -> None:
    run = monitor.start_run("r1", declared=True)
    run_agent(monitor, GOOD, run=lambda: run)
    assert isinstance(run, Run)
    verdict = monitor.finalize(run)
    assert verdict.complete and verdict.calls == 1


def test_a_tool_that_raised_is_checked_as_a_tool_error(monitor: Monitor) -> None:
    run = monitor.start_run("r1")

    @function_tool(tool_output_guardrails=[monitor_guardrail(monitor, run=run)])
    def get_order(order_id: str) -> dict[str, Any]:
        """Look up an order by its id."""
        raise ConnectionError("orders database unreachable")

    model = ScriptedModel([[function_call("get_order", ARGS, call_id="call_1")],
                           [assistant_message("done")]])  # fmt: skip
    agent = Agent(name="support", model=model, tools=[get_order])
    outcome = asyncio.run(Runner.run(agent, "where is my order?",
                                     run_config=RunConfig(tracing_disabled=True)))  # fmt: skip
    (guardrail,) = outcome.tool_output_guardrail_results
    text = model.calls[1].input[-1]["output"]
    expected = monitor.check("get_order", ARGS, text, call_id="call_1", status="tool_error")
    assert guardrail.output.output_info == expected
    assert expected != monitor.check("get_order", ARGS, text, call_id="call_1")
    verdict = monitor.finalize(run)
    assert not verdict.complete and [e.code for e in verdict.errors] == ["execution_error"]
