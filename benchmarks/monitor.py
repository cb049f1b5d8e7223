"""How long ``Monitor.check`` takes per call, next to fastjsonschema on the same result.

    python benchmarks/monitor.py [--calls 20000]

Prints p50 and p99 microseconds per check for an order result with 20 applicable
contracts, the time fastjsonschema needs to validate the equivalent JSON Schema (the
unary contracts; JSON Schema cannot say ``equals``, ``le`` or ``sum_equals``, so the
schema does slightly less work), and how both grow with 5, 20 and 80 contracts.

Then the cost of the same check through each integration, timed in the same loop as
``Monitor.check`` alone: the OpenTelemetry span processor (``on_end`` of a finished tool
span, making its ``tracemine.receipt`` span) against ``check`` on the span's result text,
the Agents SDK tool output guardrail against ``check`` on the tool's output, and
LangChain's ``MonitoredTool.invoke`` against the plain tool's ``invoke``.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fastjsonschema
from _results import Run, headline

from tracemine.model.contract import Contract, ContractFile
from tracemine.monitor import Monitor

ARGS = {"order_id": "#W0000001", "limit": 10}
RESULT: dict[str, Any] = {
    "order_id": "#W0000001",
    "status": "delivered",
    "currency": "USD",
    "total": 61.5,
    "created_at": "2024-05-01T10:20:30Z",
    "customer": {"id": "u_1234", "email": "someone@example.com"},
    "items": [{"sku": f"SKU-{i}", "qty": i + 1, "price": 4.1 * (i + 1)} for i in range(5)],
    "extra": {f"f{i}": i * 3 for i in range(30)},
}

BASE: list[tuple[str, list[str], dict[str, Any]]] = [
    ("present", ["result.order_id"], {}),
    ("pattern", ["result.order_id"], {"regex": "^#W[0-9]{7}$"}),
    ("one_of", ["result.status"], {"values": ["pending", "delivered", "cancelled"]}),
    ("type", ["result.total"], {"type": "number"}),
    ("non_negative", ["result.total"], {}),
    ("format", ["result.currency"], {"format": "currency"}),
    ("format", ["result.created_at"], {"format": "date-time"}),
    ("equals", ["result.order_id", "args.order_id"], {}),
    ("type", ["result.customer.id"], {"type": "string"}),
    ("non_empty", ["result.items"], {}),
    ("length", ["result.items"], {"min": 1, "max": 50}),
    ("type", ["result.items"], {"type": "array"}),
    ("positive", ["result.items[*].qty"], {}),
    ("non_negative", ["result.items[*].price"], {}),
    ("type", ["result.items[*].sku"], {"type": "string"}),
    ("le", ["len(result.items)", "args.limit"], {}),
    ("not_null", ["result.status"], {}),
    ("present", ["result.customer"], {}),
    ("range", ["result.total"], {"min": 0, "max": 100000}),
    ("sum_equals", ["sum(result.items[*].price)", "result.total"], {"tolerance": 0.01}),
]
EXTRA = [
    (kind, [f"result.extra.f{i}"], params)
    for i in range(30)
    for kind, params in (
        ("type", {"type": "integer"}),
        ("non_negative", {}),
        ("range", {"min": 0, "max": 1000}),
    )
]


def contracts(n: int) -> list[Contract]:
    chosen = (BASE + EXTRA)[:n] if n >= len(BASE) else BASE[:n]
    return [Contract(tool="get_order", side="result", kind=kind, paths=paths, params=params,
                     status="accepted") for kind, paths, params in chosen]  # fmt: skip


def schema_for(items: list[Contract]) -> dict[str, Any]:
    """The JSON Schema saying what the unary contracts say."""
    root: dict[str, Any] = {"type": "object"}
    for c in items:
        path = c.paths[0]
        if c.kind in ("equals", "le", "sum_equals") or path.startswith(("len(", "sum(")):
            continue
        node = root
        for step in path.removeprefix("result.").split("."):
            many = step.endswith("[*]")
            name = step.removesuffix("[*]")
            node.setdefault("type", "object")
            required = node.setdefault("required", [])
            if c.kind == "present" and name not in required:
                required.append(name)
            node = node.setdefault("properties", {}).setdefault(name, {})
            if many:
                node = node.setdefault("items", {})
        params = c.params
        fragment: dict[str, Any] = {
            "pattern": {"pattern": params.get("regex")},
            "one_of": {"enum": params.get("values")},
            "type": {"type": params.get("type")},
            "non_negative": {"minimum": 0},
            "positive": {"exclusiveMinimum": 0},
            "format": {"format": params.get("format")},
            "non_empty": {"minItems": 1},
            "length": {"minItems": params.get("min"), "maxItems": params.get("max")},
            "not_null": {"not": {"type": "null"}},
            "range": {"minimum": params.get("min"), "maximum": params.get("max")},
        }.get(c.kind, {})
        node.update(fragment)
    return root


def timings(*fns: Callable[[], Any], calls: int) -> list[tuple[float, float]]:
    """p50 and p99 µs of each function. The functions are timed in turn, call by call, so
    that a busy machine slows all of them alike and the comparison stays fair."""
    for _ in range(min(2000, calls)):
        for fn in fns:
            fn()
    samples: list[list[int]] = [[] for _ in fns]
    clock = time.perf_counter_ns
    for _ in range(calls):
        for fn, out in zip(fns, samples, strict=True):
            start = clock()
            fn()
            out.append(clock() - start)
    figures = []
    for out in samples:
        out.sort()
        figures.append((out[len(out) // 2] / 1000, out[int(len(out) * 0.99)] / 1000))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    options = parser.parse_args()
    calls, results = options.calls, Run("monitor")
    rows: list[dict[str, Any]] = []
    formats = {"currency": r"^[A-Z]{3}$"}
    print(f"{'contracts':>9} {'monitor p50':>12} {'p99':>8} {'fastjsonschema p50':>19} "
          f"{'p99':>8} {'p50 ratio':>10}   (µs per check, {calls} checks; ratio = monitor "
          "÷ fastjsonschema, timed in the same loop)")  # fmt: skip
    for n in (5, 20, 80):
        items = contracts(n)
        monitor = Monitor.from_dict(ContractFile(contracts=items).model_dump(mode="json"))
        receipt = monitor.check("get_order", ARGS, RESULT)
        assert receipt.ok and receipt.coverage == "full", receipt
        validate = fastjsonschema.compile(schema_for(items), formats=formats)
        validate(RESULT)
        (p50, p99), (s50, s99) = timings(
            lambda m=monitor: m.check("get_order", ARGS, RESULT),
            lambda v=validate: v(RESULT),
            calls=calls,
        )
        print(f"{n:>9} {p50:>12.1f} {p99:>8.1f} {s50:>19.1f} {s99:>8.1f} {p50 / s50:>9.2f}×")
        rows.append({"contracts": n, "monitor_p50_us": round(p50, 1), "monitor_p99_us": round(p99, 1),
                     "fastjsonschema_p50_us": round(s50, 1), "fastjsonschema_p99_us": round(s99, 1),
                     "ratio_p50": round(p50 / s50, 2)})  # fmt: skip
    bad = dict(RESULT, items=[], total=-1)
    monitor = Monitor.from_dict(ContractFile(contracts=contracts(20)).model_dump(mode="json"))
    broken = len(monitor.check("get_order", ARGS, bad).violations)
    ((p50, p99),) = timings(lambda: monitor.check("get_order", ARGS, bad), calls=calls // 4)
    print(f"20 contracts, result violating {broken}: p50 {p50:.1f} µs, p99 {p99:.1f} µs")
    other = [{"case": f"20 contracts, result violating {broken}", "p50_us": round(p50, 1),
              "p99_us": round(p99, 1)}]  # fmt: skip
    run = monitor.start_run("bench")
    ((p50, _),) = timings(
        lambda: monitor.check("get_order", ARGS, RESULT, call_id="c", run=run), calls=2000
    )
    print(f"20 contracts, recording into a run: p50 {p50:.1f} µs")
    other.append({"case": "20 contracts, recording into a run", "p50_us": round(p50, 1)})
    through = integrations(monitor, calls)
    print(f"python {platform.python_version()}, fastjsonschema {fastjsonschema.VERSION}")
    twenty = next(r for r in rows if r["contracts"] == 20)
    size = f"{calls:,} checks, 20 contracts"
    results.write(options.json, {"checks": rows, "other cases": other, "integrations": through}, [
        headline("Monitor.check p50, one result", twenty["monitor_p50_us"], "µs", size=size,
                 target="p50 <= 20 µs, <= fastjsonschema",
                 met=twenty["monitor_p50_us"] <= 20 and twenty["ratio_p50"] <= 1,
                 baseline=twenty["fastjsonschema_p50_us"], baseline_what="fastjsonschema p50",
                 ratio=twenty["ratio_p50"]),
    ])  # fmt: skip


def integrations(monitor: Monitor, calls: int) -> list[dict[str, Any]]:
    """One row per integration: its p50 next to what it wraps, timed call by call."""
    from agents import Agent, ToolOutputGuardrailData
    from agents.tool_context import ToolContext
    from langchain_core.tools import tool
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from tracemine.integrations.langchain import MonitoredTool
    from tracemine.integrations.openai_agents import monitor_guardrail
    from tracemine.integrations.otel import MonitorSpanProcessor

    text = json.dumps(RESULT)
    provider = TracerProvider()  # no exporter: the processor's own cost, receipt span included
    processor = MonitorSpanProcessor(monitor, tracer_provider=provider)
    provider.add_span_processor(processor)
    source, exporter = TracerProvider(), InMemorySpanExporter()  # makes the finished tool span
    source.add_span_processor(SimpleSpanProcessor(exporter))
    with source.get_tracer("bench").start_as_current_span("execute_tool get_order") as span:
        span.set_attributes({"gen_ai.operation.name": "execute_tool",
                             "gen_ai.tool.name": "get_order",
                             "gen_ai.tool.call.arguments": json.dumps(ARGS),
                             "gen_ai.tool.call.result": text})  # fmt: skip
    (tool_span,) = exporter.get_finished_spans()  # what on_end receives
    processor.on_end(tool_span)
    assert processor.counts["evaluated"] == 1 and processor.counts["violated"] == 0
    check = monitor_guardrail(monitor).guardrail_function
    context = ToolContext(None, tool_name="get_order", tool_call_id="c1",
                          tool_arguments=json.dumps(ARGS))  # fmt: skip
    data = ToolOutputGuardrailData(context=context, agent=Agent(name="bench"), output=RESULT)
    verdict: Any = check(data)
    assert verdict.behavior["type"] == "allow", verdict

    @tool
    def get_order(order_id: str, limit: int) -> str:
        """The order."""
        return text

    wrapped = MonitoredTool(get_order, monitor)
    call = {"name": "get_order", "args": ARGS, "id": "c1", "type": "tool_call"}
    rows = [
        ("otel span processor on_end", lambda: processor.on_end(tool_span),
         "Monitor.check(text)", lambda: monitor.check("get_order", ARGS, text)),
        ("agents output guardrail", lambda: check(data),
         "Monitor.check(output)", lambda: monitor.check("get_order", ARGS, RESULT)),
        ("langchain MonitoredTool.invoke", lambda: wrapped.invoke(call),
         "tool.invoke", lambda: get_order.invoke(call)),
    ]  # fmt: skip
    print("20 contracts, through each integration (p50 µs; each timed in one loop with what "
          "it wraps; ratio = through ÷ alone):")  # fmt: skip
    found = []
    for name, through, alone_name, alone in rows:
        # a LangChain invoke costs ~100 µs of its own (callbacks, schema): fewer rounds
        n = max(200, calls // 40) if name.startswith("langchain") else calls // 4
        (p50, _), (a50, _) = timings(through, alone, calls=n)
        print(f"  {name:<31} {p50:>8.1f}   {alone_name:<21} {a50:>8.1f}   {p50 / a50:>6.2f}×")
        found.append({"through": name, "p50_us": round(p50, 1), "alone": alone_name,
                      "alone_p50_us": round(a50, 1), "ratio": round(p50 / a50, 2)})  # fmt: skip
    return found


if __name__ == "__main__":
    main()
