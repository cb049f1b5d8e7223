"""Round trips: exported JSON Schemas accept every nominal result the contracts were
mined from and reject injected structural faults; the overlay applied to the source spec
is a valid OpenAPI document whose response schemas do the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from tracemine.export import apply_overlay, export_contracts
from tracemine.faults import inject
from tracemine.model.contract import Contract, ContractFile, Predicate
from tracemine.review import review_path

STRUCTURAL = ["field_omitted", "field_null", "wrong_type"]


def _schemas(directory: Path) -> dict[str, Draft202012Validator]:
    validators = {}
    for path in sorted(directory.glob("*.result.schema.json")):
        schema = json.loads(path.read_text())
        Draft202012Validator.check_schema(schema)
        validators[schema["title"].removesuffix(" result")] = Draft202012Validator(schema)
    return validators


def _faulted_results(mined: Any) -> list[tuple[Any, Any]]:
    faulty, truth = inject(mined.runs, STRUCTURAL, rate=1.0, seed=3)
    by_run = {run["run_id"]: run for run in faulty}
    out = []
    for record in truth:
        if record.side != "result":
            continue
        call = next(c for c in by_run[record.run_id]["calls"] if c["call_id"] == record.call_id)
        out.append((record, call["result"]))
    return out


def test_jsonschema_accepts_nominal_results(mined: Any, tmp_path: Path) -> None:
    report = export_contracts(mined.candidates, "jsonschema", tmp_path)
    validators = _schemas(tmp_path)
    assert set(validators) == {t for t, _ in mined.ok_results()}
    for tool, result in mined.ok_results():
        errors = list(validators[tool].iter_errors(result))
        assert not errors, f"{tool}: nominal result rejected: {errors[0].message}"
    # nothing vanished: every accepted contract is exported or reported with a reason
    assert report.exported + len(report.unexpressed) == report.selected
    assert all(u.reason for u in report.unexpressed)


def test_jsonschema_rejects_structural_faults(mined: Any, tmp_path: Path) -> None:
    export_contracts(mined.candidates, "jsonschema", tmp_path)
    validators = _schemas(tmp_path)
    faults = _faulted_results(mined)
    assert {r.fault_class for r, _ in faults} == set(STRUCTURAL)
    missed = [(r.fault_class, r.tool, r.path) for r, result in faults
              if validators[r.tool].is_valid(result)]  # fmt: skip
    assert not missed, f"structural faults the schemas accept: {missed[:5]}"


def _registry_validator(document: dict[str, Any], pointer: str) -> Draft202012Validator:
    resource = Resource(contents=document, specification=DRAFT202012)
    registry = Registry().with_resource("urn:spec", resource)
    return Draft202012Validator({"$ref": f"urn:spec#{pointer}"}, registry=registry)


def _pointer(keys: list[str]) -> str:
    return "".join("/" + k.replace("~", "~0").replace("/", "~1") for k in keys)


def test_overlay_yields_a_valid_openapi_document(mined: Any, tmp_path: Path) -> None:
    out = tmp_path / "contracts.overlay.yaml"
    report = export_contracts(mined.candidates, "openapi-overlay", out, spec=mined.spec)
    overlay = yaml.safe_load(out.read_text())
    assert overlay["overlay"] == "1.0.0" and overlay["info"]["title"] and overlay["actions"]
    assert (out.parent / overlay["extends"]).resolve() == mined.spec.resolve()
    assert all(a["target"].startswith("$") for a in overlay["actions"])
    source = yaml.safe_load(mined.spec.read_text())
    patched = apply_overlay(source, overlay)
    assert source == yaml.safe_load(mined.spec.read_text()), "the source must stay untouched"
    assert patched["openapi"] == source["openapi"] and patched["info"] == source["info"]
    assert report.exported > 0
    # every operation's success response schema is a valid 3.1 (2020-12) schema that
    # still accepts the nominal results the spec accepted (the example spec declares an
    # enum the traces outgrew) and now rejects the structural faults
    validators, before = {}, {}
    for route, item in patched["paths"].items():
        for method, operation in item.items():
            if not isinstance(operation, dict) or "operationId" not in operation:
                continue
            for code, response in operation["responses"].items():
                schema = response.get("content", {}).get("application/json", {}).get("schema")
                if schema is None or not str(code).startswith("2"):
                    continue
                Draft202012Validator.check_schema(schema)
                keys = ["paths", route, method, "responses", str(code), "content",
                        "application/json", "schema"]  # fmt: skip
                tool = operation["operationId"]
                validators[tool] = _registry_validator(patched, _pointer(keys))
                before[tool] = _registry_validator(source, _pointer(keys))
    accepted = [(t, r) for t, r in mined.ok_results() if before[t].is_valid(r)]
    assert len(accepted) > len(mined.ok_results()) / 2
    for tool, result in accepted:
        assert validators[tool].is_valid(result), f"{tool}: nominal result rejected"
    missed = [(r.fault_class, r.path) for r, result in _faulted_results(mined)
              if validators[r.tool].is_valid(result)]  # fmt: skip
    assert not missed, f"structural faults the overlaid spec accepts: {missed[:5]}"


def test_overlay_for_openapi_30_downgrades_keywords(mined: Any, tmp_path: Path) -> None:
    document = yaml.safe_load(mined.spec.read_text())
    document["openapi"] = "3.0.3"
    spec = tmp_path / "commerce30.yaml"
    spec.write_text(yaml.safe_dump(document))
    # a result-conditioned contract, as mining finds on richer data: 3.0 has no if/then
    conditional = Contract(tool="get_order", side="result", kind="non_empty",
                           paths=["result.items"], status="accepted",
                           when=Predicate(path="result.status", op="==", value="delivered"))  # fmt: skip
    candidates = ContractFile.model_validate_json(mined.candidates.read_text())
    candidates.contracts.append(conditional)
    out = tmp_path / "overlay.json"
    report = export_contracts(candidates, "openapi-overlay", out, spec=spec,
                              review=review_path(mined.candidates))  # fmt: skip
    text = out.read_text()
    assert '"const"' not in text and '"if"' not in text and '"type": "null"' not in text
    reported = [u.id for u in report.unexpressed if "if/then" in u.reason]
    assert conditional.id in reported, "conditional contracts are reported for 3.0, not dropped"
    apply_overlay(document, json.loads(text))
