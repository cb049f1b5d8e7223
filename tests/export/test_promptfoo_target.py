"""``export --format promptfoo``: the demo's contracts as a promptfoo config that promptfoo's
own config schema (0.123.1, vendored) accepts; its ``is-json`` schemas, validated as Ajv
does (draft-07, formats asserted), and its ``javascript`` assertions, run by node as
promptfoo runs them (a function body of ``output`` and ``context``), give on the demo's
recorded runs the verdict the monitor gives, contract by contract; a violating call fails
naming its contract. With ``TRACEMINE_PROMPTFOO`` naming a ``promptfoo`` executable (and
the Node.js it needs first on ``PATH``), ``promptfoo eval`` itself runs the config."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tracemine import read_traces
from tracemine.export import export_contracts
from tracemine.export._base import select_contracts
from tracemine.export.native import native_file
from tracemine.export.promptfoo import call_log
from tracemine.model.contract import Contract, ContractFile, Side, load_contracts
from tracemine.monitor import Monitor, replay

ROOT = Path(__file__).parents[2]
DEMO = ROOT / "mined_contracts" / "merged.json"
TRACES = ROOT / "data" / "all.otlp.jsonl.gz"
CONFIG_SCHEMA = ROOT / "tests" / "fixtures" / "promptfoo" / "config-schema.json"
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")

# promptfoo's way: new Function("output", "context", "process", body)(output, context)
RUNNER = """
const fs = require("fs");
const { bodies, outputs } = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const verdicts = {};
for (const [id, body] of Object.entries(bodies)) {
  const assertion = new Function("output", "context", "process", body);
  verdicts[id] = outputs.map((o) => {
    const r = assertion(o.output, { vars: o.vars || {} }, undefined);
    return [r.pass, r.score, r.reason];
  });
}
process.stdout.write(JSON.stringify(verdicts));
"""


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any]]:
    out = tmp_path_factory.mktemp("promptfoo") / "promptfooconfig.yaml"
    done = subprocess.run(
        [sys.executable, "-m", "tracemine", "export", "-c", str(DEMO), "-f", "promptfoo",
         "-o", str(out), "--include-proposed", "--traces", str(TRACES), "--json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["files"] == [str(out)]
    return yaml.safe_load(out.read_text("utf-8")), report


@pytest.fixture(scope="module")
def demo() -> ContractFile:
    return load_contracts(DEMO)


@pytest.fixture(scope="module")
def runs(demo: ContractFile) -> list[dict[str, Any]]:
    """Demo runs a call log can carry (every result under its own call id), each with the
    contract ids the monitor finds violated in it: clean ones and failing ones."""
    traces = read_traces(TRACES)
    families = {str(r["run_id"]): r.get("family") for r in traces.runs}
    by_run: dict[str, list[dict[str, Any]]] = {}
    for call in traces.calls:
        by_run.setdefault(str(call["run_id"]), []).append(call)
    native, _ = native_file(select_contracts(demo, include_proposed=True), demo)
    monitor = Monitor.from_dict(native.model_dump(mode="json"), include_proposed=True)
    gate = next(c.id for c in native.contracts if c.kind == "completeness")
    folded = {c.id: c.folded_into for c in native.contracts if c.folded_into}
    clean: list[dict[str, Any]] = []
    failing: list[dict[str, Any]] = []
    faulty = {f"{run_id}+{fault}": broken for run_id, calls in sorted(by_run.items())[:40]
              for fault, broken in faults(calls).items()}  # fmt: skip
    for run_id, calls in [*sorted(by_run.items()), *faulty.items()]:
        if any(c.get("result_call_id") not in (None, c.get("call_id")) for c in calls):
            continue
        family = families.get(run_id.split("+")[0])
        (seen,) = replay(monitor, calls, families={run_id: family})
        ids = {v.contract_id for o in seen.calls if o.receipt for v in o.receipt.violations}
        ids |= {v.contract_id for v in seen.verdict.violations}
        for gap in seen.verdict.gaps:
            named = re.search(r"\(contract (\S+)\)", gap.message)
            ids.add(named.group(1) if gap.code == "required_tool" and named else gate)
        # a schema compiles to nothing in the monitor: its members are how it is checked
        ids |= {folded[i] for i in ids if i in folded}
        case = {"run_id": run_id, "calls": calls, "violated": ids,
                "log": call_log(calls, family)}  # fmt: skip
        (failing if ids else clean).append(case)
    assert clean and failing, "the demo runs hold clean and failing ones"
    injected = [c for c in failing if "+" in c["run_id"]]
    return clean[:12] + [c for c in failing if "+" not in c["run_id"]][:16] + injected[:24]


def faults(calls: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The run with one result broken: a string made a number, a number made negative, a
    field dropped (the wrong_type, negative and omitted faults)."""
    out = {}
    for name in ("wrong_type", "negative", "omitted"):
        broken = copy.deepcopy(calls)
        for call in broken:
            result = call.get("result")
            if call["status"] != "ok" or not isinstance(result, dict):
                continue
            wanted = {"wrong_type": str, "negative": int, "omitted": object}[name]
            field = next((k for k, v in result.items() if isinstance(v, wanted)
                          and not isinstance(v, bool)), None)  # fmt: skip
            if field is None:
                continue
            if name == "omitted":
                del result[field]
            else:
                result[field] = 12345 if name == "wrong_type" else -abs(result[field]) - 1
            out[name] = broken
            break
    return out


def asserts_of(config: dict[str, Any], kind: str) -> dict[str, Any]:
    return {a["metric"]: a["value"] for a in config["defaultTest"]["assert"] if a["type"] == kind}


def run_javascript(bodies: dict[str, str], outputs: list[dict[str, Any]], tmp: Path) -> Any:
    assert NODE is not None
    (tmp / "runner.js").write_text(RUNNER, "utf-8")
    (tmp / "input.json").write_text(json.dumps({"bodies": bodies, "outputs": outputs}), "utf-8")
    done = subprocess.run([NODE, str(tmp / "runner.js"), str(tmp / "input.json")],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_promptfoo_config_schema_accepts_the_export(
    exported: tuple[dict[str, Any], dict[str, Any]], demo: ContractFile
) -> None:
    config, report = exported
    schema = json.loads(CONFIG_SCHEMA.read_text("utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    jsonschema.Draft7Validator(schema).validate(config)
    # the schema lets any assertion type through (a custom one): check ours are promptfoo's
    types = schema["definitions"]["__schema23"]["properties"]["type"]["anyOf"]
    known = {name for t in types for name in t.get("enum", [])}
    used = {a["type"] for a in config["defaultTest"]["assert"]}
    assert used == {"is-json", "javascript"} and used <= known
    # one assertion a contract, named by its id; nothing left out on the demo
    metrics = [a["metric"] for a in config["defaultTest"]["assert"]]
    chosen = [c.id for c in select_contracts(demo, include_proposed=True)]
    assert sorted(metrics) == sorted(chosen) and len(set(metrics)) == len(metrics)
    assert report["exported"] == report["selected"] == len(chosen)
    assert report["unexpressed"] == []
    assert len(config["tests"]) > 100
    assert all(isinstance(t["providerOutput"]["calls"], list) for t in config["tests"])


def test_the_schema_refuses_a_config_promptfoo_would_refuse(
    exported: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    config, _ = exported
    validator = jsonschema.Draft7Validator(json.loads(CONFIG_SCHEMA.read_text("utf-8")))
    wrong = copy.deepcopy(config)
    wrong["defaultTest"]["assert"][0]["metrics"] = wrong["defaultTest"]["assert"][0]["metric"]
    assert not validator.is_valid(wrong)  # a misspelt assertion field
    assert not validator.is_valid({k: v for k, v in config.items() if k != "prompts"})


def test_is_json_agrees_with_the_monitor(
    exported: tuple[dict[str, Any], dict[str, Any]], runs: list[dict[str, Any]]
) -> None:
    config, _ = exported
    schemas = asserts_of(config, "is-json")
    assert len(schemas) > 500
    checker = jsonschema.Draft7Validator.FORMAT_CHECKER
    disagree = []
    for cid, schema in schemas.items():
        jsonschema.Draft7Validator.check_schema(schema)
        assert "$schema" not in json.dumps(schema)
        validator = jsonschema.Draft7Validator(schema, format_checker=checker)
        for case in runs:
            if validator.is_valid(case["log"]) == (cid in case["violated"]):
                disagree.append((cid, case["run_id"]))
    assert disagree == []
    assert any(cid in case["violated"] for case in runs for cid in schemas)


@needs_node
def test_javascript_agrees_with_the_monitor(
    exported: tuple[dict[str, Any], dict[str, Any]], runs: list[dict[str, Any]], tmp_path: Path
) -> None:
    config, _ = exported
    bodies = asserts_of(config, "javascript")
    kinds = {re.search(r'\\"kind\\": \\"(\w+)', body).group(1)  # type: ignore[union-attr]
             for body in bodies.values()}  # fmt: skip
    assert {"one_of", "equals", "requires_prior", "provenance", "completeness"} <= kinds
    outputs = [{"output": case["log"]} for case in runs]
    verdicts = run_javascript(bodies, outputs, tmp_path)
    disagree = []
    for cid, results in verdicts.items():
        for case, (passed, score, reason) in zip(runs, results, strict=True):
            assert cid in reason and score == (1 if passed else 0)
            if passed == (cid in case["violated"]):
                disagree.append((cid, case["run_id"], reason))
    assert disagree == []
    failed = [r for rs in verdicts.values() for p, _, r in rs if not p]
    assert failed, "some javascript assertion fails on the failing demo runs"


@needs_node
def test_a_violating_call_fails_naming_its_contract(
    exported: tuple[dict[str, Any], dict[str, Any]], runs: list[dict[str, Any]], tmp_path: Path
) -> None:
    config, _ = exported
    case = next(c for c in runs if not c["violated"]
                and any(isinstance(call.get("result"), dict) for call in c["log"]["calls"]))  # fmt: skip
    broken = copy.deepcopy(case["log"])
    call = next(c for c in broken["calls"] if isinstance(c.get("result"), dict))
    field = next(k for k, v in call["result"].items() if isinstance(v, str))
    call["result"][field] = 12345  # the wrong_type fault
    failing = [cid for cid, schema in asserts_of(config, "is-json").items()
               if not jsonschema.Draft7Validator(schema).is_valid(broken)]  # fmt: skip
    assert failing, "a number where a string belongs fails an is-json assertion"
    # a run that repeats its last call's id and never answers a new call fails the gate
    unanswered = copy.deepcopy(case["log"])
    unanswered["calls"].append({"id": unanswered["calls"][-1].get("id", "c"), "name": "x"})
    bodies = {cid: body for cid, body in asserts_of(config, "javascript").items()
              if '\\"kind\\": \\"completeness' in body}  # fmt: skip
    ((cid, results),) = run_javascript(bodies, [{"output": case["log"]},
                                                {"output": json.dumps(unanswered)},
                                                {"output": "not a call log"}], tmp_path).items()  # fmt: skip
    assert [r[0] for r in results] == [True, False, False]
    assert cid in results[1][2] and "never answered" in results[1][2]
    assert "not a call log" in results[2][2]


@needs_node
def test_values_from_traces_are_quoted(tmp_path: Path) -> None:
    nasty = ['{{ 7*7 }}', '{% raw %}', '{#', '"); process.exit(3); ("', "`${1}`", "a\u2028b\n",
             "</script>", "\\u007b"]  # fmt: skip
    contract = Contract(tool='odd "tool" {{x}}', side=Side.RESULT, kind="one_of",
                        paths=['result["st{{a}}tus"]'], params={"values": nasty})  # fmt: skip
    source = ContractFile(contracts=[contract.model_copy(update={"status": "accepted"})])
    out = tmp_path / "promptfooconfig.yaml"
    report = export_contracts(source, "promptfoo", out)
    assert any("no --traces" in note for note in report.notes)
    config = yaml.safe_load(out.read_text("utf-8"))
    assert config["tests"] == []
    ((assertion,),) = [config["defaultTest"]["assert"]]
    body = assertion["value"]
    assert not any(tag in body for tag in ("{{", "{%", "{#"))
    outputs = [{"output": {"calls": [{"name": contract.tool, "result": {"st{{a}}tus": v}}
                                     for v in nasty]}},
               {"output": {"calls": [{"name": contract.tool, "result": {"st{{a}}tus": "new"}}]}}]  # fmt: skip
    (results,) = run_javascript({assertion["metric"]: body}, outputs, tmp_path).values()
    assert [r[0] for r in results] == [True, False]
    assert contract.id in results[1][2] and "new vocabulary" in results[1][2]


PROMPTFOO = os.environ.get("TRACEMINE_PROMPTFOO")


@pytest.mark.skipif(not PROMPTFOO, reason="set TRACEMINE_PROMPTFOO to a promptfoo executable")
def test_promptfoo_eval_runs_the_config(
    exported: tuple[dict[str, Any], dict[str, Any]], runs: list[dict[str, Any]], tmp_path: Path
) -> None:
    config, _ = exported
    clean = next(c for c in runs if not c["violated"])
    failing = next(c for c in runs if c["violated"])
    small = {**config, "tests": [{"description": c["run_id"], "vars": {"task": c["run_id"]},
                                  "providerOutput": c["log"]} for c in (clean, failing)]}  # fmt: skip
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(yaml.safe_dump(small, sort_keys=False), "utf-8")
    env = {**os.environ, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
           "PROMPTFOO_CONFIG_DIR": str(tmp_path / "home")}  # fmt: skip
    done = subprocess.run(
        [str(PROMPTFOO), "eval", "-c", str(path), "--no-cache", "--no-write", "--no-table",
         "-o", str(tmp_path / "out.json")],
        capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path,
    )  # fmt: skip
    results = json.loads((tmp_path / "out.json").read_text("utf-8"))["results"]
    assert [r["success"] for r in results["results"]] == [True, False], done.stdout[-2000:]
    scores = results["results"][1]["namedScores"]
    assert {cid for cid, score in scores.items() if score < 1} == failing["violated"]
