"""Patterns from contract files cannot hang the monitor: each is refused on load, with a
reason, or matched in time linear in the input; everyday patterns are accepted and mean
what they mean to Python's ``re``."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import textwrap

import pytest
from monitor_contracts import contract

from tracemine.monitor import ContractLoadError, Monitor
from tracemine.openapi import declared_contracts, load_spec

# (pattern, input a backtracking matcher takes exponential or high-polynomial time on)
CATASTROPHIC = [
    (r"(.*a){20}$", "a" * 1023 + "!"),
    (r"^(a|a){32}$", "a" * 1023 + "!"),
    (r"^(\w{0,32}){32}$", "a" * 1023 + "!"),
    (r"(a+)+$", "a" * 1023 + "!"),
    (r"(a|aa)+$", "a" * 1023 + "!"),
    (r"(.*){1,32000}", "a" * 1023 + "!"),
    (r"^(([a-z])+.)+[A-Z]([a-z])+$", "a" * 1023 + "!"),
    (r"(\w+\s?)+$", "a" * 1023 + "!"),
    (r"(x+x+)+y", "x" * 1024),
    (r"(a*)*b", "a" * 1024),
    (r"(a|a?)+b", "a" * 1024),
    (r"(a+)*b", "a" * 1024),
    (r"(.*)*b", "a" * 1024),
    (r"^(a+|b+)*c$", "ab" * 512),
    (r"(\d+)*x", "1" * 1024),
    (r".*.*.*.*.*=.*", "x" * 1024),
    (r"^(\s*a\s*)*$", " a" * 511 + "!"),
    (r"(a|b|ab)*c", "ab" * 512),
    (
        r"^([a-zA-Z0-9])(([\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}"
        r"(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$",
        "a" * 1023 + "!",
    ),
    (r"^(\w+\.?)*\w+@", "a" * 1024),
    (r"(?:a+)+b", "a" * 1024),
    (r"(a?){32}a{32}", "a" * 32),
    (r"(\w*)*$", "a" * 1023 + "!"),
    (r"(.*,){12}X", "," * 1024),
    (r"^(a{1,10}){1,10}$", "a" * 1023 + "!"),
    (r"^(\d+\s?)+$", "1" * 1023 + "x"),
    (r"(ab|a)*(ab|b)*c", "ab" * 512),
    (r"(a|aa)*c", "a" * 1024),
    (r".*x.*y", "x" * 1024),
    (r"^\w+\s*\w+$", "a" * 1023 + "!"),
]

MATCHING = {r"(a?){32}a{32}", r"(\w*)*$"}  # the only two of those inputs a pattern matches

EMAIL = r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$"
HOST = (r"^(?=.{1,253}$)([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*"
        r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")  # fmt: skip
# (pattern, a value it matches, one it does not)
EVERYDAY = [
    (r"^#W\d{7}$", "#W0038412", "#W003841"),
    (
        r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
        "123e4567-e89b-12d3-a456-426614174000",
        "123e4567-e89b-12d3-a456-42661417400",
    ),
    (r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$", "2024-02-29", "2024-13-01"),
    (
        r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$",
        "2024-02-29T10:11:12.5Z",
        "2024-02-29 10:11:12",
    ),
    (EMAIL, "ann.lee+x@example.co.uk", "ann@example"),
    (HOST, "api.example-1.com", "-api.example.com"),
    (HOST, "a" * 63 + ".com", "a" * 64 + ".com"),
    (HOST, ("a" * 60 + ".") * 4 + "com", ("a" * 62 + ".") * 4 + "com"),  # 253 and 255 long
    (r"^[A-Z]{3}$", "EUR", "EURO"),
    (r"^\+?[1-9]\d{1,14}$", "+4915112345678", "+0123"),
    (r"^\(?\d{3}\)?[-. ]?\d{3}[-. ]?\d{4}$", "(555) 123-4567", "555-1234"),
    (
        r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
        r"(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+"
        r"(?:\.[0-9a-zA-Z-]+)*))?$",
        "1.2.3-rc.1+build.5",
        "1.2",
    ),
    (r"^[a-z0-9]+(?:-[a-z0-9]+)*$", "my-blog-post-2", "my--post"),
    (r"^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$", "DE89370400440532013000", "DE89"),
    (r"^\d{5}(-\d{4})?$", "12345-6789", "1234"),
    (r"^https?://[^\s/$.?#].[^\s]*$", "https://example.com/a?b=c", "ftp://example.com"),
    (r"^(?:[0-9]{1,3}\.){3}[0-9]{1,3}$", "192.168.0.1", "192.168.0"),
    (r"^#?([a-fA-F0-9]{6}|[a-fA-F0-9]{3})$", "#a0b1c2", "#a0b1"),
    (r"^\d+(\.\d{1,2})?$", "19.99", "19.999"),
    (r"(?i)^ord-\d+$", "ORD-12", "ORD-"),
    (r"ORD-\d+", "see ORD-123 now", "see ORD- now"),
    (r"^\w+$", "straße_1", "two words"),
    (r"^[a-z]+$", "abc", "abc\nx"),
    (r"^[a-z]+$", "abc\n", "abc\n\n"),  # ``$`` before a final newline, as ``re`` has it
    (r"\bcat\b", "a cat!", "concat"),
]

_RUNNER = textwrap.dedent(
    """
    import json, sys, time
    from tracemine.monitor import ContractLoadError, Monitor

    for pattern, text in json.load(sys.stdin):
        print(json.dumps(["start", pattern]), flush=True)
        item = {"id": "c1", "tool": "t", "side": "result", "kind": "pattern",
                "paths": ["result.id"], "params": {"regex": pattern}, "status": "accepted"}
        try:
            monitor = Monitor.from_dict({"schema_version": "1", "contracts": [item]})
        except ContractLoadError as exc:
            print(json.dumps(["refused", str(exc)]), flush=True)
            continue
        started = time.perf_counter()
        receipt = monitor.check("t", {}, {"id": text})
        print(json.dumps(["ran", time.perf_counter() - started, receipt.ok]), flush=True)
    """
)


def _run_all(cases: list[tuple[str, str]], timeout: float) -> list[list[object]]:
    """Each pattern loaded and run by a monitor in a subprocess: a hang fails the test
    (naming the pattern) instead of stalling the suite."""
    try:
        done = subprocess.run([sys.executable, "-c", _RUNNER], input=json.dumps(cases),
                              capture_output=True, text=True, timeout=timeout)  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        last = [json.loads(line) for line in out.splitlines()][-1:]
        pytest.fail(f"the monitor hung on a pattern: {last}")
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_catastrophic_patterns_are_refused_or_run_in_linear_time() -> None:
    lines = _run_all(CATASTROPHIC, timeout=120)
    outcomes = [line for line in lines if line[0] != "start"]
    assert len(outcomes) == len(CATASTROPHIC)
    for (pattern, _), outcome in zip(CATASTROPHIC, outcomes, strict=True):
        if outcome[0] == "refused":
            assert "refused" in str(outcome[1]), (pattern, outcome)
        else:
            # linear: a few milliseconds for 1024 characters; a backtracker needs years
            assert float(str(outcome[1])) < 2.0, (pattern, outcome)
            assert outcome[2] is (pattern in MATCHING), (pattern, outcome)  # held = matched


@pytest.mark.parametrize(("regex", "good", "bad"), EVERYDAY)
def test_everyday_patterns_are_accepted_and_mean_what_re_says(
    make_monitor, regex: str, good: str, bad: str
) -> None:
    monitor = make_monitor(contract("pattern", ["result.id"], params={"regex": regex}))
    assert re.search(regex, good) and not re.search(regex, bad)  # the cases are right
    assert monitor.check("get_order", {}, {"id": good}).ok
    assert not monitor.check("get_order", {}, {"id": bad}).ok


def test_matching_agrees_with_re_on_many_strings(make_monitor) -> None:
    patterns = [p for p, _ in CATASTROPHIC[:12]] + [p for p, _, _ in EVERYDAY]
    alphabet = "aAb1 _.-@:#!\n\u00e9\u2028"
    rng = random.Random(7)
    texts = ["", "\n", *("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
                         for _ in range(300))]  # fmt: skip
    for regex in patterns:
        try:
            monitor = make_monitor(contract("pattern", ["result.id"], params={"regex": regex}))
        except ContractLoadError:
            assert (regex, "") not in [(p, "") for p, _, _ in EVERYDAY]  # those all load
            continue
        for text in texts:
            held = monitor.check("get_order", {}, {"id": text}).ok
            assert held == (re.search(regex, text) is not None), (regex, text)


def test_a_refused_pattern_names_the_contract_and_the_reason(write_contracts) -> None:
    item = contract("pattern", ["result.id"], params={"regex": r"^(\w{0,32}){32}$"})
    with pytest.raises(ContractLoadError) as raised:
        Monitor.load(write_contracts(item))
    message = str(raised.value)
    assert f"contract {item.id} (get_order.pattern)" in message
    assert "refused: pattern expands to more than" in message


def test_a_declared_pattern_the_monitor_refuses_is_kept_muted_with_the_reason(tmp_path) -> None:
    schema = {"type": "object", "properties": {"id": {"type": "string",
                                                      "pattern": r"^(\w{0,32}){32}$"}}}  # fmt: skip
    spec = {"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {"/o": {"get": {
        "operationId": "get_order",
        "responses": {"200": {"description": "ok", "content": {
            "application/json": {"schema": schema}}}}}}}}  # fmt: skip
    (tmp_path / "spec.json").write_text(json.dumps(spec), "utf-8")
    found = declared_contracts(load_spec(tmp_path / "spec.json"))
    (pattern,) = [c for c in found if c.kind == "pattern"]
    assert pattern.status == "muted" and pattern.decision is not None
    assert "not enforceable" in pattern.decision.reason
    assert "expands to more than" in pattern.decision.reason
    document = {"schema_version": "1", "contracts": [c.model_dump(mode="json") for c in found]}
    assert Monitor.from_dict(document, include_proposed=True).contracts  # loads, no crash


def test_a_pattern_python_warns_about_loads_and_matches(make_monitor) -> None:
    # "[[" is a FutureWarning to ``re`` (a possible set operation), an ordinary class in
    # ECMA-262, which OpenAPI patterns are written in
    monitor = make_monitor(contract("pattern", ["result.id"], params={"regex": "^[[a]+$"}))
    assert monitor.check("get_order", {}, {"id": "[a["}).ok
    assert not monitor.check("get_order", {}, {"id": "b"}).ok
