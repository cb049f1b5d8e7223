"""AgentDojo: replay every user task's ground-truth tool calls against the suite's own
tools and default environment, and write them as flat JSONL traces.

Each user task of each suite (workspace, travel, banking, slack) runs through AgentDojo's
``TaskSuite.run_task_with_pipeline`` with its ``GroundTruthPipeline``, on a deep copy of
the suite's default environment (the injection placeholders keep their benign defaults),
with a functions runtime that records every call: the function name, its arguments, the
result as JSON (pydantic models dumped in JSON mode, as AgentDojo dumps them before
formatting them for the model) and the ``"ErrorType: message"`` error it reports. The
task's own ``utility`` check decides the run outcome.

The suites' tools are also written to ``agentdojo.functions.json`` as
``[{"name", "description", "parameters", "response"}]``: the input models' JSON Schemas
and the return types' serialization schemas (what the dumped results follow), with
``$defs`` inlined, a declared source for ``tracemine merge``.

One run per task: run id ``agentdojo/<suite>/<user_task_id>``, task id
``<suite>/<user_task_id>``, family ``<suite>``, server ``<suite>``.

>>> report = import_agentdojo("suites/agentdojo", limit=2)  # doctest: +SKIP
>>> report.runs  # doctest: +SKIP
8
"""

from __future__ import annotations

import re
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from tracemine.importers._common import (
    ImportReport,
    frozen_clock,
    hash_seed_fixed,
    inline_refs,
    jsonable,
    require,
    run_in_worker,
    summarize,
    trace_path,
    write_json,
    write_runs,
)

SUITE = "agentdojo"
DEFAULT_VERSION = "v1.2.2"
INSTALL_HINT = "install it with: pip install 'tracemine[agentdojo]'"
# the suites' calendars say the current day is 2024-05-15; tools that stamp new emails
# and files read the wall clock, which is frozen to a morning of that day
FROZEN_NOW = datetime(2024, 5, 15, 10, 0, 0)
_ERROR = re.compile(r"^(?P<type>[A-Za-z_][\w.]*): (?P<message>.*)$", re.DOTALL)


def import_agentdojo(
    out: str | Path,
    *,
    limit: int | None = None,
    compress: bool = False,
    version: str = DEFAULT_VERSION,
) -> ImportReport:
    """Replay the ground truth of AgentDojo's user tasks (at most ``limit`` per suite)
    and write ``agentdojo.jsonl`` (``.gz`` with ``compress``) into ``out``.

    Runs in a child process with ``PYTHONHASHSEED=0`` unless this one already has it,
    so the same package version always writes the same bytes.
    """
    require("agentdojo", INSTALL_HINT)
    out = Path(out)
    if not hash_seed_fixed():
        args = ["--version", version, *(["--limit", str(limit)] if limit is not None else [])]
        return run_in_worker(SUITE, out, [*args, *(["--gzip"] if compress else [])])
    started = time.perf_counter()
    runs = replay(limit=limit, version=version)
    files = [
        write_runs(runs, trace_path(out, SUITE, compress)),
        write_json(function_docs(version), out / f"{SUITE}.functions.json"),
    ]
    return summarize(SUITE, files, runs, time.perf_counter() - started)


def replay(*, limit: int | None = None, version: str = DEFAULT_VERSION) -> list[dict[str, Any]]:
    """The runs of every suite's user tasks, suites by name, tasks by number."""
    from agentdojo.task_suite.load_suites import get_suites

    from tracemine.errors import InputError

    try:
        suites = get_suites(version)
    except KeyError:
        raise InputError(f"AgentDojo has no benchmark version {version!r}") from None
    if not suites:
        raise InputError(f"AgentDojo has no benchmark version {version!r}")
    runs: list[dict[str, Any]] = []
    with frozen_clock("agentdojo", FROZEN_NOW):
        for name in sorted(suites):
            runs.extend(_replay_suite(name, suites[name], limit))
    return runs


def function_docs(version: str = DEFAULT_VERSION) -> list[dict[str, Any]]:
    """Every suite's tools (once each; suites share some) as function docs with response
    schemas, by name."""
    from agentdojo.task_suite.load_suites import get_suites
    from pydantic import TypeAdapter

    functions: dict[str, Any] = {}
    for _, suite in sorted(get_suites(version).items()):
        for function in suite.tools:
            functions.setdefault(function.name, function)
    docs = []
    for name, function in sorted(functions.items()):
        doc: dict[str, Any] = {
            "name": name,
            "description": function.description,
            "parameters": inline_refs(function.parameters.model_json_schema()),
        }
        if function.return_type is not None:
            schema = TypeAdapter(function.return_type).json_schema(mode="serialization")
            doc["response"] = inline_refs(schema)
        docs.append(doc)
    return docs


def _replay_suite(name: str, suite: Any, limit: int | None) -> list[dict[str, Any]]:
    from agentdojo.agent_pipeline.ground_truth_pipeline import GroundTruthPipeline

    recorder_class = _recording_runtime()
    environment = suite.load_and_inject_default_environment({})
    tasks = sorted(suite.user_tasks.items(), key=lambda item: _task_number(item[0]))
    runs = []
    for task_id, task in tasks[:limit]:
        recorder = recorder_class(suite.tools, server=name)
        # the suite builds its runtime from this factory: hand it the recording one
        utility, _ = suite.run_task_with_pipeline(
            GroundTruthPipeline(task),
            task,
            injection_task=None,
            injections={},
            runtime_class=lambda _tools, recorder=recorder: recorder,
            environment=environment.model_copy(deep=True),
        )
        runs.append(
            {
                "run_id": f"{SUITE}/{name}/{task_id}",
                "task_id": f"{name}/{task_id}",
                "trial": None,
                "family": name,
                "reward": 1.0 if utility else 0.0,
                "run_outcome": "success" if utility else "failure",
                "calls": recorder.calls,
            }
        )
    return runs


def _recording_runtime() -> type:
    """A ``FunctionsRuntime`` that records every call and never raises: a ground-truth
    call that fails is part of the trace, and the task's check judges the run."""
    from agentdojo.functions_runtime import FunctionsRuntime

    class RecordingRuntime(FunctionsRuntime):
        def __init__(self, functions: Any, server: str) -> None:
            super().__init__(functions)
            self.server = server
            self.calls: list[dict[str, Any]] = []

        def run_function(
            self, env: Any, function: str, kwargs: Any, raise_on_error: bool = False
        ) -> tuple[Any, str | None]:
            arguments = jsonable(dict(kwargs))
            result, error = super().run_function(env, function, kwargs, raise_on_error=False)
            self.calls.append(
                _call(len(self.calls), self.server, function, arguments, result, error)
            )
            return result, error

    return RecordingRuntime


def _call(
    seq: int, server: str, tool: str, arguments: Any, result: Any, error: str | None
) -> dict[str, Any]:
    call: dict[str, Any] = {
        "seq": seq,
        "call_id": f"call_{seq}",
        "tool": tool,
        "server": server,
        "arguments": arguments,
        "status": "ok",
        "error_type": None,
        "error_message": None,
    }
    if error is None:
        call["result"] = jsonable(result)
        return call
    # AgentDojo reports a failed call as the text "ErrorType: message" and an empty result
    match = _ERROR.match(error)
    call["status"] = "tool_error"
    call["result"] = None
    call["error_type"] = match["type"] if match else None
    call["error_message"] = match["message"] if match else error
    return call


def _task_number(task_id: str) -> tuple[int, str]:
    digits = re.findall(r"\d+", task_id)
    return (int(digits[-1]) if digits else -1, task_id)
