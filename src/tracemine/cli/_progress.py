"""Progress of a long command, stage by stage, as ``uv`` and ``pytest`` show theirs: on a
terminal each finished stage stays as a line with its seconds and the running one spins
with its elapsed time; piped, redirected or with ``--quiet`` nothing is drawn. Either way
the stages are timed, for ``--json``'s ``timings``."""

from __future__ import annotations

import time
from types import TracebackType
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn

from tracemine.cli._common import err_console

QuietOption = Annotated[
    bool, typer.Option("--quiet", "-q", help="No progress display on a terminal.")
]


class Stages:
    """A command's stages. ``stage(name)`` ends the running stage and starts ``name``;
    leaving the ``with`` block ends the last. ``timings`` maps each stage to seconds.

    >>> with Stages("mine", quiet=False) as stages:  # doctest: +SKIP
    ...     result = mine(db, progress=stages.stage)
    """

    def __init__(self, command: str, *, quiet: bool = False, console: Console | None = None):
        self.command = command
        self.console = console or err_console
        self.shown = not quiet and self.console.is_terminal
        self.timings: dict[str, float] = {}
        self._name: str | None = None
        self._started = 0.0
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> Stages:
        if self.shown:
            self._bar = Progress(
                SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                console=self.console, transient=True,
            )  # fmt: skip
            self._bar.start()
        return self

    def stage(self, name: str) -> None:
        """Start stage ``name`` (the running one, if any, is done); a stage named again
        adds to its time."""
        self._finish()
        self._name, self._started = name, time.perf_counter()
        if self._bar is not None:
            text = f"{escape(self.command)}: {escape(name)}"
            if self._task is None:
                self._task = self._bar.add_task(text, total=None)
            else:
                self._bar.reset(self._task, description=text)

    def _finish(self) -> None:
        if self._name is None:
            return
        seconds = time.perf_counter() - self._started
        self.timings[self._name] = round(self.timings.get(self._name, 0.0) + seconds, 3)
        if self._bar is not None:
            # a finished stage stays on the screen, above the one running
            self._bar.console.print(
                f"[green]✓[/] {escape(self.command)}: {escape(self._name)} [dim]{seconds:.1f} s[/]"
            )
        self._name = None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if kind is None:
            self._finish()
        if self._bar is not None:
            self._bar.stop()
