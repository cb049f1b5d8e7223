"""Long commands show their stages on a terminal, and nothing when piped or with
--quiet; ``--json`` carries the seconds of each stage. The terminal is a real
pseudo-terminal, the command a subprocess, as a person runs it."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

import tracemine
from tracemine.mine.api import STAGES
from tracemine.simulate import simulate, write_traces

COMMAND = [sys.executable, "-m", "tracemine"]
MINE = ["mine", "--db", "t.duckdb", "-o", "c.json", "--min-tasks", "2", "--folds", "3"]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def on_terminal(*args: str, cwd: Path) -> str:
    """What ``tracemine ARGS`` writes to a terminal 80 columns wide (escapes removed)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 80, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR")}
    process = subprocess.Popen([*COMMAND, *args], cwd=cwd, stdin=follower, stdout=follower,
                               stderr=follower, env={**env, "TERM": "xterm"})  # fmt: skip
    os.close(follower)
    shown = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(leader, 1 << 16)
            except OSError:  # the other end closed: the command is done
                break
            if not chunk:
                break
            shown += chunk
        elif process.poll() is not None:
            break
    assert process.wait(timeout=300) in (0, 1)
    os.close(leader)
    return ANSI.sub("", shown.decode("utf-8", "replace"))


def piped(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*COMMAND, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    return done


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("progress")
    runs = simulate("commerce", tasks=12, seed=3, trials=2)
    write_traces(runs, root / "traces.jsonl", "flat")
    tracemine.ingest([root / "traces.jsonl"], root / "t.duckdb")
    return root


def test_mine_shows_its_stages_on_a_terminal_only(folder: Path) -> None:
    shown = on_terminal(*MINE, cwd=folder)
    done = [s for s in STAGES if re.search(rf"✓ mine: {s} \d+\.\d s", shown)]
    assert done == ["reading", "profiles", "relations", "held-out counts",
                    "detection estimate", "selection", "trials"], shown  # fmt: skip
    assert "contracts from" in shown  # the summary follows
    quiet = on_terminal(*MINE, "--quiet", cwd=folder)
    assert "mine: reading" not in quiet and "contracts from" in quiet
    plain = piped(*MINE, cwd=folder)
    assert "mine: " not in plain.stderr + plain.stdout and "\x1b" not in plain.stderr


def test_json_says_the_seconds_of_each_stage(folder: Path) -> None:
    mined = json.loads(piped(*MINE, "--json", cwd=folder).stdout)
    timings = mined["provenance"]["timings"]
    assert list(timings) == ["reading", "profiles", "relations", "held-out counts",
                             "detection estimate", "selection", "trials"]  # fmt: skip
    assert all(isinstance(s, float) and s >= 0 for s in timings.values())
    checked = json.loads(piped("check", "traces.jsonl", "-c", "c.json", "--include-proposed",
                               "--json", cwd=folder).stdout)  # fmt: skip
    assert list(checked["timings"]) == ["finding traces", "replaying"]


def test_check_shows_its_stages_on_a_terminal(folder: Path) -> None:
    if not (folder / "c.json").exists():
        piped(*MINE, cwd=folder)
    shown = on_terminal("check", "traces.jsonl", "-c", "c.json", "--include-proposed",
                        cwd=folder)  # fmt: skip
    assert re.search(r"✓ check: replaying \d+\.\d s", shown), shown
    assert "calls in" in shown
