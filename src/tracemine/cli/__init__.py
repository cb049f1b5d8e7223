"""The ``tracemine`` command line. Each command is a thin module here that parses its
options, calls one public function, renders the result and maps errors to exit codes.
A module takes part by defining ``register(app)``; ``ORDER`` sorts ``--help``.

Every command needs the mining stack (the extra ``mine``). In a light install — the
monitor alone, ``pip install tracemine`` — the console script says so in one line and
exits 2 instead of failing with an ImportError traceback."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
from typing import Annotated

# what the commands import, by import name; pyproject.toml's extra "mine" brings them
MINING_STACK = ("duckdb", "polars", "pyarrow", "orjson", "ijson", "pydantic", "typer", "rich",
                "sklearn", "yaml", "jsonschema")  # fmt: skip
LIGHT_INSTALL = "the mining commands need: pip install 'tracemine[mine]'"


def missing_stack() -> list[str]:
    """The modules of the mining stack this environment cannot import."""
    return [name for name in MINING_STACK if importlib.util.find_spec(name) is None]


def version() -> str:
    """The installed package's version and the contract-file format it writes (the
    model's; in a light install, without pydantic, the one the monitor reads)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        from tracemine.model.contract import SCHEMA_VERSION
    except ImportError:
        from tracemine.monitor._load import SCHEMA_VERSION

    try:
        number = installed("tracemine")
    except PackageNotFoundError:  # run from a source tree that was never installed
        from tracemine import __version__ as number
    return f"tracemine {number} (contract files: schema_version {SCHEMA_VERSION})"


def _light_main(missing: list[str]) -> None:
    print(f"tracemine: {LIGHT_INSTALL} (missing: {', '.join(missing)})", file=sys.stderr)
    sys.exit(2)


_MISSING = missing_stack()

if not _MISSING:
    import typer

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
    from tracemine.cli._help import adopt

    adopt(app)


def main() -> None:
    """Console-script entry point. A user's mistake that a command did not map itself (a
    file it writes after its work, say) is still one line and exit code 2; so is a light
    install, which has no command to run."""
    if _MISSING:
        if sys.argv[1:] in (["--version"], ["-V"]):  # a light install has a version too
            sys.stdout.write(version() + "\n")
            sys.exit(0)
        _light_main(_MISSING)
    from tracemine.cli._common import user_errors

    try:
        with user_errors():
            app()
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
