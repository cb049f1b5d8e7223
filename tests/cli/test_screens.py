"""The command line as a person sees it in a terminal of 80 and of 120 columns: help that
reads at 80, and tables whose text columns get the width."""

from __future__ import annotations

import re
from typing import Any

import pytest
import typer
from screen import screen

from tracemine.cli import app


def _paths(command: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [prefix]
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        found += _paths(sub, (*prefix, name))
    return found


COMMANDS = _paths(typer.main.get_command(app))
HELP_COLUMN = 42  # at 80 columns the help column keeps 36 characters or more


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
    lines = shown.splitlines()
    assert "Usage:" in shown and all(len(line) <= 80 for line in lines)
    assert not _lone_words(shown), "\n" + shown
    # a continuation line of an option's help starts where the help column does
    late = [line for line in lines
            if line.startswith("│") and re.match(r"│\s+\S", line)
            and len(line) - len(line[1:].lstrip()) > HELP_COLUMN]  # fmt: skip
    assert not late, "\n" + shown
