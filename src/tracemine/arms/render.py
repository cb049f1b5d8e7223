"""The arms report as Markdown and as one self-contained HTML page (inline SVG, no CDN)."""

from __future__ import annotations

import html as _html
from typing import Any

from tracemine.gate import LABELS

COLOURS = {
    "complete-correct": "#2e7d32",
    "safe-incomplete": "#9e9e9e",
    "unsafe-complete": "#c62828",
    "complete-wrong": "#ef6c00",
}


def pct(rate: dict[str, Any]) -> str:
    """``28.1% [17.0, 42.6] (9/32)``."""
    if rate.get("rate") is None:
        return "n/a"
    return (
        f"{100 * rate['rate']:.1f}% [{100 * rate['low']:.1f}, {100 * rate['high']:.1f}] "
        f"({rate['k']}/{rate['n']})"
    )


def _number(value: Any, digits: int = 0) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _arm_rows(arms: dict[str, Any]) -> list[list[str]]:
    rows = []
    for name, arm in arms.items():
        rows.append(
            [
                name,
                str(arm["runs"]),
                *(str(arm["labels"][label]) for label in LABELS),
                pct(arm["completion"]),
                pct(arm["false_completion"]),
                str(arm["recovery_attempts"]["total"]),
                _number(arm["tokens_per_run"]),
                _number(arm["latency_ms_per_run"]["mean"], 1),
            ]
        )
    return rows


ARM_HEADER = [
    "arm",
    "runs",
    *LABELS,
    "completion",
    "false completion",
    "recovery attempts",
    "tokens/run",
    "latency ms/run",
]
PAIR_HEADER = [
    "arm",
    "versus",
    "cases",
    "outcome",
    "only arm",
    "only versus",
    "difference",
    "exact McNemar p",
]


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _fault_rows(report: dict[str, Any]) -> list[list[str]]:
    rows = []
    groups = dict.fromkeys(g for arm in report["arms"].values() for g in arm["by_fault"])
    for group in groups:
        for name, arm in report["arms"].items():
            entry = arm["by_fault"].get(group)
            if entry:
                rows.append(
                    [
                        group,
                        name,
                        str(entry["runs"]),
                        *(str(entry["labels"][label]) for label in LABELS),
                        pct(entry["completion"]),
                        pct(entry["false_completion"]),
                    ]
                )
    return rows


def _pair_rows(report: dict[str, Any]) -> list[list[str]]:
    return [
        [
            p["arm"],
            p["versus"],
            f"{p['cases']} ({p['n']})",
            p["outcome"],
            str(p["only_arm"]),
            str(p["only_versus"]),
            "–" if p["difference"] is None else f"{100 * p['difference']:+.1f} pp",
            f"{p['p_value']:.3g}",
        ]
        for p in report["paired"]
    ]


def _intro(report: dict[str, Any]) -> list[str]:
    s = report.get("settings", {})
    agent = s.get("agent", "?") + (f" ({s['model']})" if s.get("model") else "")
    return [
        f"{report['cases']} cases of the {s.get('suite')} suite, each run once per arm in an "
        f"order drawn per case (seed {s.get('seed')}); agent: {agent}; faults: "
        f"{s.get('faults')} at rate {s.get('fault_rate')}; guarded contracts: "
        f"{s.get('contracts_source')}.",
        "Labels are computed from the trace files in traces/ (oracle.json, the contract "
        "files the runs name); intervals are Wilson 95%.",
    ]


def markdown(report: dict[str, Any]) -> str:
    """The report as Markdown."""
    parts = ["# Completion under faults: paired arms", "", *_intro(report), ""]
    if report.get("settings", {}).get("agent") == "scripted":
        parts += ["**Scripted agent**: a deterministic policy, not a model's result.", ""]
    parts += ["## Arms", "", _table(ARM_HEADER, _arm_rows(report["arms"])), ""]
    parts += [
        "## Per fault class",
        "",
        _table(
            ["faults", "arm", "runs", *LABELS, "completion", "false completion"],
            _fault_rows(report),
        ),
        "",
    ]
    parts += ["## Paired differences", "", _table(PAIR_HEADER, _pair_rows(report)), ""]
    if report.get("mismatches"):
        parts += [
            f"Runs whose recorded outcome differs from the read-back gate: "
            f"{', '.join(report['mismatches'])}",
            "",
        ]
    return "\n".join(parts)


def plot(report: dict[str, Any]) -> str:
    """Stacked bars of the four labels per arm, with the completion interval as a
    whisker over the complete-correct segment."""
    arms = report["arms"]
    left, width, bar, gap = 170, 480, 26, 14
    height = 40 + len(arms) * (bar + gap) + 40
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 30}" '
        f'height="{height}" font-family="sans-serif" font-size="12">'
    ]
    for tick in range(0, 101, 25):
        x = left + width * tick / 100
        out.append(f'<line x1="{x}" y1="30" x2="{x}" y2="{height - 40}" stroke="#ddd"/>')
        out.append(f'<text x="{x}" y="{height - 24}" text-anchor="middle">{tick}%</text>')
    for row, (name, arm) in enumerate(arms.items()):
        y = 36 + row * (bar + gap)
        out.append(
            f'<text x="{left - 8}" y="{y + bar * 0.65}" text-anchor="end">'
            f"{_html.escape(name)}</text>"
        )
        x = float(left)
        for label in LABELS:
            share = arm["labels"][label] / arm["runs"] if arm["runs"] else 0.0
            w = width * share
            if w > 0:
                out.append(
                    f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar}" '
                    f'fill="{COLOURS[label]}"><title>{label}: {arm["labels"][label]}'
                    f"</title></rect>"
                )
            x += w
        c = arm["completion"]
        x1, x2 = left + width * c["low"], left + width * c["high"]
        mid = y + bar / 2
        out.append(f'<line x1="{x1:.1f}" y1="{mid}" x2="{x2:.1f}" y2="{mid}" stroke="#000"/>')
        for xe in (x1, x2):
            out.append(
                f'<line x1="{xe:.1f}" y1="{mid - 5}" x2="{xe:.1f}" y2="{mid + 5}" stroke="#000"/>'
            )
    x = float(left)
    for label in LABELS:
        out.append(f'<rect x="{x}" y="8" width="10" height="10" fill="{COLOURS[label]}"/>')
        out.append(f'<text x="{x + 14}" y="17">{label}</text>')
        x += 125
    out.append("</svg>")
    return "\n".join(out)


def _html_table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{_html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{_html.escape(c)}</td>" for c in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def html(report: dict[str, Any]) -> str:
    """The report as one HTML page."""
    scripted = report.get("settings", {}).get("agent") == "scripted"
    note = "<p><strong>Scripted agent</strong>: a deterministic policy, not a model's result.</p>"
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            "<title>tracemine arms</title><style>body{font-family:sans-serif;margin:2em}"
            "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;"
            "padding:3px 8px;text-align:right}td:first-child,th:first-child{text-align:left}"
            "</style></head><body>",
            "<h1>Completion under faults: paired arms</h1>",
            *(f"<p>{_html.escape(line)}</p>" for line in _intro(report)),
            note if scripted else "",
            "<h2>Arms</h2>",
            plot(report),
            "<p>Bars: share of each arm's runs by label. Whisker: the Wilson 95% interval of "
            "completion (complete-correct).</p>",
            _html_table(ARM_HEADER, _arm_rows(report["arms"])),
            "<h2>Per fault class</h2>",
            _html_table(
                ["faults", "arm", "runs", *LABELS, "completion", "false completion"],
                _fault_rows(report),
            ),
            "<h2>Paired differences</h2>",
            _html_table(PAIR_HEADER, _pair_rows(report)),
            "</body></html>",
            "",
        ]
    )
