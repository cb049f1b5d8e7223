"""The monitor where agents already run: thin layers over :class:`tracemine.monitor.Monitor`.

- :mod:`tracemine.integrations.otel` — ``MonitorSpanProcessor``, an OpenTelemetry span
  processor that checks tool spans (GenAI ``execute_tool``, OpenInference ``TOOL``) and
  records a ``tracemine.receipt`` on the trace (``pip install 'tracemine[otel]'``).
- :mod:`tracemine.integrations.openai_agents` — ``monitor_guardrail``, a tool output
  guardrail for the OpenAI Agents SDK (``pip install 'tracemine[openai-agents]'``).
- :mod:`tracemine.integrations.langchain` — ``MonitoredTool``, a LangChain / LangGraph
  ``BaseTool`` wrapper (``pip install 'tracemine[langchain]'``).

This package imports nothing; each module needs its framework and says which extra brings
it when the framework is missing. Every integration gives the verdict ``Monitor.check``
gives for the same call, and none raises into the framework.
"""
