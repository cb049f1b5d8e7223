"""Simulated files ingest whole: nothing quarantined, every run with its task id."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from tracemine.cli import app
from tracemine.ingest import ingest
from tracemine.ingest.readers import (
    READERS,
    anthropic,
    braintrust,
    flat,
    langfuse,
    langsmith,
    mcp,
    openai_chat,
    otlp,
    phoenix,
    weave,
)
from tracemine.simulate import FORMATS, simulate, write_traces


def test_every_simulated_format_has_its_reader() -> None:
    # the project's own readers are imported plainly above: a missing one fails, never skips
    for module in (
        anthropic,
        braintrust,
        flat,
        langfuse,
        langsmith,
        mcp,
        openai_chat,
        otlp,
        phoenix,
        weave,
    ):
        assert module.__name__.rpartition(".")[2] in FORMATS
    assert set(FORMATS) == {
        "anthropic",
        "braintrust",
        "flat",
        "langfuse",
        "langsmith",
        "mcp",
        "openai_chat",
        "otlp",
        "phoenix",
        "weave",
    }
    for name in FORMATS:
        assert READERS[name].__module__ == f"tracemine.ingest.readers.{name}"


@pytest.mark.parametrize("format", list(FORMATS))
def test_generated_files_ingest_with_nothing_quarantined(tmp_path: Path, format: str) -> None:
    runs = simulate("all", tasks=12, seed=4)
    path = write_traces(runs, tmp_path / f"traces.{format}.jsonl.gz", format)
    report = ingest([path], tmp_path / "store.duckdb", validate=True)
    (file,) = report.files
    assert file.source_format == format, "detected without being told"
    assert file.units_quarantined == 0 and file.items_quarantined == 0
    assert file.runs == len(runs) and file.runs_without_task == 0
    assert file.calls == sum(len(r["calls"]) for r in runs)
    assert file.calls_missing_result == 0
    con = duckdb.connect(str(tmp_path / "store.duckdb"), read_only=True)
    try:
        (quarantined,) = con.execute("SELECT count(*) FROM quarantine").fetchall()[0]
        tasks = con.execute("SELECT count(DISTINCT task_id) FROM runs").fetchall()[0][0]
        anomalies = con.execute("SELECT count(*) FROM calls WHERE len(anomalies) > 0").fetchall()
    finally:
        con.close()
    assert quarantined == 0
    assert tasks == 12
    assert anomalies[0][0] == 0, "nominal output carries no completeness anomaly"


def test_cli_writes_traces_and_openapi(tmp_path: Path) -> None:
    args = ["simulate", "--suite", "commerce", "--tasks", "3", "--seed", "2", "--format", "all",
            "--out", str(tmp_path)]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted([f"commerce.{name}.jsonl" for name in FORMATS]
                           + ["commerce.openapi.yaml"])  # fmt: skip
    again = tmp_path / "again"
    assert CliRunner().invoke(app, [*args[:-1], str(again)]).exit_code == 0
    for name in names:
        assert (again / name).read_bytes() == (tmp_path / name).read_bytes()


@pytest.mark.parametrize("extra", [["--suite", "shop"], ["--format", "xml"], ["--tasks", "0"]])
def test_cli_mistakes_exit_2_with_one_line(tmp_path: Path, extra: list[str]) -> None:
    result = CliRunner().invoke(app, ["simulate", "--out", str(tmp_path), *extra])
    assert result.exit_code == 2
    assert "error:" in result.output and "Traceback" not in result.output
