"""``make demo``: the whole chain on the bundled example data, stage by stage.

Each stage is the command a user would type, printed and then run, so the demo doubles
as a tour. It writes into ``mined_contracts/`` (the store, the contracts, the reports). A
file whose new content differs from the one already there only in when it was made and how
long that took (``generated_at``, ``seconds``, ``timings``, "in 17.5 s") is left as it was,
so the demo run in a clone leaves the files the repository holds unchanged.

    python -m tracemine.cli._demo [--data DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

STAGES: list[tuple[str, list[str]]] = [
    ("ingest the example export", ["ingest", "{data}/all.otlp.jsonl.gz", "--db", "{db}"]),
    ("what the store holds", ["stats", "--db", "{db}"]),
    (
        "mine contracts, cross-fitted by task",
        # 2,544 calls: a 1% false-alarm bound needs ~300 held-out calls of a tool, which
        # most tools here do not have; 5% needs ~60
        ["mine", "--db", "{db}", "--out", "{out}/candidates.json", "--run-level",
         "--target-fa", "0.05"],
    ),
    (
        "merge with the declared OpenAPI document",
        ["merge", "--candidates", "{out}/candidates.json", "--spec",
         "{data}/commerce.openapi.yaml", "--db", "{db}", "--out", "{out}/merged.json"],
    ),
    (
        # no reviewer in a demo: proposed contracts are exported (and enforced) too
        "export for the runtime monitor",
        ["export", "--contracts", "{out}/merged.json", "--format", "native", "--out",
         "{out}/contracts.json", "--include-proposed"],
    ),
    (
        "export as JSON Schema",
        ["export", "--contracts", "{out}/merged.json", "--format", "jsonschema", "--out",
         "{out}/jsonschema", "--include-proposed"],
    ),
    (
        "export each tool's MCP outputSchema (for tools/list, or mcp wrap --advertise)",
        ["export", "--contracts", "{out}/merged.json", "--format", "mcp", "--out",
         "{out}/mcp.tools.json", "--include-proposed"],
    ),
    (
        "check the recorded traces: the regression gate a CI job would run",
        ["check", "{data}/all.otlp.jsonl.gz", "--contracts", "{out}/contracts.json",
         "--include-proposed", "--junit", "{out}/check.junit.xml"],
    ),
    (
        "inject silent failures into a copy of the traces (ground truth kept beside it)",
        ["inject", "--in", "{data}/all.otlp.jsonl.gz", "--out", "{out}/faulty.otlp.jsonl",
         "--classes", "all", "--rate", "0.2", "--seed", "1"],
    ),
    (
        "check the faulty copy: what the monitor catches",
        ["check", "{out}/faulty.otlp.jsonl", "--contracts", "{out}/contracts.json",
         "--include-proposed"],
    ),
    (
        "evaluate on injected faults (simulated commerce suite, held-out tasks)",
        ["evaluate", "--suite", "commerce", "--tasks", "300", "--out", "{out}/report"],
    ),
]  # fmt: skip


VOLATILE_KEYS = frozenset({"generated_at", "seconds", "timings"})
"""Keys of the JSON outputs that say when and how fast, not what."""
_TIMES = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z?|\b\d+(?:\.\d+)? ?(?:s|ms|CPU-s)\b")
_KEPT_SUFFIXES = (".json", ".md", ".html", ".xml", ".yaml", ".txt")


def _without_times(data: object) -> object:
    if isinstance(data, dict):
        return {k: _without_times(v) for k, v in data.items() if k not in VOLATILE_KEYS}
    if isinstance(data, list):
        return [_without_times(v) for v in data]
    return data


def _same_but_for_times(old: bytes, new: bytes, suffix: str) -> bool:
    """Whether two versions of an output say the same thing, times and durations apart."""
    try:
        old_text, new_text = old.decode("utf-8"), new.decode("utf-8")
        if suffix == ".json":
            return _without_times(json.loads(old_text)) == _without_times(json.loads(new_text))
    except ValueError:  # not UTF-8, not JSON: compared as they are
        return old == new
    return _TIMES.sub("<t>", old_text) == _TIMES.sub("<t>", new_text)


def _snapshot(out: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in out.rglob("*")
            if p.is_file() and p.suffix in _KEPT_SUFFIXES}  # fmt: skip


def _keep_unchanged(before: dict[Path, bytes]) -> int:
    """Put back the files whose new content differs only in times; how many."""
    kept = 0
    for path, old in before.items():
        if not path.is_file():
            continue
        new = path.read_bytes()
        if new != old and _same_but_for_times(old, new, path.suffix):
            path.write_bytes(old)
            kept += 1
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("data"))
    parser.add_argument("--out", type=Path, default=Path("mined_contracts"))
    options = parser.parse_args(argv)
    if not (options.data / "all.otlp.jsonl.gz").exists():
        print(f"error: {options.data}/all.otlp.jsonl.gz not found; run from the repository root")
        return 2
    options.out.mkdir(parents=True, exist_ok=True)
    db = options.out / "traces.duckdb"
    db.unlink(missing_ok=True)  # the demo starts from nothing each time
    values = {"data": options.data.as_posix(), "db": db.as_posix(), "out": options.out.as_posix()}
    before = _snapshot(options.out)
    started = time.perf_counter()
    for number, (title, template) in enumerate(STAGES, 1):
        args = [part.format(**values) for part in template]
        print(f"\n[{number}/{len(STAGES)}] {title}\n$ tracemine {shlex.join(args)}", flush=True)
        code = subprocess.call([sys.executable, "-m", "tracemine", *args])
        # `check` exits 1 on a finding (violations, incomplete runs): not a failure of the
        # demo; any other command exiting 1 crashed
        if code != 0 and not (code == 1 and template[0] == "check"):
            print(f"stage failed with exit code {code}")
            return code
    _keep_unchanged(before)
    print(f"\ndemo finished in {time.perf_counter() - started:.1f} s; outputs in {options.out}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
