"""Names and ids in an incident trace are data: the generated pytest module carries them
as literals, so importing it runs nothing from the trace, and it still passes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import tracemine
from tracemine.incident import incident

from helpers import INNER_PYTEST

REPLICA = Path(__file__).parents[2] / "data" / "incidents" / "payout_off_file"
# each closes a docstring, a string or a line in its own way, and then runs code
_RUN = '__import__("pathlib").Path("{}").touch()'
INJECTION = {  # a name that closes the module's docstring, runs code and opens another
    "tool": f'create_payout"""\n{_RUN.format("PWNED_TOOL")}\n"""',
    "key": "account",
    "run_id": "incident",
    "call": "",
    "name": "payout",
}
EVERYTHING = {  # and every other character that ends a string, a line or a source file
    "tool": INJECTION["tool"] + "'''\\ #\x00\u2028\u0085",
    "key": f'account"""\n{_RUN.format("PWNED_KEY")}\n"""\u2028',
    "run_id": f"incident'\"\"\"\n{_RUN.format('PWNED_RUN')}\n#\x00\u2028\u0085'''",
    "call": f'"""\n{_RUN.format("PWNED_CALL")}\n#',
    "name": f'x"""\n{_RUN.format("PWNED_NAME")}\n"""',
}


def _hostile(source: Path, target: Path, names: dict[str, str], failing: bool) -> None:
    lines = []
    for line in source.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["tool"] == "create_payout":
            record["tool"] = names["tool"]
            record["arguments"][names["key"]] = record["arguments"].pop("account")
        if failing:
            record["run_id"] = names["run_id"]
            record["call_id"] = record["call_id"] + names["call"]
        lines.append(json.dumps(record))
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("names", [INJECTION, EVERYTHING], ids=["injection", "everything"])
def test_hostile_names_reach_the_generated_module_only_as_literals(
    tmp_path: Path, names: dict[str, str]
) -> None:
    _hostile(REPLICA / "nominal.jsonl", tmp_path / "nominal.jsonl", names, failing=False)
    _hostile(REPLICA / "incident.jsonl", tmp_path / "incident.jsonl", names, failing=True)
    tracemine.ingest([tmp_path / "nominal.jsonl"], tmp_path / "good.duckdb")
    out = tmp_path / "out"
    report = incident(tmp_path / "incident.jsonl", names["run_id"], tmp_path / "good.duckdb",
                      out, name=names["name"])  # fmt: skip
    (chosen,) = report.separating
    assert chosen.tool == names["tool"] and names["tool"] in chosen.description  # it got there
    (module,) = out.glob("test_incident_*.py")
    done = subprocess.run([*INNER_PYTEST,
                           "-p", "no:xdist", module.name], cwd=out, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert not [p.name for p in tmp_path.rglob("PWNED*")], "code from the trace ran"
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
