"""``examples/agent_loop.py`` runs in three modes: record, replay and cut at one tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import load_example


def test_record_replay_and_cut(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    module = load_example("agent_loop")
    cassette = str(tmp_path / "run.jsonl")
    recorded = module.main(["record", "--cassette", cassette])
    assert capsys.readouterr().out.endswith(
        f"[record] 2 live calls, 0 replayed; wrote {cassette}\n"
    )

    calls: list[str] = []
    for name, fn in list(module.TOOLS.items()):  # count what reaches the live tools
        module.TOOLS[name] = lambda _fn=fn, _name=name, **kw: calls.append(_name) or _fn(**kw)
    assert module.main(["replay", "--cassette", cassette]) == recorded
    assert calls == [] and "[replay] 0 live calls, 2 replayed" in capsys.readouterr().out

    assert module.main(["cut", "--cassette", cassette, "--live", "search_orders"]) == recorded
    assert calls == ["search_orders"]
    assert "[cut] 1 live calls, 1 replayed" in capsys.readouterr().out
    lines = (tmp_path / "run.live.jsonl").read_text().splitlines()[1:]
    assert [json.loads(line)["origin"] for line in lines] == ["replay", "live"]
