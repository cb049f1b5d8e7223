"""``python -m tracemine.importers SUITE --out DIR [--limit N] [--gzip] [--version V]``:
the worker an import re-runs itself as, with ``PYTHONHASHSEED`` fixed. Prints the
import report as JSON on its last line; a user's mistake is ``error: ...`` and exit 2."""

from __future__ import annotations

import argparse
import sys

from tracemine.errors import TracemineError
from tracemine.importers import SUITES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tracemine.importers")
    parser.add_argument("suite", choices=SUITES)
    parser.add_argument("--out", required=True)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--gzip", action="store_true")
    parser.add_argument("--version", default=None, help="the suite's benchmark version")
    args = parser.parse_args(argv)
    try:
        if args.suite == "agentdojo":
            from tracemine.importers.agentdojo import DEFAULT_VERSION, import_agentdojo

            report = import_agentdojo(
                args.out,
                limit=args.limit,
                compress=args.gzip,
                version=args.version or DEFAULT_VERSION,
            )
        else:
            from tracemine.importers.bfcl import import_bfcl

            report = import_bfcl(args.out, limit=args.limit, compress=args.gzip)
    except TracemineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report.model_dump_json())
    return 0


if __name__ == "__main__":
    sys.exit(main())
