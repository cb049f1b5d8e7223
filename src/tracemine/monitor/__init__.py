"""The runtime monitor: standard library only, so it can run inside agent processes.

Load an exported contract file once, then check each tool result before it goes back to
the model. Checks are advisory — nothing raises into the loop, nothing edits the result —
and each returns a :class:`Receipt` whose note can be appended to the tool message
(``receipt.annotate(content)``). A result may be given as the tool message's content text:
it is read as ingest reads it (:mod:`tracemine.model.result`), note trailer cut, JSON parsed.

>>> from tracemine.monitor import Monitor
>>> monitor = Monitor.load("contracts.json")  # doctest: +SKIP
>>> run = monitor.start_run("r1")  # doctest: +SKIP
>>> receipt = monitor.check("get_order", args, text, call_id="c1", run=run)  # doctest: +SKIP
>>> content = receipt.annotate(text)  # doctest: +SKIP
>>> monitor.finalize(run).verdict  # doctest: +SKIP
'complete'

Hooks: :func:`guard` decorates a Python tool function, :class:`MonitoredSession` wraps an
MCP client session (:mod:`tracemine.monitor.hooks`).
"""

from __future__ import annotations

from tracemine.monitor._load import SCHEMA_VERSION, ContractLoadError, read_document
from tracemine.monitor._monitor import Monitor, ProposedContractsIgnored
from tracemine.monitor._receipt import Gap, Receipt, RunVerdict, Unevaluated, Violation
from tracemine.monitor._regex import pattern_refusal
from tracemine.monitor._replay import CallOutcome, RunReplay, replay
from tracemine.monitor._run import Run
from tracemine.monitor._values import set_limits
from tracemine.monitor.hooks import MonitoredSession, guard

__all__ = [
    "SCHEMA_VERSION",
    "CallOutcome",
    "ContractLoadError",
    "Gap",
    "Monitor",
    "MonitoredSession",
    "ProposedContractsIgnored",
    "Receipt",
    "Run",
    "RunReplay",
    "RunVerdict",
    "Unevaluated",
    "Violation",
    "guard",
    "pattern_refusal",
    "read_document",
    "replay",
    "set_limits",
]
