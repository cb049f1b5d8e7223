"""``check --junit`` writes XML that parses, whatever characters the traces and contract
files carry: those XML 1.0 forbids are written as their escapes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import tracemine
from tracemine.model.contract import Contract, ContractFile

CONTROLS = "".join(chr(c) for c in range(0x20) if chr(c) not in "\t\n\r")
HOSTILE = f"{CONTROLS}\ufffe\uffff\udfff\ud800"  # low then high: no pair, two lone


def _escaped(text: str) -> str:
    """What the XML should say: each forbidden character as its Python escape."""

    def allowed(c: str) -> bool:
        o = ord(c)
        return c in "\t\n\r" or 0x20 <= o <= 0xD7FF or 0xE000 <= o <= 0xFFFD or o >= 0x10000

    return "".join(c if allowed(c) else ascii(c)[1:-1] for c in text)


def test_junit_xml_parses_with_forbidden_characters_in_names_and_messages(
    tmp_path: Path,
) -> None:
    calls = [{"run_id": f"run{HOSTILE}", "task_id": "t1", "seq": 0, "call_id": "c0",
              "tool": f"get{HOSTILE}order", "arguments": {"id": f"bad{HOSTILE}"},
              "result": {"ok": True}, "status": "ok"}]  # fmt: skip
    (tmp_path / "traces.jsonl").write_text("".join(json.dumps(c) + "\n" for c in calls), "utf-8")
    (read,) = tracemine.read_traces(tmp_path / "traces.jsonl").calls  # as the reader has it
    contract = Contract(id=f"c{HOSTILE}", tool=read["tool"], side="args", kind="pattern",
                        paths=["args.id"], params={"regex": "^[a-z]+$"},
                        status="accepted")  # fmt: skip
    document = ContractFile(contracts=[contract]).model_dump(mode="json")
    (tmp_path / "contracts.json").write_text(json.dumps(document), "utf-8")
    done = subprocess.run([sys.executable, "-m", "tracemine", "check", "traces.jsonl", "-c",
                           "contracts.json", "--junit", "out.xml"], cwd=tmp_path, text=True,
                          capture_output=True, env={**os.environ, "COLUMNS": "200"})  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr  # the contract is violated
    root = ET.parse(tmp_path / "out.xml").getroot()
    case = next(root.iter("testcase"))
    assert case.get("classname") == _escaped(read["tool"])
    assert case.get("name") == _escaped(f"pattern args.id [c{HOSTILE}]")
    failure = case.find("failure")
    assert failure is not None and failure.text is not None
    assert failure.text.startswith(_escaped(str(read["run_id"])))  # the example names the run
    assert 'got "bad' in failure.text  # the message, its value shown as JSON
    (run,) = [c.get("name") for c in root.iter("testcase") if c.get("classname") == "runs"]
    assert run == _escaped(str(read["run_id"]))
