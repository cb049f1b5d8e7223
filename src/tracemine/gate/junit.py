"""A check report as JUnit XML, the file CI systems show as test results: one test case
per run, failed by its violations and incomplete verdict."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from tracemine.gate.api import CheckReport, RunSummary
from tracemine.gate.trials import noisy_notes


def junit_xml(report: CheckReport) -> str:
    """JUnit XML: a suite ``contracts`` with one testcase per tool·contract (failed when
    violated, skipped when no call exercised it or, with trials and not strict, when it is
    noisy between trials) and a suite ``runs`` with one testcase per run (failed when
    incomplete, or when a steady contract broke on the run or on one of its calls)."""
    root = ET.Element("testsuites", name="tracemine check")
    noisy = noisy_notes(report.trials)
    suite = ET.SubElement(root, "testsuite", name="contracts", tests=str(len(report.contracts)),
                          failures=str(sum(c.violated > 0 and c.contract_id not in noisy
                                           for c in report.contracts)))  # fmt: skip
    for c in report.contracts:
        case = ET.SubElement(suite, "testcase", classname=c.tool,
                             name=f"{c.kind} {c.path} [{c.contract_id}]")  # fmt: skip
        if c.violated and c.contract_id in noisy:
            ET.SubElement(case, "skipped", message=noisy[c.contract_id])
        elif c.violated:
            failure = ET.SubElement(
                case,
                "failure",
                type=c.kind,
                message=f"{c.violated} of {c.checked} checked calls violate it",
            )
            failure.text = "\n".join(c.examples)
        elif not c.checked:
            reason = f"not evaluated on {c.not_evaluated} calls" if c.not_evaluated else "no call"
            ET.SubElement(case, "skipped", message=reason)
    failed_runs = [r for r in report.runs if r.verdict != "complete" or any(
        v.get("contract_id") not in noisy for v in r.violations) or any(
        cid not in noisy for cid in r.call_violations)]  # fmt: skip
    failed_ids = {id(r) for r in failed_runs}
    runs = ET.SubElement(root, "testsuite", name="runs", tests=str(len(report.runs)),
                         failures=str(len(failed_runs)))  # fmt: skip
    for r in report.runs:
        case = ET.SubElement(runs, "testcase", classname="runs", name=r.run_id)
        if id(r) in failed_ids:
            problems = r.gaps + [f"{v['path']}: expected {v['expected']}, got {v['observed']}"
                                 for v in r.violations] + _call_problems(r)  # fmt: skip
            failure = ET.SubElement(case, "failure", type=r.verdict, message=problems[0][:200])
            failure.text = "\n".join(problems)
    for element in root.iter():  # names and messages come from traces: make them XML
        if element.text:
            element.text = _xml_text(element.text)
        element.attrib = {key: _xml_text(value) for key, value in element.attrib.items()}
    return ET.tostring(root, encoding="unicode", xml_declaration=True)


def _call_problems(run: RunSummary) -> list[str]:
    if not run.call_violations:
        return []
    calls = sum(run.call_violations.values())
    head = f"{calls} call-level violations of {len(run.call_violations)} contracts"
    return [head, *run.call_examples]


_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_text(text: str) -> str:
    """``text`` with each character XML 1.0 forbids (controls, lone surrogates, U+FFFE,
    U+FFFF) written as its escape (``\\x00``, ``\\ud800``), so nothing is silently lost."""
    return _NOT_XML.sub(lambda m: ascii(m.group())[1:-1], text)
