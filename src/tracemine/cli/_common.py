"""What every command shares: the console, error mapping, shared options."""

from __future__ import annotations

import glob
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from tracemine.errors import InputError, TaskKeyError, TracemineError

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)

T = TypeVar("T")

# what a terminal acts on instead of showing: C0 controls (ESC starts colour and OSC-8 link
# sequences, \r and \n redraw and split lines), DEL, C1 controls (U+009B is a one-byte CSI)
# and the bidi embeddings, overrides and isolates that reorder the text around them
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

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
        # the readers are not listed here: the list grows, and a wrong name lists them
        help="Reader to use by name, as docs/formats.md lists them; a wrong name lists "
        "them too (default: detected for each file from its first records).",
    ),
]
FoldsOption = Annotated[
    int, typer.Option("--folds", metavar="K", help="Task folds for cross-fitting.", min=2)
]
TASK_GROUP_EXAMPLE = r"regex:^(?P<task>.+)-t\d+$"


def printable(value: object, *, markup: bool = True) -> str:
    """``value`` as text a terminal shows as written. Tool names, run ids, paths and values
    come from trace files, which anyone can write: a control character in them is shown
    escaped as Python writes it (``\\x1b``, ``\\n``, ``\\u202e``), so it neither colours,
    links nor moves the cursor, and a run id stays on its line. With ``markup`` the result
    is also escaped for rich markup, to go into a string printed with markup; without, it
    is for ``markup=False`` lines and :class:`rich.text.Text` (a table's cells)."""
    text = _CONTROL.sub(lambda m: repr(m.group())[1:-1], str(value))
    return escape(text) if markup else text


def task_key_checked(value: str | None) -> str | None:
    """``--task-key`` as given, unless it is a regex with no group named ``task``: that
    one would make every run its own task without a word, so it is refused here."""
    if value is None or not value.strip().startswith("regex:"):
        return value
    try:
        pattern = re.compile(value.strip()[len("regex:") :])
    except re.error:
        return value  # said precisely where the key is parsed
    if "task" not in pattern.groupindex:
        raise TaskKeyError(
            f"--task-key '{value}': the regex needs a group named task that cuts the task "
            f"id out of the run id, e.g. {TASK_GROUP_EXAMPLE}"
        )
    return value


def task_key_callback(value: str | None) -> str | None:
    with user_errors():
        return task_key_checked(value)


TaskKeyOption = Annotated[
    str | None,
    typer.Option(
        "--task-key",
        metavar="KEY",
        callback=task_key_callback,
        help="Where task ids come from when runs have none: a run field, a metadata key, "
        "or regex:PATTERN over run ids whose group (?P<task>…) is the task id.",
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


def trace_paths(paths: Sequence[Path | str], *, folders: bool = True) -> list[Path]:
    """The trace files ``paths`` name, as ``ingest`` reads them: files as named, globs
    (quoted, so the shell left them) expanded and sorted, and with ``folders`` the trace
    files inside folders (else folders are kept for the caller to walk). A path or glob
    that names nothing is an :class:`InputError`."""
    from tracemine.ingest.pipeline import expand_paths

    found: list[Path] = []
    for raw in paths:
        text = str(raw)
        named = [Path(raw)]
        if not Path(raw).exists() and glob.has_magic(text):
            named = [Path(p) for p in sorted(glob.glob(text, recursive=True))]
            if not named:
                raise InputError(f"{text}: no file or folder matches this pattern")
        for path in named:
            if folders or not path.is_dir():
                found.extend(p for p, _ in expand_paths([path]))
            else:
                found.append(path)
    return found


def run(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    with user_errors():
        return fn(*args, **kwargs)


def print_json(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
