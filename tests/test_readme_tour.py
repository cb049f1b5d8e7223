"""The README's five-minute tour, run as written: each command in its shell block, in a
folder holding the bundled data, with ``tm`` the tracemine of this interpreter."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tour() -> str:
    text = (ROOT / "README.md").read_text("utf-8")
    section = text.split("## A five-minute tour", 1)[1]
    found = re.search(r"```sh\n(.*?)```", section, re.S)
    assert found, "README's tour has no shell block"
    return found.group(1)


@pytest.mark.heavy  # a minute: run by make test-heavy, kept out of the ten-minute suite
def test_the_five_minute_tour_runs_as_written(tmp_path: Path) -> None:
    script = _tour()
    assert script.startswith("tm=.venv/bin/tracemine\n")
    ours = f"tm={shlex.quote(sys.executable + ' -m tracemine')}\n"
    shutil.copytree(ROOT / "data", tmp_path / "data")
    (tmp_path / "mined_contracts").mkdir()
    # each command as a user types them: every one succeeds, but for check, whose exit 1
    # says it found something (the example data holds unretried tool errors)
    said = "trap 'echo \"exit $? from: $BASH_COMMAND\" >&2' ERR\n"
    done = subprocess.run(["bash", "-u", "-c", said + ours + script.split("\n", 1)[1]],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)  # fmt: skip
    failed = re.findall(r"^exit (\d+) from: (.*)$", done.stderr, re.M)
    assert all(code == "1" and " check " in line for code, line in failed), (
        done.stdout[-3000:] + done.stderr[-3000:]
    )
    # what each step says it writes is there
    for written in ["traces.duckdb", "mined_contracts/candidates.json",
                    "mined_contracts/merged.json", "contracts.json", "check.xml",
                    "report/report.json", "arms/report.json"]:  # fmt: skip
        assert (tmp_path / written).exists(), written
    accepted = json.loads((tmp_path / "contracts.json").read_text("utf-8"))["contracts"]
    assert accepted, "the tour's accepts took nothing: the card item id in README is stale"
