"""``notebooks/review.ipynb`` runs top to bottom: a notebook that errors fails the suite.
It reads the candidates named by ``TRACEMINE_CANDIDATES`` (here a file built by hand)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tracemine.review import load_review, review_path

NOTEBOOK = Path(__file__).parents[2] / "notebooks" / "review.ipynb"


@pytest.mark.slow
def test_review_notebook_runs(candidates: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACEMINE_CANDIDATES", str(candidates))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    # the kernel spec's "python" is the interpreter running the tests (the venv's)
    client = NotebookClient(notebook, kernel_name="python3", timeout=300,
                            resources={"metadata": {"path": str(candidates.parent)}})  # fmt: skip
    client.execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    # the charts are drawn in the notebook: opened offline they still show
    charts = [o["data"]["image/svg+xml"] for o in outputs if "image/svg+xml" in o.get("data", {})]
    assert len(charts) == 2
    assert all(svg.startswith("<svg") and "<path" in svg for svg in charts)
    shown = json.dumps([o.get("data", {}) for o in outputs]).lower()
    assert "cdn" not in shown and not re.search(r"(src|href)=\\?[\"']https?://", shown)
    decisions = load_review(review_path(candidates)).decisions
    assert {d.status.value for d in decisions.values()} == {"accepted", "rejected"}
    assert all(d.reviewer == "notebook" for d in decisions.values())


def test_notebook_uses_only_the_public_api() -> None:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    source = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
    assert "tracemine." in source
    assert "from tracemine" not in source and "import tracemine." not in source
    assert all(not c.get("outputs") for c in notebook.cells if c.cell_type == "code")
