"""`tracemine mcp wrap|replay`: record and monitor an MCP server through a stdio proxy,
and serve a recorded session back as a server (:mod:`tracemine.proxy`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tracemine.cli._common import run
from tracemine.proxy import replay, wrap

ORDER = 42
mcp_app = typer.Typer(help="Record, monitor and replay MCP servers (stdio).", no_args_is_help=True)
_AFTER_DASHES = {"allow_interspersed_args": False, "ignore_unknown_options": True}


def wrap_command(
    command: Annotated[
        list[str] | None,
        typer.Argument(metavar="-- COMMAND...", help="The server command, after --."),
    ] = None,
    contracts: Annotated[
        Path | None,
        typer.Option(
            "--contracts",
            "-c",
            metavar="FILE",
            help="Contract file: check each tools/call result, receipt in _meta.",
        ),
    ] = None,
    record: Annotated[
        Path | None,
        typer.Option("--record", metavar="DIR", help="Write the session's transcript here."),
    ] = None,
    task: Annotated[
        str | None, typer.Option("--task", metavar="ID", help="The session's task id.")
    ] = None,
    task_key: Annotated[
        str,
        typer.Option(
            "--task-key", metavar="KEY", help="The params._meta key a call's own task id is under."
        ),
    ] = "task_id",
    note: Annotated[
        bool,
        typer.Option("--note", help="Also append a violation's note as a last text block."),
    ] = False,
    include_proposed: Annotated[
        bool, typer.Option("--include-proposed", help="Enforce proposed contracts too.")
    ] = False,
    http: Annotated[
        str | None,
        typer.Option("--http", metavar="URL", help="A Streamable HTTP server's URL."),
    ] = None,
    listen: Annotated[
        str, typer.Option("--listen", metavar="HOST:PORT", help="Where to serve with --http.")
    ] = "127.0.0.1:8765",
    advertise: Annotated[
        Path | None,
        typer.Option(
            "--advertise",
            metavar="FILE",
            help="Add export --format mcp's outputSchema to tools/list where the server "
            "declares none.",
        ),
    ] = None,
) -> None:
    """Put a transparent proxy before an MCP server: COMMAND on stdio, or --http URL.

    Messages pass unchanged; a checked result gets its receipt in its _meta.
    """
    code = run(wrap, command or [], contracts=contracts, record=record, task=task,
               task_key=task_key, note=note, include_proposed=include_proposed, http=http,
               listen=listen, advertise=advertise)  # fmt: skip
    raise typer.Exit(code)


def replay_command(
    cassette: Annotated[
        Path,
        typer.Argument(metavar="CASSETTE", help="A wrap --record transcript, or a cassette."),
    ],
) -> None:
    """Serve a recorded session as an MCP stdio server (no live server).

    A call not recorded is a JSON-RPC error naming the nearest recorded call.
    """
    raise typer.Exit(run(replay, cassette))


def register(app: typer.Typer) -> None:
    mcp_app.command("wrap", context_settings=_AFTER_DASHES)(wrap_command)
    mcp_app.command("replay")(replay_command)
    app.add_typer(mcp_app, name="mcp")
