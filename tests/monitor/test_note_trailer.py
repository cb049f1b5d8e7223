"""Receipts never change the evidence: a conversation exported by the example loop, with
the monitor's notes in its tool messages, checks exactly like the same conversation
exported without them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from tracemine.cli import app
from tracemine.monitor import Monitor

from helpers import load_example


def export(path: Path, messages: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"run_id": "example", "task_id": "t", "messages": messages}) + "\n")
    return path


def checked(trace: Path, contracts: Path) -> tuple[dict[str, Any], str]:
    """``tracemine check`` on ``trace``: the report (JSON) and what it prints."""
    runner, args = CliRunner(), ["check", str(trace), "--contracts", str(contracts)]
    env = {"COLUMNS": "200", "NO_COLOR": "1"}
    report = json.loads(runner.invoke(app, [*args, "--json"], env=env).stdout)
    shown = runner.invoke(app, args, env=env).stdout
    for name in ("traces", "timings"):  # timings: seconds, which differ run to run
        report.pop(name)
    return report, shown.replace(str(trace), "TRACE")


def test_an_export_with_notes_checks_like_one_without(tmp_path: Path) -> None:
    loop = load_example("agent_loop")
    contracts = tmp_path / "contracts.json"
    contracts.write_text(json.dumps(loop.CONTRACTS), "utf-8")
    messages = loop.run_agent(Monitor.load(contracts), loop.ScriptedModel(), "What is in #W1?")
    notes = [
        m["content"] for m in messages if m["role"] == "tool" and "[tracemine] " in m["content"]
    ]
    assert notes, "the loop put a note in a tool message"
    bare = [{**m, "content": re.sub(r"\n\n\[tracemine\] .*", "", m["content"], flags=re.S)}
            if m["role"] == "tool" else m for m in messages]  # fmt: skip
    # the pattern the README showed before annotate(): one newline, then the note
    joined = [{**m, "content": m["content"].replace("\n\n[tracemine] ", "\n[tracemine] ")}
              if m["role"] == "tool" else m for m in messages]  # fmt: skip
    want, shown = checked(export(tmp_path / "bare.jsonl", bare), contracts)
    assert want["violations"] == 2 and "expected non-empty, got []" in shown
    assert "expected result.order_id == args.order_id" in shown
    for name, variant in (("annotated", messages), ("joined", joined)):
        assert checked(export(tmp_path / f"{name}.jsonl", variant), contracts) == (want, shown)
