"""Completion under faults: the paired-arms experiment with an agent in the loop.

Each case runs once per arm — ``status-only``, ``guarded``, ``guarded-no-recovery`` and
optionally ``guarded-declared`` — with the same agent, prompt, tools, fixture values and
fault, in an order drawn per case; every run is written as a trace and the report is
computed by reading those files back (:mod:`tracemine.arms.report`).

>>> from tracemine.arms import ScriptedAgent, run_arms
>>> report = run_arms(out="arms", tasks=40, agent=ScriptedAgent())  # doctest: +SKIP
>>> report["arms"]["guarded"]["completion"]["rate"]  # doctest: +SKIP
"""

from __future__ import annotations

from tracemine.arms.agent import Agent, Reply
from tracemine.arms.api import run_arms
from tracemine.arms.loop import ARMS
from tracemine.arms.openai_agent import EndpointError, OpenAIAgent
from tracemine.arms.report import build_report, label_runs
from tracemine.arms.scripted import ScriptedAgent

__all__ = [
    "ARMS",
    "Agent",
    "EndpointError",
    "OpenAIAgent",
    "Reply",
    "ScriptedAgent",
    "build_report",
    "label_runs",
    "run_arms",
]
