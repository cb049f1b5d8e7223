"""``notebooks/review.ipynb`` runs top to bottom: a notebook that errors fails the suite.
It reads the candidates named by ``TRACEMINE_CANDIDATES`` (here a file built by hand),
writes nothing unless asked (``TRACEMINE_REVIEW_SAVE=1`` stands for the flag a person
sets), and never changes a decision made elsewhere."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from tracemine.review import load_review, review_path

NOTEBOOK = Path(__file__).parents[2] / "notebooks" / "review.ipynb"


def _run(candidates: Path) -> list[Any]:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    # the kernel spec's "python" is the interpreter running the tests (the venv's)
    client = NotebookClient(notebook, kernel_name="python3", timeout=300,
                            resources={"metadata": {"path": str(candidates.parent)}})  # fmt: skip
    client.execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    return outputs


@pytest.mark.slow
def test_review_notebook_runs(candidates: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACEMINE_CANDIDATES", str(candidates))
    monkeypatch.delenv("TRACEMINE_REVIEW_SAVE", raising=False)
    outputs = _run(candidates)
    # the charts are drawn in the notebook: opened offline they still show
    charts = [o["data"]["image/svg+xml"] for o in outputs if "image/svg+xml" in o.get("data", {})]
    assert len(charts) == 2
    assert all(svg.startswith("<svg") and "<path" in svg for svg in charts)
    # so are the cards, the same items as `review cards`, with nothing fetched
    cards = [o["data"]["text/html"] for o in outputs if "tm-card" in o.get("data", {}).get(
        "text/html", "")]  # fmt: skip
    assert len(cards) == 2 and "get_order" in cards[0] and "→ <b>accepted</b>" in cards[1]
    shown = json.dumps([o.get("data", {}) for o in outputs]).lower()
    assert "cdn" not in shown and not re.search(r"(src|href)=\\?[\"']https?://", shown)
    assert "<script" not in shown
    # it shows what it would save, and saves nothing unasked
    printed = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "would accept" in printed and "nothing written" in printed
    assert not review_path(candidates).exists()


def _tracemine(cwd: Path, *args: str) -> None:
    subprocess.run([sys.executable, "-m", "tracemine", *args], cwd=cwd, check=True,
                   capture_output=True)  # fmt: skip


@pytest.mark.slow
def test_notebook_run_twice_leaves_decisions_made_elsewhere(
    candidates: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = [c["id"] for c in json.loads(candidates.read_text("utf-8"))["contracts"]]
    # the type, the range and the present of get_order rejected, the call cap muted
    _tracemine(candidates.parent, "review", "reject", *ids[:3], "-c", candidates.name,
               "--reason", "not how the API works", "--reviewer", "cli")  # fmt: skip
    _tracemine(candidates.parent, "review", "mute", ids[5], "-c", candidates.name,
               "--reason", "noisy", "--reviewer", "cli")  # fmt: skip
    before = load_review(review_path(candidates)).decisions
    monkeypatch.setenv("TRACEMINE_CANDIDATES", str(candidates))
    monkeypatch.setenv("TRACEMINE_REVIEW_SAVE", "1")  # the person set SAVE = True
    for _ in range(2):
        _run(candidates)
        after = load_review(review_path(candidates)).decisions
        assert {cid: after[cid] for cid in before} == before
    ours = {cid: d for cid, d in after.items() if cid not in before}
    assert ours and {d.status.value for d in ours.values()} == {"accepted"}
    assert {d.reviewer for d in ours.values()} == {"notebook"}
    declared = ids[3]  # declared by a spec only: never accepted in bulk
    assert declared not in after


def test_notebook_uses_only_the_public_api() -> None:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    source = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
    assert "tracemine." in source
    assert "from tracemine" not in source and "import tracemine." not in source
    assert all(not c.get("outputs") for c in notebook.cells if c.cell_type == "code")
