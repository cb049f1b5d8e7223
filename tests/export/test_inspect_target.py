"""``export --format inspect``: the generated scorer, run by the real Inspect AI eval loop
(its offline mock model) on samples whose messages are the demo's recorded runs, gives
the verdict ``tracemine check`` gives them, and a violating result scores INCORRECT there
and in a re-score of the saved log."""

from __future__ import annotations

import copy
import gc
import json
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai")
import generated_module
from generated_module import DEMO, export_demo, load_module
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
)
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import ToolCall, ToolCallError

from tracemine.monitor import Monitor, replay

# Inspect's eval loop leaves anyio memory streams, and now and then an event loop with
# its self-pipe sockets, to the garbage collector; their ResourceWarning is its own, not
# this target's
pytestmark = [
    pytest.mark.filterwarnings(
        f"ignore:Exception ignored in.*{leak}:pytest.PytestUnraisableExceptionWarning"
    )
    for leak in ("MemoryObjectReceiveStream", "BaseEventLoop.__del__", "socket.socket")
]


@pytest.fixture(autouse=True)
def _collect_what_eval_left() -> Iterator[None]:
    """Collect those streams before the test ends, so that their warning cannot surface
    later in another file's test on the same worker."""
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("inspect") / "tracemine_scorer.py"
    return out, export_demo("inspect", out)


@pytest.fixture(scope="module")
def demo_runs() -> list[list[dict[str, Any]]]:
    return generated_module.demo_runs()


def messages_of(calls: list[dict[str, Any]]) -> list[Any]:
    """A run as the messages an agent loop leaves: a call a turn, its answer after it."""
    messages: list[Any] = [ChatMessageUser(content="a task")]
    for i, c in enumerate(calls):
        cid = f"call_{i}"
        messages.append(ChatMessageAssistant(content="", tool_calls=[
            ToolCall(id=cid, function=c["tool"], arguments=c["arguments"] or {})]))  # fmt: skip
        if c["status"] == "missing":
            continue
        text = c["result"] if isinstance(c["result"], str) else json.dumps(c["result"])
        error = ToolCallError("unknown", text) if c["status"] != "ok" else None
        messages.append(ChatMessageTool(content=text, tool_call_id=cid, function=c["tool"],
                                        error=error))  # fmt: skip
    return messages


@solver
def played(runs: dict[str, list[dict[str, Any]]]) -> Any:
    """Put a recorded run's messages in the sample's state, as a tool-using solver would."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.messages = messages_of(runs[str(state.sample_id)])
        return state

    return solve


def expected_ids(monitor: Monitor, calls: list[dict[str, Any]]) -> tuple[set[str], bool]:
    (run,) = replay(monitor, calls)
    ids = {v.contract_id for o in run.calls if o.receipt for v in o.receipt.violations}
    ids |= {v.contract_id for v in run.verdict.violations}
    return ids, not ids and not run.verdict.gaps


def run_eval(scorer: Any, runs: dict[str, list[dict[str, Any]]], logs: Path) -> Any:
    task = Task(dataset=[Sample(id=key, input="a task") for key in runs],
                solver=played(runs), scorer=scorer)  # fmt: skip
    (log,) = eval(task, model="mockllm/model", log_dir=str(logs), display="none",
                  log_format="json")  # fmt: skip
    assert log.status == "success", log.error
    return log


def test_every_contract_goes_out(exported: tuple[Path, dict[str, Any]]) -> None:
    _, report = exported
    assert report["format"] == "inspect"
    assert report["exported"] == report["selected"] > 0
    assert report["unexpressed"] == []


def test_the_eval_scores_the_demo_runs_as_check_does(
    exported: tuple[Path, dict[str, Any]], demo_runs: list[list[dict[str, Any]]],
    tmp_path: Path,
) -> None:  # fmt: skip
    module = load_module(exported[0])
    monitor = Monitor.load(DEMO.with_name("contracts.json"), include_proposed=True)
    runs = {f"run{i}": calls for i, calls in enumerate(demo_runs[:40])}
    log = run_eval(module.tool_contracts(), runs, tmp_path / "logs")
    failing = 0
    for sample in log.samples:
        (score,) = sample.scores.values()
        ids, clean = expected_ids(monitor, runs[str(sample.id)])
        assert (score.value == "C") == clean, (sample.id, score.explanation)
        assert {i for i in ids if i not in score.explanation} == set(), score.explanation
        assert "run" in score.metadata["tracemine"]
        failing += not clean
    assert 0 < failing < len(runs), "the demo runs hold clean and failing ones"


def test_a_violating_result_fails_and_a_rescore_agrees(
    exported: tuple[Path, dict[str, Any]], demo_runs: list[list[dict[str, Any]]],
    tmp_path: Path,
) -> None:  # fmt: skip
    module = load_module(exported[0])
    monitor = Monitor.load(DEMO.with_name("contracts.json"), include_proposed=True)
    clean = next(calls for calls in demo_runs
                 if all(c["status"] == "ok" and isinstance(c["result"], dict) for c in calls)
                 and expected_ids(monitor, calls)[1])  # fmt: skip
    broken = copy.deepcopy(clean)
    target = broken[0]["result"]
    key = next(k for k, v in target.items() if isinstance(v, str))
    target[key] = 12345  # the wrong_type fault
    assert not expected_ids(monitor, broken)[1]
    unanswered = copy.deepcopy(clean)
    unanswered[-1]["status"] = "missing"
    runs = {"clean": clean, "broken": broken, "unanswered": unanswered}
    log = run_eval(module.tool_contracts(), runs, tmp_path / "logs")
    scores = {s.id: next(iter(s.scores.values())) for s in log.samples}
    assert scores["clean"].value == "C", scores["clean"].explanation
    assert scores["broken"].value == "I"
    assert f"{broken[0]['tool']} call 0" in scores["broken"].explanation
    assert scores["unanswered"].value == "I"
    assert "run incomplete" in scores["unanswered"].explanation
    # the saved log re-scored by `inspect score` with the module's file gives the same
    out = tmp_path / "rescored.json"
    done = subprocess.run(
        [str(Path(sys.executable).with_name("inspect")), "score", log.location,
         "--scorer", f"{exported[0]}@tool_contracts", "--action", "overwrite",
         "--output-file", str(out), "--display", "none"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    again = json.loads(out.read_text())["samples"]
    verdicts = {s["id"]: [v["value"] for v in s["scores"].values()] for s in again}
    assert verdicts == {"clean": ["C"], "broken": ["I"], "unanswered": ["I"]}


def test_a_tool_error_is_checked_as_check_checks_it(
    exported: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    module = load_module(exported[0])
    monitor = Monitor.load(DEMO.with_name("contracts.json"), include_proposed=True)
    tool = next(iter(monitor.tools))
    calls = [{"run_id": "r", "seq": 0, "call_id": "c0", "tool": tool, "arguments": {},
              "result": "upstream timed out", "status": "tool_error"}]  # fmt: skip
    log = run_eval(module.tool_contracts(), {"err": calls}, tmp_path / "logs")
    (score,) = log.samples[0].scores.values()
    assert (score.value == "C") == expected_ids(monitor, calls)[1], score.explanation
    # a lone error, never retried, leaves the run incomplete as check says it does
    (run,) = replay(monitor, calls)
    assert run.verdict is not None and run.verdict.gaps
    assert score.value == "I" and "run incomplete" in score.explanation
    assert score.explanation.count("run incomplete") == len(run.verdict.gaps)


def test_the_module_names_its_data_file_safely(tmp_path: Path) -> None:
    from tracemine.export import export_contracts

    out = tmp_path / 'o\'dd "name"\n.py'
    report = export_contracts(DEMO, "inspect", out, include_proposed=True)
    assert any("name it like a module" in note for note in report.notes)
    module = load_module(out)
    assert out.with_suffix(".json").resolve() == module.CONTRACTS
    assert "tool_contracts" in dir(module)
