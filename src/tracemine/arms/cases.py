"""Cases of the paired-arms experiment: a request, the tools, the fixture values the tools
answer with, the oracle (expected calls, accepted claims) and the safe-stop message.

A suite case comes from the simulator: the task's first successful trial is the nominal
trajectory. Its calls become the fixtures, the arguments that every successful trial of
the task passed alike become the oracle's expected calls (a limit or a reason that varies
between trials is the agent's choice, not part of the task), and its final sentence the
accepted claim. The scripted agent's plan is derived from the same trajectory as a
*skill*: which tool to call next and where each argument comes from (the request, or a
path of an earlier result) — never the values the results held, so a fault in a result
carries into the calls and the answer built on it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from tracemine.faults.paths import Token, get, walk
from tracemine.monitor._values import json_type
from tracemine.simulate import simulate
from tracemine.simulate.formats._common import SYSTEM_PROMPTS

SAFE_STOP = "I could not complete this task safely"
_CONTEXT_KEYS = re.compile(r"(_id|^country|^user)$")
_WRITE_VERBS = ("create_", "book_", "cancel_", "update_", "delete_", "send_")


@dataclass(frozen=True, slots=True)
class Ref:
    """An argument or claim value read from step ``step``'s result at ``tokens``."""

    step: int
    tokens: tuple[Token, ...]


@dataclass(slots=True)
class Step:
    """One call of the plan; calls of one ``turn`` are issued together."""

    tool: str
    arguments: dict[str, Any]  # a value, or a Ref
    turn: int


@dataclass(slots=True)
class Case:
    """One case: everything an arm needs to run it and the oracle to label it."""

    case_id: str
    family: str | None
    system: str
    request: str
    tools: list[dict[str, Any]]
    fixtures: list[dict[str, Any]]  # {"tool", "arguments", "result"}
    nominal: list[dict[str, Any]]  # the nominal trajectory's calls, as trace records
    expected_calls: list[dict[str, Any]]
    accepted_claims: list[str]
    safe_stop: str = SAFE_STOP
    plan: list[Step] = field(default_factory=list)
    claim: list[str | Ref] = field(default_factory=list)

    def oracle(self) -> dict[str, Any]:
        """The case as ``tracemine check --oracle`` reads it."""
        return {"expected_calls": self.expected_calls, "accepted_claims": self.accepted_claims}


def is_write(tool: str) -> bool:
    """A tool that changes the world: a recovery read makes no sense for it."""
    return tool.startswith(_WRITE_VERBS)


def suite_cases(suite: str, tasks: int, seed: int, first: int = 0) -> list[Case]:
    """``tasks`` cases of a simulator domain, tasks ``first`` … ``first + tasks - 1``."""
    runs = simulate(suite, first + tasks, seed, trials=3)
    by_task: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        by_task.setdefault(run["task_id"], []).append(run)
    cases = []
    for task_id, trials in list(by_task.items())[first:]:
        good = [r for r in trials if r["run_outcome"] == "success"] or trials[:1]
        cases.append(_case(suite, task_id, good))
    return cases


def nominal_runs(suite: str, tasks: int, seed: int, first: int = 0) -> list[dict[str, Any]]:
    """Clean runs of tasks ``first`` … for mining the guarded arms' contracts."""
    runs = simulate(suite, first + tasks, seed, trials=3)
    return [r for r in runs if int(r["task_id"].rsplit("-", 1)[1]) >= first]


def trajectory(run: dict[str, Any]) -> list[dict[str, Any]]:
    """The successful calls of a run, renumbered: what a correct agent needs to call."""
    calls = [dict(c) for c in run["calls"] if c.get("status") == "ok"]
    for seq, call in enumerate(calls):
        call["seq"] = seq
    return calls


def _case(domain: str, task_id: str, good: list[dict[str, Any]]) -> Case:
    nominal = good[0]
    calls = trajectory(nominal)
    context = _context(nominal["instruction"], calls)
    request = nominal["instruction"] + (
        "\nAccount: " + ", ".join(f"{k} {v}" for k, v in context.items()) if context else ""
    )
    steps = plan(calls, request)
    system = SYSTEM_PROMPTS.get(domain, "You are a helpful agent with tools.")
    return Case(
        case_id=task_id,
        family=nominal.get("family"),
        system=system,
        request=request,
        tools=manifest(calls),
        fixtures=[
            {"tool": c["tool"], "arguments": c["arguments"], "result": c["result"]}
            for r in good
            for c in trajectory(r)
        ],
        nominal=calls,
        expected_calls=_expected(good),
        accepted_claims=[nominal["final_text"]],
        plan=steps,
        claim=claim_template(nominal["final_text"], calls),
    )


def _context(instruction: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    """Ids the agent is told up front (whose account, which country): argument values that
    neither the instruction nor an earlier result gives."""
    found: dict[str, Any] = {}
    for index, call in enumerate(calls):
        for name, value in (call.get("arguments") or {}).items():
            if not isinstance(value, str) or not _CONTEXT_KEYS.search(name):
                continue
            if value in instruction or _source(value, calls[:index]) is not None:
                continue
            found.setdefault(name, value)
    return found


def _source(value: Any, earlier: list[dict[str, Any]]) -> Ref | None:
    """Where an earlier result holds ``value``: the latest call first (the most direct
    source), its first such path."""
    for index in range(len(earlier) - 1, -1, -1):
        for tokens, seen in walk(earlier[index].get("result")):
            if not isinstance(seen, dict | list) and _same(seen, value):
                return Ref(index, tuple(tokens))
    return None


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def plan(calls: list[dict[str, Any]], request: str) -> list[Step]:
    """The scripted agent's plan from a nominal trajectory: each argument a value the
    request states or the policy picks, or a :class:`Ref` to an earlier turn's result."""
    steps = []
    turns: dict[Any, int] = {}
    for index, call in enumerate(calls):
        arguments: dict[str, Any] = {}
        for name, value in (call.get("arguments") or {}).items():
            said = isinstance(value, str) and value in request
            # a call of the same turn is issued together with this one: not a source
            earlier = [c if c.get("turn") != call.get("turn") else {} for c in calls[:index]]
            ref = None if said or isinstance(value, bool) else _source(value, earlier)
            arguments[name] = ref if ref is not None else value
        turn = turns.setdefault(call.get("turn"), len(turns))
        steps.append(Step(call["tool"], arguments, turn))
    return steps


def claim_template(text: str, calls: list[dict[str, Any]]) -> list[str | Ref]:
    """The final sentence with every value read from a result replaced by where it came
    from, so the scripted agent states what its own results said."""
    values: dict[str, Ref] = {}
    for index, call in enumerate(calls):
        for tokens, seen in walk(call.get("result")):
            if isinstance(seen, str | int) and not isinstance(seen, bool):
                values.setdefault(str(seen), Ref(index, tuple(tokens)))
    words = sorted((v for v in values if v and v in text), key=len, reverse=True)
    if not words:
        return [text]
    splitter = re.compile(r"(?<![\w#-])(" + "|".join(map(re.escape, words)) + r")(?![\w-])")
    parts: list[str | Ref] = []
    for position, piece in enumerate(splitter.split(text)):
        if position % 2:
            parts.append(values[piece])
        elif piece:
            parts.append(piece)
    return parts


def _expected(good: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Calls every successful trial made, with the arguments they all passed alike."""
    per_trial = [trajectory(run) for run in good]
    expected = []
    for call in per_trial[0]:
        matches = []
        for calls in per_trial[1:]:
            same_tool = [c for c in calls if c["tool"] == call["tool"]]
            if not same_tool:
                break
            matches.append(same_tool)
        else:
            arguments = {
                name: value
                for name, value in (call.get("arguments") or {}).items()
                if all(
                    any(_text(c.get("arguments", {}).get(name)) == _text(value) for c in m)
                    for m in matches
                )
            }
            wanted = {"tool": call["tool"], "arguments": arguments}
            if wanted not in expected:
                expected.append(wanted)
    return expected


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def manifest(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Function definitions for the tools the calls used (parameters as their arguments
    looked), each read tool followed by its recovery tool ``refresh_<tool>``."""
    shapes: dict[str, dict[str, set[str]]] = {}
    for call in calls:
        params = shapes.setdefault(call["tool"], {})
        for name, value in (call.get("arguments") or {}).items():
            params.setdefault(name, set()).add(json_type(value))
    tools = []
    for tool, params in shapes.items():
        schema = {
            "type": "object",
            "properties": {
                name: {"type": sorted(types)[0] if len(types) == 1 else sorted(types)}
                for name, types in params.items()
            },
            "required": sorted(params),
        }
        tools.append({"name": tool, "description": f"The {tool} tool.", "parameters": schema})
        if not is_write(tool):
            tools.append(
                {
                    "name": recovery_tool(tool),
                    "description": f"Drop the cached {tool} answer for these arguments, so the "
                    f"next {tool} call reads the record afresh.",
                    "parameters": schema,
                }
            )
    return tools


def recovery_tool(tool: str) -> str:
    return f"refresh_{tool}"


def resolve(value: Any, results: list[Any]) -> tuple[bool, Any]:
    """A plan value against the results so far: ``(True, value)``, or ``(False, None)``
    when the result it reads from does not hold that path."""
    if not isinstance(value, Ref):
        return True, value
    if value.step >= len(results):
        return False, None
    try:
        found = get(results[value.step], list(value.tokens))
    except (KeyError, IndexError, TypeError):
        return False, None
    if isinstance(found, dict | list):
        return False, None
    return True, found
