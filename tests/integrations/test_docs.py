"""Each integration's page runs offline as written: its Python example, run from the
checkout's root in a fresh interpreter, prints the output the page shows under it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
PAGES = sorted((ROOT / "docs" / "integrations").glob("*.md"))
EXAMPLE = re.compile(r"```python\n(?P<code>.*?)```\s*```text\n(?P<out>.*?)```", re.DOTALL)


def test_every_integration_has_a_page() -> None:
    modules = {p.stem for p in (ROOT / "src/tracemine/integrations").glob("[!_]*.py")}
    assert {p.stem for p in PAGES} == modules == {"otel", "openai_agents", "langchain"}


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_the_example_prints_what_the_page_shows(page: Path) -> None:
    found = EXAMPLE.search(page.read_text("utf-8"))
    assert found, f"{page.name}: a ```python block followed by a ```text block"
    done = subprocess.run([sys.executable, "-W", "error", "-c", found["code"]], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == found["out"]
