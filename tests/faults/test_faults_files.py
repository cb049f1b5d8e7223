"""Injecting into trace files: read with the ingest readers, write back, ground truth beside."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tracemine.cli import app
from tracemine.errors import InputError
from tracemine.faults import FaultClass, ground_truth_path, inject_file
from tracemine.ingest import ingest, read_traces
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


def traces(tmp_path: Path, format: str) -> Path:
    # the readers of the project itself: imported plainly, so a missing one fails
    assert READERS[format].__module__ in {
        m.__name__
        for m in (
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
    }
    return write_traces(simulate("all", tasks=15, seed=8), tmp_path / f"in.{format}.jsonl", format)


def test_ground_truth_sits_beside_the_output() -> None:
    assert ground_truth_path("out/faulty.jsonl.gz") == Path("out/faulty.faults.jsonl")
    assert ground_truth_path("faulty.otlp.jsonl") == Path("faulty.otlp.faults.jsonl")


@pytest.mark.parametrize("format", list(FORMATS))
def test_inject_file_round_trips_each_format(tmp_path: Path, format: str) -> None:
    source = traces(tmp_path, format)
    out = tmp_path / f"faulty.{format}.jsonl"
    report = inject_file(source, out, list(FaultClass), rate=0.6, seed=5)
    assert report.format == format and report.input_quarantined == 0
    assert report.faults > 0 and report.faulted_runs == report.faults
    truth = [json.loads(line) for line in ground_truth_path(out).read_text().splitlines()]
    assert len({t["fault_id"] for t in truth}) == report.faults
    assert {"run_id", "call_id", "seq", "tool", "path", "fault_class"} <= set(truth[0])
    # the faulty file is still a trace file of the same format: it ingests, nothing is lost
    ingested = ingest([out], tmp_path / "faulty.duckdb")
    (file,) = ingested.files
    assert file.source_format == format
    assert file.units_read == file.units_stored + file.units_quarantined
    # the same seed writes the same bytes
    again = tmp_path / f"again.{format}.jsonl"
    inject_file(source, again, list(FaultClass), rate=0.6, seed=5)
    assert again.read_bytes() == out.read_bytes()
    assert ground_truth_path(again).read_bytes() == ground_truth_path(out).read_bytes()


def test_nominal_flat_round_trip_is_byte_identical(tmp_path: Path) -> None:
    source = traces(tmp_path, "flat")
    out = tmp_path / "zero.jsonl"
    report = inject_file(source, out, list(FaultClass), rate=0.0, seed=1)
    assert report.faults == 0 and ground_truth_path(out).read_text() == ""
    assert out.read_bytes() == source.read_bytes()


def test_faults_survive_the_round_trip(tmp_path: Path) -> None:
    source = traces(tmp_path, "flat")
    out = tmp_path / "neg.jsonl"
    inject_file(source, out, [FaultClass.NEGATIVE_QUANTITY], rate=1.0, seed=2)
    truth = [json.loads(line) for line in ground_truth_path(out).read_text().splitlines()]
    calls = {(c["run_id"], c["seq"]): c for c in read_traces(out).calls}
    for record in truth:
        call = calls[(record["run_id"], record["seq"])]
        assert json.dumps(call["result"]).count(record["after"]) >= 1


def test_refuses_to_overwrite_its_input(tmp_path: Path) -> None:
    source = traces(tmp_path, "flat")
    with pytest.raises(InputError, match="overwrite"):
        inject_file(source, source, list(FaultClass))


def test_cli_inject(tmp_path: Path) -> None:
    source = traces(tmp_path, "flat")
    out = tmp_path / "cli.jsonl"
    args = ["inject", "--in", str(source), "--out", str(out), "--classes", "semantic",
            "--rate", "0.5", "--seed", "3", "--json"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["faults"] > 0 and Path(report["ground_truth"]).is_file()
    assert set(report["by_class"]) <= {c.value for c in FaultClass if c.group == "semantic"}
    listing = CliRunner().invoke(app, ["inject", "--list"])
    assert listing.exit_code == 0 and "amount_from_id" in listing.output


@pytest.mark.parametrize(
    "extra",
    [["--classes", "bogus"], ["--rate", "2"], ["--out-format", "xml"], ["--in", "missing.jsonl"]],
)
def test_cli_inject_mistakes_exit_2(tmp_path: Path, extra: list[str]) -> None:
    source = traces(tmp_path, "flat")
    args = ["inject", "--in", str(source), "--out", str(tmp_path / "o.jsonl"), *extra]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "error:" in result.output and "Traceback" not in result.output
