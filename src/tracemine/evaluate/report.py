"""Rendering an :class:`EvaluationReport`: Markdown and JSON, and HTML with the same tables
and inline SVG charts (no script, no network: the file opens anywhere)."""

from __future__ import annotations

from html import escape
from pathlib import Path

from tracemine._atomic import write_atomic
from tracemine.evaluate.model import ArmResult, EvaluationReport, Rate
from tracemine.evaluate.reliability import (
    BIN_HEADER,
    FAMILY_HEADER,
    TOOL_HEADER,
    bin_rows,
    calibrated,
    family_rows,
    fresh,
    predicted,
    reliability_chart,
    tool_rows,
)

_COLOURS = {"status-only": "#9e9e9e", "declared": "#f2a541", "inferred-schema": "#c8553d",
            "mined-no-crossfit": "#8fb9e0",
            "mined-crossfit": "#2f6fb0", "merged": "#3a9a5b",
            "oracle-peeking": "#a0508c"}  # fmt: skip


def write_reports(report: EvaluationReport, out: Path) -> dict[str, Path]:
    """Write ``report.md``, ``report.html`` and ``report.json`` into ``out``."""
    paths = {
        "markdown": out / "report.md",
        "html": out / "report.html",
        "json": out / "report.json",
    }
    report.outputs = {k: p.as_posix() for k, p in paths.items()}
    write_atomic(paths["markdown"], to_markdown(report))
    write_atomic(paths["html"], to_html(report))
    write_atomic(paths["json"], report.model_dump_json(indent=2) + "\n")
    return paths


def _pct(rate: Rate) -> str:
    return "n/a" if rate.rate is None else f"{100 * rate.rate:.0f}%"


def summary_rows(report: EvaluationReport) -> list[list[str]]:
    """One row per arm: contracts, false alarms per call and per run, mean detection and
    selection efficiency (against the oracle-peeking arm)."""
    rows = []
    for arm in report.arms:
        if not arm.available:
            rows.append([arm.arm, "—", arm.note, "", "", ""])
            continue
        covered = "n/a" if arm.detection_covered is None else f"{100 * arm.detection_covered:.1f}%"
        efficiency = arm.selection_efficiency
        rows.append([arm.arm, str(arm.contracts), arm.false_alarms.text(2),
                     arm.run_false_alarms.text(1), covered,
                     "n/a" if efficiency is None else f"{100 * efficiency:.0f}%"])  # fmt: skip
    return rows


SUMMARY_HEADER = ["arm", "contracts", "false alarms per nominal call [95% CI]",
                  "nominal runs with an alarm", "mean detection, covered classes",
                  "selection efficiency (÷ oracle)"]  # fmt: skip


TEXT_HEADER = ["arm", "calls judged alike as text and as value",
               "false alarms per nominal call, results as text [95% CI]"]  # fmt: skip


def text_rows(report: EvaluationReport) -> list[list[str]]:
    """One row per arm with a monitor: the same runs with every result given as its
    content text (as an agent loop passes it) against the parsed values."""
    return [
        [arm.arm, arm.text.agreement.text(2), arm.text.false_alarms.text(2)]
        for arm in report.arms
        if arm.available and arm.text is not None
    ]


def class_rows(report: EvaluationReport, field: str = "detection") -> list[list[str]]:
    """One row per fault class: its group, coverage, faults injected and each arm's rate."""
    arms = [a for a in report.arms if a.available]
    rows = []
    first = arms[0] if arms else None
    for row in first.classes if first else []:
        cells = [row.fault_class, row.group, row.coverage, str(row.injected)]
        for arm in arms:
            found = arm.row(row.fault_class)
            cells.append(_pct(getattr(found, field)) if found else "n/a")
        rows.append(cells)
    return rows


def class_header(report: EvaluationReport) -> list[str]:
    return ["fault class", "group", "coverage", "injected"] + [
        a.arm for a in report.arms if a.available
    ]


def _md(text: str) -> str:
    """Text from traces as Markdown shows it literally: renderers pass HTML through, so a
    tool named ``<img src=x onerror=…>`` would be markup; a newline would end a table row."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace("\r", " ").replace("\n", " ")


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(_md(cell).replace("|", "\\|") for cell in row) + " |"
              for row in rows]  # fmt: skip
    return "\n".join(lines)


def _facts(report: EvaluationReport) -> list[str]:
    s = report.settings
    return [
        f"source: {report.source}",
        f"declared specs: {', '.join(Path(p).name for p in report.specs) or 'none'}",
        f"tasks: {report.tasks.get('mining')} mining, {report.tasks.get('evaluation')} "
        f"evaluation (task-disjoint, seed {s.get('seed')}); calls: {report.calls.get('mining')} "
        f"mining, {report.calls.get('evaluation')} nominal evaluation",
        f"mining: {s.get('folds')} folds, target false-alarm {s.get('target_fa')}, "
        f"min tasks {s.get('min_tasks')}; at most {s.get('max_faults')} faulted runs per class",
        "contracts go to the monitor with include_proposed=True: an evaluation has no human "
        "review, so proposed contracts are enforced as if accepted",
    ]


def to_markdown(report: EvaluationReport) -> str:
    """The report as Markdown."""
    parts = ["# tracemine evaluation", ""]
    parts += [f"- {_md(fact)}" for fact in _facts(report)]
    parts += ["", "## Arms", "", _md_table(SUMMARY_HEADER, summary_rows(report)), ""]
    # what each arm enforces, so the oracle reads as peeking wherever the table is read
    parts += [f"- **{arm.arm}**: {arm.description}" for arm in report.arms] + [""]
    parts += [f"- {arm.arm}: {_md(arm.note)}" for arm in report.arms if arm.available and arm.note]
    parts += [""] if any(arm.available and arm.note for arm in report.arms) else []
    parts += ["## Results given as content text", "",
              _md_table(TEXT_HEADER, text_rows(report)), ""]  # fmt: skip
    parts += ["## Detection per fault class", "",
              _md_table(class_header(report), class_rows(report)), "",
              "## Localization per fault class (share of detected faults)", "",
              _md_table(class_header(report), class_rows(report, "localization")), ""]  # fmt: skip
    parts += _calibration_markdown(report)
    parts += _families_markdown(report)
    parts += ["## Noisiest contracts on nominal calls", ""]
    for arm in report.arms:
        for n in arm.noisiest:
            parts.append(f"- {arm.arm}: {n['alarms']} × {n['source']} `{n['id']}` "
                         f"{_md(n['tool'])} {_md(n['path'])}")  # fmt: skip
    parts += ["", "## Definitions", ""]
    parts += [f"- **{name}**: {text}" for name, text in report.definitions.items()]
    if report.notes:
        parts += ["", "## Notes", ""] + [f"- {_md(note)}" for note in report.notes]
    parts += ["", f"Evaluated in {report.seconds:.1f} s.", ""]
    return "\n".join(parts)


def _calibration_markdown(report: EvaluationReport) -> list[str]:
    parts = ["## Calibration: predicted against realized false alarms", ""]
    for name, calibration in calibrated(report.arms):
        parts += [f"### {name}", ""]
        parts += [f"_{calibration.note}_", ""] if calibration.note else []
        parts += [_md_table(TOOL_HEADER, tool_rows(calibration)), ""]
        if predicted(calibration):
            parts += [_md_table(BIN_HEADER, bin_rows(calibration)), ""]
    return parts if len(parts) > 2 else []


_FAMILIES_TITLE = "Fresh-task calibration per contract family"


def _families_markdown(report: EvaluationReport) -> list[str]:
    parts = [f"## {_FAMILIES_TITLE}", ""]
    for name, families in fresh(report.arms):
        parts += [f"### {name}", "", _md_table(FAMILY_HEADER, family_rows(families)), ""]
        parts += [f"_{_md(families.note)}_", ""] if families.note else []
    return parts if len(parts) > 2 else []


def _families_html(report: EvaluationReport) -> str:
    parts = []
    for name, families in fresh(report.arms):
        parts += [f"<h3>{escape(name)}</h3>", _html_table(FAMILY_HEADER, family_rows(families))]
        parts += [f"<p><i>{escape(families.note)}</i></p>"] if families.note else []
    return "\n".join([f"<h2>{_FAMILIES_TITLE}</h2>", *parts]) if parts else ""


def _calibration_html(report: EvaluationReport) -> str:
    parts = []
    for name, calibration in calibrated(report.arms):
        parts += [f"<h3>{escape(name)}</h3>"]
        parts += [f"<p><i>{escape(calibration.note)}</i></p>"] if calibration.note else []
        if predicted(calibration):
            parts += [reliability_chart(calibration, _COLOURS.get(name, "#555")),
                      _html_table(BIN_HEADER, bin_rows(calibration))]  # fmt: skip
        parts += [_html_table(TOOL_HEADER, tool_rows(calibration))]
    if not parts:
        return ""
    return "\n".join(["<h2>Calibration: predicted against realized false alarms</h2>", *parts])


def _html_table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    # a table wider than the page scrolls in its wrapper; the page itself never does
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    return f'<div class="wide">{table}</div>'


def heat_table(report: EvaluationReport, field: str = "detection") -> str:
    """Fault classes × arms: each arm's rate as a cell shaded by its value, read at a
    glance where grouped bars of six arms were not."""
    arms = [a for a in report.arms if a.available]
    header = class_header(report)
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = []
    for cells in class_rows(report, field):
        row = "".join(f"<td>{escape(cell)}</td>" for cell in cells[:4])
        for arm, cell in zip(arms, cells[4:], strict=True):
            found = arm.row(cells[0])
            rate = getattr(found, field).rate if found else None
            if rate is None:
                row += f'<td class="na">{escape(cell)}</td>'
                continue
            ink = "#fff" if rate > 0.55 else "#222"  # readable on the dark end
            row += (
                f'<td class="heat" style="background:rgba(47,111,176,{0.08 + 0.92 * rate:.2f});'
                f'color:{ink}" title="{escape(arm.arm)}: {escape(cell)}">{escape(cell)}</td>'
            )
        body.append(f"<tr>{row}</tr>")
    return (
        f'<div class="wide"><table class="heat"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def detection_chart(arms: list[ArmResult], field: str = "detection") -> str:
    """Grouped horizontal bars: one group per fault class, one bar per arm."""
    arms = [a for a in arms if a.available]
    classes = [c.fault_class for c in arms[0].classes] if arms else []
    bar, gap, left, width = 7, 8, 170, 420
    group = bar * len(arms) + gap
    height = group * len(classes) + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 60}" '
           f'height="{height}" font-family="sans-serif" font-size="11">']  # fmt: skip
    for tick in range(0, 101, 25):
        x = left + width * tick / 100
        out.append(f'<line x1="{x}" x2="{x}" y1="0" y2="{height - 30}" stroke="#ddd"/>')
        out.append(f'<text x="{x}" y="{height - 18}" text-anchor="middle">{tick}%</text>')
    for i, name in enumerate(classes):
        y0 = i * group
        out.append(f'<text x="{left - 6}" y="{y0 + group / 2}" text-anchor="end">'
                   f"{escape(name)}</text>")  # fmt: skip
        for j, arm in enumerate(arms):
            row = arm.row(name)
            rate = getattr(row, field).rate if row else None
            w = width * (rate or 0.0)
            title = f"{arm.arm}: {getattr(row, field).text()}" if row else arm.arm
            out.append(f'<rect x="{left}" y="{y0 + j * bar}" width="{w:.1f}" height="{bar - 1}" '
                       f'fill="{_COLOURS.get(arm.arm, "#555")}"><title>{escape(title)}'
                       "</title></rect>")  # fmt: skip
    x, y = 10, height - 10
    for arm in arms:
        step = 20 + 7 * len(arm.arm)  # 7 px a character at 11 px, with room to spare
        if x + step > left + width + 60:  # the next entry on a row of its own, not clipped
            x, y = 10, y + 14
        out.append(f'<rect x="{x}" y="{y}" width="10" height="8" '
                   f'fill="{_COLOURS.get(arm.arm, "#555")}"/><text x="{x + 13}" '
                   f'y="{y + 8}">{escape(arm.arm)}</text>')  # fmt: skip
        x += step
    out[0] = out[0].replace(f'height="{height}"', f'height="{y + 12}"')
    return "\n".join([*out, "</svg>"])


def to_html(report: EvaluationReport) -> str:
    """The report as one self-contained HTML page."""
    facts = "".join(f"<li>{escape(fact)}</li>" for fact in _facts(report))
    definitions = "".join(
        f"<li><b>{escape(k)}</b>: {escape(v)}</li>" for k, v in report.definitions.items()
    )
    notes = "".join(f"<li>{escape(note)}</li>" for note in report.notes)
    described = "".join(
        f"<li><b>{escape(arm.arm)}</b>: {escape(arm.description)}</li>" for arm in report.arms
    )
    arm_notes = f"<ul>{described}</ul>" + "".join(
        f"<p>{escape(arm.arm)}: {escape(arm.note)}</p>"
        for arm in report.arms
        if arm.available and arm.note
    )
    style = (
        "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;"
        "color:#222;box-sizing:border-box}"
        # tables scroll sideways in their wrapper when the window is narrower than they are
        ".wide{overflow-x:auto;max-width:100%;margin:1em 0}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;"
        "padding:3px 8px;text-align:right}td:first-child,th:first-child{text-align:left}"
        "th{vertical-align:bottom}td.na{color:#999}"
        "svg{display:block;max-width:100%;overflow:hidden}"
        "li,p{overflow-wrap:anywhere}"
    )
    return "\n".join([
        "<!doctype html>", '<html><head><meta charset="utf-8">',
        f"<title>tracemine evaluation</title><style>{style}</style></head><body>",
        "<h1>tracemine evaluation</h1>", f"<ul>{facts}</ul>",
        "<h2>Arms</h2>", _html_table(SUMMARY_HEADER, summary_rows(report)), arm_notes,
        "<h2>Results given as content text</h2>", _html_table(TEXT_HEADER, text_rows(report)),
        "<h2>Detection per fault class</h2>", heat_table(report),
        "<h2>Localization per fault class (share of detected faults)</h2>",
        heat_table(report, "localization"),
        _calibration_html(report), _families_html(report),
        "<h2>Definitions</h2>", f"<ul>{definitions}</ul>",
        f"<h2>Notes</h2><ul>{notes}</ul>" if notes else "",
        f"<p>Evaluated in {report.seconds:.1f} s.</p>", "</body></html>", "",
    ])  # fmt: skip
