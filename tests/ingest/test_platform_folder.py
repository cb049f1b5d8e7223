"""Platform exports beside the other formats: a folder holding the same simulated calls as
every format the simulator writes (the platforms' included, Phoenix as parquet too), with
a cut last line in one file, ingests by the command line with every record accounted
for; and the flow of ``make demo`` (ingest → mine → check, then the same traces with
faults injected) runs on each platform's export."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pytest

from tracemine.simulate import simulate, write_traces
from tracemine.simulate.formats import FORMATS

PLATFORMS = tuple(name for name in FORMATS if name not in ("openai_chat", "otlp", "flat"))


def tm(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-m", "tracemine", *map(str, args)], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=600)  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    return done


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("platforms")
    traces = root / "traces"
    runs = simulate("commerce", tasks=16, seed=7, trials=2)
    for name in FORMATS:
        write_traces(runs, traces / f"all.{name}.jsonl", name)
    rows = [json.loads(line) for line in (traces / "all.phoenix.jsonl").read_text().splitlines()]
    frame = pl.DataFrame(rows, infer_schema_length=None).with_columns(
        pl.col("start_time", "end_time").str.to_datetime(time_zone="UTC")
    )
    frame.write_parquet(traces / "spans.phoenix.parquet")
    cut = traces / "all.langsmith.jsonl"
    cut.write_text(cut.read_text() + '{"id": "cut-off", "run_type": "tool", "inp', "utf-8")
    return root


def test_a_mixed_folder_ingests_every_record(folder: Path) -> None:
    assert {"phoenix", "langsmith"} <= set(PLATFORMS)
    done = tm("ingest", "traces", "--db", "all.duckdb", "--json", cwd=folder)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    files = {Path(f["source_file"]).name: f for f in report["files"]}
    assert len(files) == len(FORMATS) + 1
    for name, found in files.items():
        expected = "phoenix" if name.endswith(".parquet") else name.split(".")[1]
        assert found["source_format"] == expected, name
        assert found["units_read"] == found["units_stored"] + found["units_quarantined"], name
        assert found["calls"] > 0, name
    assert files["all.langsmith.jsonl"]["units_quarantined"] == 1  # the cut line
    with duckdb.connect(str(folder / "all.duckdb"), read_only=True) as con:
        per_format = dict(con.execute(
            "SELECT source_format, count(*) FROM calls GROUP BY ALL").fetchall())  # fmt: skip
        bad = con.execute("SELECT reason FROM quarantine").fetchall()
    # every format holds the same calls; Phoenix twice (its lines and its parquet)
    counts = {name: n // 2 if name == "phoenix" else n for name, n in per_format.items()}
    assert len(set(counts.values())) == 1 and per_format["phoenix"] % 2 == 0, per_format
    assert len(bad) == 1 and "all.langsmith.jsonl" not in bad[0][0]


@pytest.mark.parametrize("name", PLATFORMS)
def test_the_demo_flow_runs_on_each_platform(folder: Path, name: str) -> None:
    work = folder / name
    work.mkdir()
    trace = folder / "traces" / f"all.{name}.jsonl"
    assert tm("ingest", trace, "--db", "t.duckdb", cwd=work).returncode == 0
    done = tm("mine", "--db", "t.duckdb", "--out", "candidates.json", cwd=work)
    assert done.returncode == 0, done.stderr
    contracts = json.loads((work / "candidates.json").read_text())["contracts"]
    assert len(contracts) >= 5
    clean = tm("check", trace, "--contracts", "candidates.json", "--include-proposed", cwd=work)
    assert clean.returncode in (0, 1), clean.stderr
    injected = tm("inject", "--in", trace, "--out", "faulty.jsonl", "--rate", "0.5", cwd=work)
    assert injected.returncode == 0, injected.stderr
    faulty = tm("check", "faulty.jsonl", "--contracts", "candidates.json", "--include-proposed",
                "--json", cwd=work)  # fmt: skip
    assert faulty.returncode == 1, faulty.stderr
    found = json.loads(faulty.stdout)
    nominal = json.loads(tm("check", trace, "--contracts", "candidates.json",
                            "--include-proposed", "--json", cwd=work).stdout)  # fmt: skip
    assert _violations(found) > _violations(nominal)


def _violations(report: dict) -> int:
    return int(report.get("violations", 0) if isinstance(report.get("violations"), int)
               else len(report.get("violations") or []))  # fmt: skip
