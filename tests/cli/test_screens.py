"""The command line as a person sees it in a terminal of 80 and of 120 columns: help that
reads at 80, and tables whose text columns get the width."""

from __future__ import annotations

import itertools
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

from screen import screen
from tracemine.cli import app

from helpers import built_once


def _paths(command: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [prefix]
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        found += _paths(sub, (*prefix, name))
    return found


COMMANDS = _paths(typer.main.get_command(app))
HELP_COLUMN = 42  # at 80 columns the help column keeps 36 characters or more
# what reST or typer leaves in help when nobody looked: ``literal``, :role:`x`, and the
# type labels typer prints beside a flag or an argument whose metavar says enough
LEAKS = re.compile(r"``|:[a-z]+:`|<(?:bool|str|int|float|path|file|dir|datetime|uuid|"
                   r"list\[[^>]*\])>|\.\.\.\}?\.\.\.")  # fmt: skip


def _lone_words(text: str) -> list[str]:
    """Lines holding one short word: what a squeezed help column wraps a sentence into.
    A long word alone (a default path) and typer's ``[required]`` are no sign of it."""
    lone = []
    for line in text.splitlines():
        words = line.strip("│ ").split()
        if len(words) == 1 and len(words[0]) < 20 and words[0] != "[required]":
            lone.append(line)
    return lone


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "tracemine")
def test_help_reads_at_80_columns(command: tuple[str, ...]) -> None:
    shown = screen(*command, "--help", columns=80)
    assert screen(*command, "-h", columns=80) == shown  # -h is help, wherever --help is
    lines = shown.splitlines()
    assert "Usage:" in shown and all(len(line) <= 80 for line in lines)
    assert not _lone_words(shown), "\n" + shown
    # a continuation line of an option's help starts where the help column does
    late = [line for line in lines
            if line.startswith("│") and re.match(r"│\s+\S", line)
            and len(line) - len(line[1:].lstrip()) > HELP_COLUMN]  # fmt: skip
    assert not late, "\n" + shown
    leaks = [line for line in lines if LEAKS.search(line)]
    assert not leaks, "\n" + "\n".join(leaks)
    # a sentence wraps where the column ends, not where the source's line ended: a line of
    # the description, or of a command's in the list, followed by more of its paragraph
    # reaches near the edge
    panel = None
    short = []
    for line, after in itertools.pairwise(lines):
        panel = line.split()[1] if line.startswith("╭") else None if line.startswith("╰") else panel
        prose = panel is None and line.strip() and after.strip() and "Usage:" not in line
        listed = panel == "Commands" and re.match(r"│\s{10,}\S", after)
        if (prose or listed) and len(line.rstrip(" │")) < 80 - 20:
            short.append(line)
    assert not short, "\n" + shown


def _build_demo(folder: Path) -> None:
    """simulate, ingest, mine and merge, as the README's tour leaves a folder; then a faulted
    copy of the traces, and what ``check --json`` and ``review list --json`` say of them, which
    every width shares."""
    for args in (
        ["simulate", "--out", "sim", "--suite", "all", "--tasks", "40", "--format", "otlp"],
        ["ingest", "sim/all.otlp.jsonl", "--db", "t.duckdb"],
        ["mine", "--db", "t.duckdb", "--out", "candidates.json", "--target-fa", "0.05"],
        ["merge", "--candidates", "candidates.json", "--spec", "sim/commerce.openapi.yaml",
         "--db", "t.duckdb", "--out", "merged.json"],
        ["inject", "--in", "sim/all.otlp.jsonl", "--out", "bad.otlp.jsonl"],
    ):  # fmt: skip
        _tracemine(*args, cwd=folder)
    (folder / "check.json").write_text(_tracemine(*CHECK, "--json", cwd=folder, ok=(0, 1)))
    (folder / "listed.json").write_text(_tracemine(*LIST, "--json", cwd=folder))


CHECK = ("check", "bad.otlp.jsonl", "-c", "candidates.json", "--include-proposed")
LIST = ("review", "list", "-c", "merged.json", "--tool", "get_order", "--limit", "15")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo folder, built once for the run (by whichever worker comes first)."""
    return built_once(tmp_path_factory, "screens", _build_demo)


@pytest.fixture
def demo(built: Path, tmp_path: Path) -> Path:
    """A copy of the demo folder of this test's own: the commands write beside their input,
    and ``mine`` opens the store for writing."""
    return shutil.copytree(built, tmp_path / "demo")


def _tracemine(*args: str, cwd: Path, ok: tuple[int, ...] = (0,)) -> str:
    done = subprocess.run([sys.executable, "-m", "tracemine", *args], cwd=cwd,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode in ok, done.stderr
    return done.stdout


def _table_lines(shown: str, header: str) -> list[str]:
    """The header line and the rows under it, up to the first line that is no row."""
    lines = shown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == [header])
    return lines[start:]


def _whole(names: set[str], shown: str) -> set[str]:
    """The names that do not stand whole at the start of a line."""
    starts = {line.split()[0] for line in shown.splitlines() if line.split()}
    return names - starts


@pytest.mark.parametrize("columns", [80, 120])
def test_review_list_gives_the_contract_text_the_width(demo: Path, columns: int) -> None:
    listed = json.loads((demo / "listed.json").read_text())[:15]
    shown = screen(*LIST, columns=columns, cwd=demo)
    header = _table_lines(shown, "id")[0].split()
    assert "tool" not in header and "contract" in header  # the tool is in the title
    assert "of get_order" in shown.splitlines()[0]
    rows = "\n".join(_table_lines(shown, "id"))
    cut = [c["description"] for c in listed if len(c["description"]) <= 36
           and c["description"] not in rows]  # fmt: skip
    assert not cut, f"contract text wrapped at {columns} columns:\n{shown}"
    if columns == 120:
        # declared contracts now say what they declare, so their text is longer: the
        # sources column is the first to go, and is named when it does
        assert {"kind", "label"} <= set(header)
        assert "sources" in header or "left out at 120 columns" in shown
    else:
        assert "left out at 80 columns" in shown
    everything = screen("review", "list", "-c", "merged.json", "--limit", "15", columns=columns,
                        cwd=demo)  # fmt: skip
    assert "tool" in _table_lines(everything, "id")[0].split()


@pytest.mark.parametrize("columns", [80, 120])
def test_mine_and_merge_summaries_fit(demo: Path, columns: int) -> None:
    mined = screen("mine", "--db", "t.duckdb", "--out", "again.json", "--target-fa", "0.05",
                   columns=columns, cwd=demo)  # fmt: skip
    tools = {c["tool"] for c in json.loads((demo / "candidates.json").read_text())["contracts"]}
    assert "…" not in mined and not _whole(tools, "\n".join(_table_lines(mined, "tool")))
    assert "kept" in _table_lines(mined, "tool")[0].split()
    merged = screen("merge", "--candidates", "candidates.json", "--spec",
                    "sim/commerce.openapi.yaml", "--out", "merged2.json", columns=columns,
                    cwd=demo)  # fmt: skip
    assert "…" not in merged and not _whole({"declared+observed", "observed-only"}, merged)


@pytest.mark.slow
@pytest.mark.parametrize("columns", [80, 120])
def test_evaluate_summary_fits(tmp_path: Path, columns: int) -> None:
    shown = screen("evaluate", "--suite", "commerce", "--tasks", "30", "--max-faults", "10",
                   "--out", "report", columns=columns, cwd=tmp_path)  # fmt: skip
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    arms = {a["arm"] for a in report["arms"]}
    classes = set(report["faults"])
    assert "…" not in shown
    assert not _whole(arms, "\n".join(_table_lines(shown, "arm")))
    assert not _whole(classes, "\n".join(_table_lines(shown, "fault")))
    # seven arms leave no room for the group column even at 120: it is named as left out
    header = _table_lines(shown, "fault")[0]
    assert "group" not in header or columns == 120
    said = [line for line in shown.splitlines() if "left out at" in line]
    assert ("group" in header) != any("group" in line for line in said)


@pytest.mark.parametrize("columns", [80, 120])
def test_check_and_stats_tables_fit(demo: Path, columns: int) -> None:
    """The paths of the contracts a faulted trace breaks stand whole at 80 columns as at
    120; at 80 the columns given up are named."""
    shown = screen(*CHECK, columns=columns, cwd=demo)
    assert all(len(line) <= columns for line in shown.splitlines())
    # no cell is cut short; an example's observed value is a preview, elided on purpose
    assert not [line for line in shown.splitlines() if "…" in line
                and not line.lstrip().startswith(("✗", "… ")) and "… (string)" not in line]  # fmt: skip
    report = json.loads((demo / "check.json").read_text())
    paths = {c["path"] for c in report["contracts"] if c["violated"] and "," not in c["path"]}
    rows = "\n".join(_table_lines(shown, "kind" if columns == 80 else "tool"))
    assert paths and not {p for p in paths if p not in rows}
    assert ("left out at 80 columns" in shown) == (columns == 80)
    stats = screen("stats", "--db", "t.duckdb", columns=columns, cwd=demo)
    assert "…" not in stats and all(len(line) <= columns for line in stats.splitlines())
