"""The figures docs/arms.md prints are the ones ``tracemine arms`` prints today: the block
is rendered from the command's ``report.json`` and compared (``TRACEMINE_UPDATE_DOCS=1``
writes it instead)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

DOC = Path(__file__).resolve().parents[2] / "docs" / "arms.md"
BLOCK = re.compile(r"(<!-- arms-figures: begin[^\n]*-->\n)(.*?)(<!-- arms-figures: end -->)", re.S)
LABELS = ["complete-correct", "safe-incomplete", "unsafe-complete", "complete-wrong"]


def _rate(interval: dict[str, Any]) -> str:
    return (f"{100 * interval['rate']:.1f}% [{100 * interval['low']:.1f}, "
            f"{100 * interval['high']:.1f}]")  # fmt: skip


def _p(value: float) -> str:
    return "p < 0.0001" if value < 0.0001 else f"p = {value:.2g}"


def render(report: dict[str, Any]) -> str:
    """The block as docs/arms.md holds it."""
    settings, arms = report["settings"], report["arms"]
    faulty = next(p["n"] for p in report["paired"] if p["cases"] == "faulty")
    lines = [
        f"**Scripted agent, not a model's result** (`tracemine arms --suite {settings['suite']} "
        f"--tasks {settings['tasks']}",
        f"--agent {settings['agent']}`; {faulty} of the {report['cases']} cases faulty):",
        "",
        "| arm | runs | " + " | ".join(LABELS) + " | completion | false completion |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in settings["arms"]:
        arm = arms[name]
        counts = " | ".join(str(arm["labels"][label]) for label in LABELS)
        lines.append(f"| {name} | {arm['runs']} | {counts} | {_rate(arm['completion'])} | "
                     f"{_rate(arm['false_completion'])} |")  # fmt: skip

    def pair(arm: str, versus: str) -> dict[str, Any]:
        return next(p for p in report["paired"] if (p["arm"], p["versus"], p["cases"],
                    p["outcome"]) == (arm, versus, "faulty", "completion"))  # fmt: skip

    one, two = pair("guarded", "status-only"), pair("guarded", "guarded-no-recovery")
    lines += [
        "",
        f"On the faulty cases, guarded against status-only: completion "
        f"{100 * one['difference']:+.1f} points (exact McNemar",
        f"{_p(one['p_value'])}); guarded against guarded-no-recovery: "
        f"{100 * two['difference']:+.1f} points ({_p(two['p_value'])}). The scripted",
        "policy stops on every receipt it cannot clear, even where the wrong field did not "
        "matter to",
        "the answer, which is why its control arm completes less than status-only: a model's "
        "policy",
        "is what the command is for measuring.",
        "",
    ]
    return "\n".join(lines)


def test_the_doc_prints_what_the_command_prints(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tracemine", "arms", "--suite", "commerce", "--tasks", "40",
         "--agent", "scripted", "--out", str(tmp_path / "arms")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "arms" / "report.json").read_text("utf-8"))
    text = DOC.read_text("utf-8")
    found = BLOCK.search(text)
    assert found, "docs/arms.md has no arms-figures block"
    wanted = render(report)
    if os.environ.get("TRACEMINE_UPDATE_DOCS") == "1":
        DOC.write_text(text[: found.start(2)] + wanted + text[found.end(2) :], "utf-8")
        return
    assert found.group(2) == wanted, "run with TRACEMINE_UPDATE_DOCS=1 to rewrite the block"
