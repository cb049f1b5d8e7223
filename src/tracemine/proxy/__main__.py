"""``python -m tracemine.proxy wrap|replay``: the same commands as ``tracemine mcp wrap``
and ``tracemine mcp replay``, standard library only, for client configurations where the
server must answer soon after it starts."""

from __future__ import annotations

import argparse
import sys

from tracemine.errors import TracemineError
from tracemine.proxy._main import replay, wrap


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tracemine.proxy", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    wrapping = commands.add_parser("wrap", help="a proxy before an MCP server")
    wrapping.add_argument("--contracts", "-c", metavar="FILE")
    wrapping.add_argument("--record", metavar="DIR")
    wrapping.add_argument("--task", metavar="ID")
    wrapping.add_argument("--task-key", metavar="KEY", default="task_id")
    wrapping.add_argument("--note", action="store_true")
    wrapping.add_argument("--include-proposed", action="store_true")
    wrapping.add_argument("--http", metavar="URL")
    wrapping.add_argument("--listen", metavar="HOST:PORT", default="127.0.0.1:8765")
    wrapping.add_argument("--advertise", metavar="FILE")
    wrapping.add_argument("server", nargs=argparse.REMAINDER, metavar="-- COMMAND...")
    replaying = commands.add_parser("replay", help="serve a recorded session")
    replaying.add_argument("cassette", metavar="CASSETTE")
    options = parser.parse_args(argv)
    try:
        if options.command == "replay":
            return replay(options.cassette)
        server = options.server[1:] if options.server[:1] == ["--"] else options.server
        return wrap(server, contracts=options.contracts, record=options.record,
                    task=options.task, task_key=options.task_key, note=options.note,
                    include_proposed=options.include_proposed, http=options.http,
                    listen=options.listen, advertise=options.advertise)  # fmt: skip
    except TracemineError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
