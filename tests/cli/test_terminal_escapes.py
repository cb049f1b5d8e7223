"""Text from traces reaches the terminal as text: a tool named with an ANSI colour code or
an OSC-8 link, or with a bidi override, shows the code escaped (``\\x1b[31m``) instead of
colouring, linking or reordering the screen, and a run id holding a newline stays on its
line (``\\n``). Piped or on a terminal, for ``mine``, ``check`` and ``stats``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tracemine
from tracemine.model.contract import Contract, ContractFile, save_contracts

COLOURED = "get_\x1b[31morder\x1b[0m"
LINKED = "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"
REVERSED = "refund\u202etxt.exe"
RUN = "bad\nrun"  # a second line that would pass for the next one
# what the terminal is to see in their place
SHOWN = {COLOURED: r"get_\x1b[31morder\x1b[0m", LINKED: r"\x1b]8;;http://x\x1b\link",
         REVERSED: r"refund\u202etxt.exe", RUN: r"bad\nrun"}  # fmt: skip
# what a terminal must never get, wherever it is printed (on a terminal rich colours its own
# words, so what is looked for is the codes inside the names)
RAW = ["_\x1b[31m", "order\x1b[0m", "\x1b]8;;http://x", "\x1b\\link", "\u202e", "bad\nrun"]


def _call(name: str, order_id: str, ok: bool = True) -> dict[str, object]:
    result = {"code": "EUR", "order_id": order_id} if ok else "order service down"
    return {"name": name, "arguments": {"order_id": order_id}, "ok": ok, "result": result}


def _run(run_id: str, task_id: str, order_id: str, ok: bool = True) -> dict[str, object]:
    calls = [_call(COLOURED, order_id), _call(LINKED, order_id), _call(REVERSED, order_id, ok)]
    return {"run_id": run_id, "task_id": task_id, "calls": calls}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("escapes")
    good = [_run(f"r{task}\n{trial}", f"t{task}", "ABC") for task in range(8)
            for trial in range(2)]  # fmt: skip
    (root / "traces.jsonl").write_text("".join(json.dumps(x) + "\n" for x in good), "utf-8")
    # a run that violates the contract and whose last call failed: both said under its id
    bad = [_run(RUN, "t-bad", "x\x1b[31m", ok=False)]
    (root / "bad.jsonl").write_text("".join(json.dumps(x) + "\n" for x in bad), "utf-8")
    tracemine.ingest([root / "traces.jsonl"], root / "store.duckdb")
    pattern = Contract(tool=COLOURED, side="args", kind="pattern", paths=["args.order_id"],
                       params={"regex": "^[A-Z]{3}$"}, status="accepted",
                       description="args.order_id matches ^[A-Z]{3}$")  # fmt: skip
    save_contracts(ContractFile(contracts=[pattern]), root / "contracts.json")
    return root


COMMANDS = {
    "stats": (["stats", "--db", "store.duckdb"], 0, [COLOURED, LINKED, REVERSED]),
    "mine": (["mine", "--db", "store.duckdb", "--out", "mined.json", "--min-tasks", "2"], 0,
             [COLOURED, LINKED, REVERSED]),
    "check": (["check", "bad.jsonl", "traces.jsonl", "-c", "contracts.json"], 1,
              [COLOURED, LINKED, REVERSED, RUN]),
}  # fmt: skip


@pytest.mark.parametrize("terminal", [False, True], ids=["piped", "terminal"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_trace_text_is_escaped_for_the_terminal(folder: Path, command: str,
                                                terminal: bool) -> None:  # fmt: skip
    args, code, shown = COMMANDS[command]
    env = {**os.environ, "COLUMNS": "200"}
    env.pop("NO_COLOR", None)
    if terminal:
        env["FORCE_COLOR"] = "1"  # rich writes as to a terminal: colours, links, spinners
    else:
        env.pop("FORCE_COLOR", None)
    done = subprocess.run([sys.executable, "-m", "tracemine", *args], cwd=folder, text=True,
                          capture_output=True, env=env)  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == code, output
    for raw in RAW:
        assert raw not in output, (raw, output)
    if not terminal:  # piped, rich adds no codes of its own: not one ESC byte is left
        assert "\x1b" not in output, output
    for value in shown:
        assert SHOWN[value] in done.stdout, (SHOWN[value], done.stdout)
