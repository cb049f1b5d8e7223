"""The committed example data is exactly what its documented command writes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tracemine.simulate import write_suite

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.mark.slow
def test_data_folder_is_regenerable(tmp_path: Path) -> None:
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    command = re.search(r"python -m tracemine\.simulate (.+) --out data", readme)
    assert command, "data/README.md documents the command"
    options = dict(re.findall(r"--(\w+) (\S+)", command.group(1)))
    assert options == {"suite": "all", "tasks": "300", "seed": "7", "format": "openai_chat,otlp"}
    assert "--gzip" in command.group(1)
    written = write_suite(tmp_path, "all", tasks=300, seed=7,
                          formats=("openai_chat", "otlp"), compress=True)  # fmt: skip
    for path in written:
        assert (DATA / path.name).read_bytes() == path.read_bytes(), f"data/{path.name} is stale"
    total = sum(p.stat().st_size for p in DATA.iterdir())
    assert total < 3_000_000, "the example data stays small"
