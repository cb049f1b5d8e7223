"""A command killed while it writes leaves its output file as it was or as it would have
been, never a part of it, and with the permissions it had."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tracemine.model.contract import Contract, ContractFile, save_contracts

SPEC = Path(__file__).parents[1] / "fixtures" / "openapi" / "orders-3.0.yaml"
CONTRACTS = 3000  # enough that writing the outputs takes a while
MODE = 0o640
pytestmark = pytest.mark.slow


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "tracemine", *args]


def _kill_while_writing(command: list[str], target: Path, cwd: Path, delay: float) -> None:
    """Run ``command``; kill it the moment ``target`` changes on disk, or after
    ``delay`` seconds (negative: only when it changes)."""
    before = target.stat()
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        while process.poll() is None:
            now = target.stat() if target.exists() else None
            changed = now is None or (now.st_ino, now.st_size, now.st_mtime_ns) != (
                before.st_ino, before.st_size, before.st_mtime_ns)  # fmt: skip
            if changed or (delay >= 0 and time.monotonic() - started > delay):
                os.kill(process.pid, signal.SIGKILL)
                break
    finally:
        process.wait(timeout=120)


def _whole_contract_file(text: str) -> bool:
    try:
        return len(json.loads(text)["contracts"]) >= CONTRACTS
    except (ValueError, TypeError, KeyError):
        return False


def _whole_review(text: str) -> bool:
    try:
        decisions = yaml.safe_load(text)["decisions"]
    except (yaml.YAMLError, TypeError, KeyError):
        return False
    return len(decisions) == CONTRACTS and all(
        d["status"] == "accepted" for d in decisions.values()
    )


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("atomic")
    contracts = [Contract(tool="get_order", side="result", kind="present", paths=[f"result.f{i}"])
                 for i in range(CONTRACTS)]  # fmt: skip
    save_contracts(ContractFile(contracts=contracts), root / "candidates.json")
    done = subprocess.run(_command("review", "reject", "-c", "candidates.json", "--review",
                                   "review.yaml", "--tool", "get_order", "--reason", "old"),
                          cwd=root, capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return root


CASES: dict[str, tuple[list[str], str, Callable[[str], bool]]] = {
    "review accept": (["review", "accept", "-c", "candidates.json", "--review", "review.yaml",
                       "--tool", "get_order"], "review.yaml", _whole_review),
    "export": (["export", "-c", "candidates.json", "-f", "native",
                "-o", "exported.json", "--include-proposed"], "exported.json",
               _whole_contract_file),
    "merge": (["merge", "--spec", str(SPEC), "--candidates", "candidates.json", "--out",
               "merged.json"], "merged.json", _whole_contract_file),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_killed_command_leaves_the_old_file_or_the_new_one(folder: Path, name: str) -> None:
    args, output, whole = CASES[name]
    target = folder / output
    old = (folder / "review.yaml").read_text("utf-8") if output == "review.yaml" else "old\n"
    rng = random.Random(name)
    seen = {"old": 0, "new": 0}
    for attempt in range(2):
        target.write_text(old, "utf-8")
        target.chmod(MODE)
        # one run is killed the moment the file changes, the other at a random point
        delay = -1.0 if attempt == 0 else rng.uniform(0.5, 4.0)
        _kill_while_writing(_command(*args), target, folder, delay)
        text = target.read_text("utf-8")
        assert text == old or whole(text), f"{name}: a part of the file was left behind"
        assert target.stat().st_mode & 0o777 == MODE
        seen["old" if text == old else "new"] += 1
    assert seen["new"], seen  # the kill came after the write at least once
