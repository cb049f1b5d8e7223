"""The figures in docs/performance.md and the README's table are rendered from the results
the benchmarks wrote (benchmarks/results/*.json), never typed by hand: rendering works from
a small results file made the way a benchmark makes it, and the committed documents are
what the committed results render, so a figure edited by hand, or results re-measured
without re-rendering, fail here."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        f"tracemine_bench_{name}", BENCHMARKS / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


report = _load("report")
results = _load("_results")


def _fixture(folder: Path) -> Path:
    """One results file, written by the benchmarks' own writer."""
    run = results.Run("replay", ["benchmarks/replay.py", "--calls", "50", "--json", "x.json"])
    row = {"calls": 50, "replay_us": 7.25, "lookup_us": 0.15, "overhead_us": 7.1, "ratio": 48.3}
    entry = results.headline(
        "replay, per call over a lookup", 7.1, "µs", size="50 calls, 3 repeats",
        target="<= 10 µs", met=True, baseline=0.15, baseline_what="dict lookup", ratio=48.3,
    )  # fmt: skip
    folder.mkdir()
    run.write(folder / "replay.json", {"replay": [row]}, [entry])
    return folder


def test_renders_from_a_results_file(tmp_path: Path) -> None:
    folder = _fixture(tmp_path / "results")
    document = json.loads((folder / "replay.json").read_text("utf-8"))
    assert document["machine"]["cores"] and document["versions"]["python"]
    assert len(document["machine"]["load_average_start"]) == 3
    load = document["machine"]["load_average_start"][0]
    date = f"{document['measured'][:10]}, load {load:,}"
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n\n{report.START}\nold table\n{report.END}\n\nafter\n", "utf-8")
    docs = tmp_path / "performance.md"
    argv = ["--results", str(folder), "--readme", str(readme), "--docs", str(docs)]
    assert report.main([*argv, "--check"]) == 1  # nothing rendered yet
    assert report.main(argv) == 0
    assert report.main([*argv, "--check"]) == 0
    text = readme.read_text("utf-8")
    assert "old table" not in text and text.startswith("intro\n") and text.endswith("after\n")
    line = next(x for x in text.splitlines() if x.startswith("| replay"))
    # the figure, its same-run baseline and ratio, the size and date, target and verdict,
    # and the command without where it wrote its results
    assert "7.1 µs (dict lookup 0.15 µs, 48.3×); 50 calls, 3 repeats, " + date in line
    assert "<= 10 µs (met)" in line and "`python benchmarks/replay.py --calls 50` |" in line
    page = docs.read_text("utf-8")
    assert page.startswith(report.GENERATED) and line in page
    assert "| 50 | 7.25 | 0.15 | 7.1 | 48.3 |" in page  # the benchmark's table
    assert f"measured: {document['measured']}" in page


def test_bad_results_say_which_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _fixture(tmp_path / "results")
    (folder / "broken.json").write_text('{"benchmark": "x",\n', "utf-8")
    readme = tmp_path / "README.md"
    readme.write_text(f"{report.START}\n{report.END}\n", "utf-8")
    argv = ["--results", str(folder), "--readme", str(readme), "--docs", str(tmp_path / "p.md")]
    assert report.main(argv) == 2
    assert "broken.json: line 2: not JSON" in capsys.readouterr().err
    (folder / "broken.json").write_text('{"benchmark": "x"}', "utf-8")
    assert report.main(argv) == 2
    assert "broken.json: missing field(s) command" in capsys.readouterr().err
    (folder / "broken.json").unlink()
    readme.write_text("no markers\n", "utf-8")
    assert report.main(argv) == 2
    assert "needs one <!-- figures:start --> line" in capsys.readouterr().err


def test_committed_documents_are_what_the_committed_results_render() -> None:
    found = report.load(BENCHMARKS / "results")
    names = {d["benchmark"] for d in found}
    assert {"monitor", "replay", "mcp_proxy", "ingest", "openapi_corpus"} <= names
    readme = (ROOT / "README.md").read_text("utf-8")
    assert report.readme(readme, found) == readme, "run python benchmarks/report.py"
    performance = (ROOT / "docs" / "performance.md").read_text("utf-8")
    assert report.performance(found) == performance, "run python benchmarks/report.py"


def test_recorded_command_names_no_local_place() -> None:
    """A committed result says how to re-run it, not where it ran: the options naming a
    file or folder of the measuring machine are left out of its command, in both forms."""
    results = _load("_results")
    run = results.Run("mine", ["benchmarks/mine.py", "--sizes", "1000000", "--workdir",
                               "/scratch/m", "--json=out.json", "--keep", "k"])  # fmt: skip
    document = run.document({"rows": []}, [])
    assert document["command"] == "python benchmarks/mine.py --sizes 1000000"


def test_committed_results_name_no_local_place() -> None:
    for path in sorted((BENCHMARKS / "results").glob("*.json")):
        command = json.loads(path.read_text("utf-8"))["command"]
        assert not any(o in command for o in ("--json", "--workdir", "--keep")), (path, command)
