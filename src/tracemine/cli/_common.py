"""What every command shares: the console, error mapping, shared options."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from tracemine.errors import TracemineError
from tracemine.ingest.readers import READERS

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)

T = TypeVar("T")

# Help is read at 80 columns: short metavars (flags show none) leave the help column room.
DbOption = Annotated[
    Path, typer.Option("--db", metavar="FILE", help="DuckDB store (from `tracemine ingest`).")
]
JsonOption = Annotated[
    bool, typer.Option("--json", metavar="", help="Print JSON instead of tables.")
]
ReaderOption = Annotated[
    str | None,
    typer.Option(
        "--format",
        "-f",
        metavar="NAME",
        help=f"Reader to use instead of detecting one per file: {', '.join(READERS)}.",
    ),
]
FoldsOption = Annotated[
    int, typer.Option("--folds", metavar="K", help="Task folds for cross-fitting.", min=2)
]
TaskKeyOption = Annotated[
    str | None,
    typer.Option(
        "--task-key",
        metavar="KEY",
        help="Where task ids come from when runs have none: a run field, a metadata key, "
        "or regex:PATTERN over run ids.",
    ),
]


@contextmanager
def user_errors() -> Iterator[None]:
    """A user's mistake is one line on stderr and exit code 2, never a traceback."""
    try:
        yield
    except TracemineError as exc:
        # the message is the user's text (paths, package names with [extras]): not markup
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}", markup=True, soft_wrap=True)
        raise typer.Exit(2) from None
    except OSError as exc:
        if exc.filename is None:
            raise  # not about a path the user named: a fault to see whole
        # the file system refused a path (a folder that cannot be made, a file that cannot
        # be written or read): the user's to fix, so said in one line
        where = escape(str(exc.filename))
        # folders are made with exist_ok, so "exists" means a file stands where one goes
        why = "exists and is not a folder" if isinstance(exc, FileExistsError) else exc.strerror
        err_console.print(f"[bold red]error:[/] {where}: {escape(why or str(exc))}",
                          markup=True, soft_wrap=True)  # fmt: skip
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        err_console.print("interrupted; nothing partial was kept")
        raise typer.Exit(130) from None


def run(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    with user_errors():
        return fn(*args, **kwargs)


def print_json(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
