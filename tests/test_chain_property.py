"""The whole chain on generated traces never ends in a traceback.

Small trace files of generated calls (any Unicode, digits of other scripts, the largest and
smallest floats, integers past 64 bits, ~50 levels of nesting, one path holding several
JSON types across calls, empty objects, arrays and strings, keys with dots, brackets, ``*``
and spaces), written as plain call logs and as OpenAI chat, go through ingest → mine
(default, and ``--run-level``) → merge (a JSON Schema and a function spec) → export (every
target) → check → incident, each as the command a user runs. Each must succeed, or stop
with exit code 2 and one line saying why. Example counts follow the hypothesis profile
(``TRACEMINE_HYPOTHESIS``, see ``conftest.py``); the default profile runs a few.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import duckdb
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tracemine.cli import app

TOOLS = ["get_order", "search"]
DIGITS = "0123456789²³٣٤𝟙𝟚"
TEXT = st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from(DIGITS), max_size=8)
KEYS = st.sampled_from(["id", "items", "price", "a.b", "x[0]", "*", "with space", "[*]", ""]) | TEXT
EXTREMES = st.sampled_from([1e308, -1e308, 5e-324, -5e-324, 2**70, -(2**70), 2**63, 0, -0.0])
NUMBERS = EXTREMES | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
SCALARS = (
    st.none()
    | st.booleans()
    | NUMBERS
    | TEXT
    | st.sampled_from(["", "46 m²", "1451474²111554", "٣٤", "𝟙𝟚", "#W0012345", "9" * 40])
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=10,
)


def nested(depth: int, leaf: Any) -> Any:
    """``leaf`` under ``depth`` levels of alternating objects and arrays."""
    for level in range(depth):
        leaf = {"n": leaf} if level % 2 else [leaf]
    return leaf


# times and indexes as exports write them, numbers in text included, and text that only
# looks like a number ("²" is a digit to str.isdigit, not to int)
TIMES = (
    st.none()
    | TEXT
    | st.sampled_from(
        ["2024-05-01T10:20:30Z", "1714558830", "1714558830123", "²", "٣٤", "12²", "9" * 5000]
    )
)
INDEXES = st.integers(0, 5) | st.sampled_from(["1", "٣", "²", "-²", "9" * 5000, 2**70])
# arguments as an object, as the raw text of one, or as text no parser reads
ARGUMENTS = (
    st.dictionaries(KEYS, JSON, max_size=2)
    | st.dictionaries(KEYS, JSON, max_size=2).map(json.dumps)
    | st.sampled_from(["{", "not json", "", "[1, 2]", '{"a": NaN}'])
)
RESULTS = JSON | st.builds(nested, st.integers(45, 55), JSON) | st.sampled_from([{}, [], ""])


@st.composite
def corpora(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Runs of a few tasks, and a failing run; results come from a small pool per tool, so
    that values repeat across tasks and mining has something to keep, with the odd one
    drawn fresh. The failing run is the first run with every result drawn afresh."""
    pools = {tool: draw(st.lists(RESULTS, min_size=1, max_size=3)) for tool in TOOLS}
    runs = []
    for number in range(draw(st.integers(6, 10))):
        calls = []
        for index in range(draw(st.integers(1, 3))):
            tool = draw(st.sampled_from(TOOLS))
            fresh = draw(st.booleans()) and draw(st.booleans())
            result = draw(RESULTS) if fresh else draw(st.sampled_from(pools[tool]))
            call = {"index": draw(INDEXES) if draw(st.booleans()) else index, "name": tool,
                    "arguments": draw(ARGUMENTS), "ok": draw(st.booleans() | st.just(True)),
                    "result": result, "duration_ms": draw(st.integers(0, 5000))}  # fmt: skip
            if draw(st.integers(0, 9)) == 0:
                del call["result"], call["ok"]  # a call never answered
            calls.append(call)
        # one number in every run, from the whole range: bounds are fitted to it
        amount = {"amount": draw(NUMBERS)}
        calls.append({"index": len(calls), "name": "quote", "arguments": {}, "result": amount})
        runs.append({"run_id": f"run-{number}", "task_id": f"task-{number % 7}",
                     "trial": draw(INDEXES), "reward": 1.0, "calls": calls,
                     "final_text": draw(TEXT), "timestamp": draw(TIMES)})  # fmt: skip
    failing = {**runs[0], "run_id": "failing",
               "calls": [{**c, "result": draw(RESULTS)} for c in runs[0]["calls"]]}  # fmt: skip
    return runs, failing


def openai_chat(run: dict[str, Any]) -> dict[str, Any]:
    """The same run as an OpenAI chat conversation (every message stamped with the run's
    ``timestamp``)."""
    when = run["timestamp"]
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go", "timestamp": when}]
    for position, call in enumerate(run["calls"]):
        cid = f"call_{run['run_id']}_{position}"
        arguments = call["arguments"]
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
        messages.append({"role": "assistant", "content": None, "timestamp": when, "tool_calls": [
            {"id": cid, "type": "function", "function": {
                "name": call["name"], "arguments": raw}}]})  # fmt: skip
        if "result" not in call:
            continue
        result = call["result"]
        content = result if isinstance(result, str) else json.dumps(result)
        messages.append({"role": "tool", "tool_call_id": cid, "content": content,
                         "timestamp": when})  # fmt: skip
    messages.append({"role": "assistant", "content": run["final_text"]})
    return {"id": "chat-" + run["run_id"], "task_id": run["task_id"], "reward": 1.0,
            "messages": messages}  # fmt: skip


SCHEMA = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "items": {"type": "array", "minItems": 1}},
    "required": ["id"],
}
ANY_JSON = {"200": {"description": "ok", "content": {"application/json": {"schema": {}}}}}
OPENAPI = {
    "openapi": "3.0.3",
    "info": {"title": "shop", "version": "1"},
    "paths": {f"/{t}": {"get": {"operationId": t, "responses": ANY_JSON}} for t in TOOLS},
}
FUNCTIONS = [
    {
        "name": "search",
        "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
        "response": {"type": "array", "items": {"type": "object"}},
    }
]

runner = CliRunner()
CAUGHT = re.compile(r"\(\w+(Error|Exception): ")


def cli(*args: str | Path) -> tuple[int, str]:
    """Run one command in-process; fail the test on a traceback or a multi-line error."""
    done = runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "200", "NO_COLOR": "1"})
    said = done.output
    if done.exception is not None and not isinstance(done.exception, SystemExit):
        raise done.exception  # an uncaught exception: the crash this test is for
    assert "Traceback" not in said, said
    assert done.exit_code in (0, 1, 2), (args, done.exit_code, said)
    if done.exit_code == 2:
        errors = [line for line in said.splitlines() if line.strip()]
        assert len(errors) == 1 and errors[0].startswith("error:"), (args, said)
    return done.exit_code, said


# each example is seven commands on a fresh store: few of them, more in the longer profiles;
# no shrinking (minutes for a chain this long; the example and the traceback say enough)
EXAMPLES = {"ci": 40, "thorough": 200}.get(os.environ.get("TRACEMINE_HYPOTHESIS", ""), 6)


@settings(max_examples=EXAMPLES, deadline=None, phases=[Phase.explicit, Phase.generate])
@given(corpora())
def test_the_chain_ends_in_success_or_one_line(
    corpus: tuple[list[dict[str, Any]], dict[str, Any]],
) -> None:
    runs, failing = corpus
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        logs = root / "calls.jsonl"
        logs.write_text("".join(json.dumps(r) + "\n" for r in runs), encoding="utf-8")
        chat = root / "chat.jsonl"
        chat.write_text("".join(json.dumps(openai_chat(r)) + "\n" for r in runs), "utf-8")
        (root / "get_order.schema.json").write_text(json.dumps(SCHEMA), "utf-8")
        (root / "functions.json").write_text(json.dumps(FUNCTIONS), "utf-8")
        (root / "openapi.json").write_text(json.dumps(OPENAPI), "utf-8")
        (root / "failing.jsonl").write_text(json.dumps(failing) + "\n", "utf-8")
        db = root / "traces.duckdb"
        cli("ingest", logs, chat, "--db", db)
        with duckdb.connect(str(db), read_only=True) as con:
            reasons = [r for (r,) in con.sql("SELECT reason FROM quarantine").fetchall()]
        # a reader that failed on a record is a crash too, though ingest quarantined the record
        assert not [r for r in reasons if CAUGHT.search(r)], reasons
        mined = root / "candidates.json"
        cli("mine", "--db", db, "--out", mined)
        run_level = root / "run_level.json"
        cli("mine", "--db", db, "--run-level", "--out", run_level)
        merged = root / "merged.json"
        code, _ = cli("merge", "--candidates", mined, "--spec", root / "get_order.schema.json",
                      "--spec", root / "functions.json", "--db", db, "--out", merged)  # fmt: skip
        contracts = merged if code == 0 else mined
        extra = {"pytest": ["--traces", logs], "openapi-overlay": ["--spec", root / "openapi.json"]}
        for target, out in [("native", "native.json"), ("jsonschema", "schemas"),
                            ("openapi-overlay", "overlay.yaml"), ("pytest", "test_x.py"),
                            ("mcp", "tools.json")]:  # fmt: skip
            cli("export", "-c", contracts, "-f", target, "-o", root / out,
                "--include-proposed", *extra.get(target, []))  # fmt: skip
        for enforced in (contracts, run_level):
            cli("check", logs, chat, "-c", enforced, "--include-proposed")
        cli("incident", root / "failing.jsonl", "--run", "failing", "--db", db,
            "--out", root / "incident")  # fmt: skip
