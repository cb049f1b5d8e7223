"""The ``tracemine`` command line. Each command is a thin module here that parses its
options, calls one public function, renders the result and maps errors to exit codes.
A module takes part by defining ``register(app)``; ``ORDER`` sorts ``--help``."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from typing import Annotated

import typer

from tracemine.cli._help import adopt

app = typer.Typer(
    name="tracemine",
    help="Mine outcome contracts from known-good agent tool-call traces and check them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


def _register_commands() -> None:
    modules = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "register"):
            modules.append(module)
    for module in sorted(modules, key=lambda m: (getattr(m, "ORDER", 50), m.__name__)):
        module.register(app)


def version() -> str:
    """The installed package's version and the contract-file format it writes."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    from tracemine.model.contract import SCHEMA_VERSION

    try:
        number = installed("tracemine")
    except PackageNotFoundError:  # run from a source tree that was never installed
        from tracemine import __version__ as number
    return f"tracemine {number} (contract files: schema_version {SCHEMA_VERSION})"


def _print_version(value: bool) -> None:
    if value:
        sys.stdout.write(version() + "\n")
        raise typer.Exit()


@app.callback()
def _options(
    _version: Annotated[
        bool,
        typer.Option("--version", "-V", metavar="", is_eager=True, callback=_print_version,
                     help="Print the version and the contract-file schema version."),
    ] = False,
) -> None:  # fmt: skip
    """Mine outcome contracts from known-good agent tool-call traces and check them."""


_register_commands()
adopt(app)


def main() -> None:
    """Console-script entry point. A user's mistake that a command did not map itself (a
    file it writes after its work, say) is still one line and exit code 2."""
    from tracemine.cli._common import user_errors

    try:
        with user_errors():
            app()
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
