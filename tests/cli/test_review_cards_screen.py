"""`tracemine review cards` on a merged file as the README's tour leaves it: readable at
80 columns, every contract in one item, declarations saying what they declare and each
contradicted one an item of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from screen import screen


def _tracemine(*args: str, cwd: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "tracemine", *args], cwd=cwd, text=True,
                          capture_output=True, env={**os.environ, "COLUMNS": "80"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def merged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cards")
    for args in (
        ["simulate", "--out", "sim", "--suite", "commerce", "--tasks", "40", "--format", "flat"],
        ["ingest", "sim/commerce.flat.jsonl", "--db", "t.duckdb"],
        ["mine", "--db", "t.duckdb", "--out", "candidates.json", "--run-level"],
        ["merge", "--candidates", "candidates.json", "--spec", "sim/commerce.openapi.yaml",
         "--db", "t.duckdb", "--out", "merged.json"],
    ):  # fmt: skip
        _tracemine(*args, cwd=folder)
    return folder / "merged.json"


@pytest.mark.slow
def test_cards_of_a_merged_file(merged: Path) -> None:
    shown = screen("review", "cards", "-c", merged.name, columns=80, cwd=merged.parent)
    assert shown.strip() and all(len(line) <= 80 for line in shown.splitlines())
    cards = json.loads(_tracemine("review", "cards", "-c", merged.name, "--json",
                                  cwd=merged.parent))  # fmt: skip
    document = json.loads(merged.read_text("utf-8"))["contracts"]
    held = Counter(cid for t in cards["tools"] for i in t["items"] for cid in i["contracts"])
    assert held == Counter(c["id"] for c in document)
    by_id = {c["id"]: c for c in document}
    declared = [c for c in document if c["sources"] in (["declared"], ["prose"])]
    assert declared and all(c["description"].endswith("commerce.openapi.yaml") and " — " in
                            c["description"] for c in declared)  # fmt: skip
    for tool in cards["tools"]:
        for item in tool["items"]:
            labels = {by_id[cid]["label"] for cid in item["contracts"]}
            if "observed-violates-declared" in labels:
                assert len(item["contracts"]) == 1, item["text"]
