"""The README stays a page for users: short, every link it and docs/ give leads to a file,
and every `tracemine` command they show parses with the command line as it is (a renamed
option or command fails here, not in a reader's terminal)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import typer

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _commands(page: Path) -> list[str]:
    """The `tracemine …` lines of a page's sh blocks, continuations joined, comments cut."""
    found = []
    for block in re.findall(r"```sh\n(.*?)```", page.read_text("utf-8"), re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s#\s.*$", "", line).strip()
            if line.startswith(("tracemine ", "$tm ")):
                # a shell loop's variable stands for a number (a seed, a size)
                found.append(
                    line.split(" ", 1)[0] + " " + re.sub(r"\$\w+", "1", line.split(" ", 1)[1])
                )
    return found


class Unparsed(Exception):
    """The command line's own usage error (typer carries a click of its own)."""


def _parse(line: str) -> None:
    """Parse ``line`` as the command line would, options, types and arguments, without
    running it."""
    from tracemine.cli import app

    command = typer.main.get_command(app)
    words = shlex.split(line)[1:]
    while hasattr(command, "get_command"):  # a group: descend to the subcommand
        sub = command.get_command(typer.Context(command), words[0]) if words else None
        if sub is None:
            raise Unparsed(f"no command {words[:1]}")
        command, words = sub, words[1:]
    try:
        command.make_context(command.name, words)
    except Exception as exc:
        if any(k.__name__ == "UsageError" for k in type(exc).__mro__):
            raise Unparsed(str(exc)) from exc
        raise


def test_readme_is_short() -> None:
    lines = (ROOT / "README.md").read_text("utf-8").count("\n")
    assert lines <= 300, f"README.md has {lines} lines: move detail to docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_lead_to_files(page: Path) -> None:
    text = re.sub(r"```.*?```", "", page.read_text("utf-8"), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = (page.parent / target.split("#")[0]).resolve()
        assert path.exists(), f"{page.relative_to(ROOT)} links to {target}, which is not there"


def test_commands_shown_parse() -> None:
    shown = [(page, line) for page in PAGES for line in _commands(page)]
    assert len([1 for page, _ in shown if page.name == "README.md"]) >= 12
    for page, line in shown:
        try:
            _parse(line)
        except Unparsed as exc:
            pytest.fail(f"{page.relative_to(ROOT)}: `{line}` does not parse: {exc}")


def test_a_wrong_command_does_not_parse() -> None:
    for line in ("tracemine mine --db x.duckdb --no-such-option", "tracemine no-such-command"):
        with pytest.raises(Unparsed):
            _parse(line)
