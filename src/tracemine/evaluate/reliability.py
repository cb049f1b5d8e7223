"""Rendering calibration: the per-tool and binned reliability tables, and a hand-written
SVG reliability plot (predicted on x, realized on y, the diagonal, Wilson error bars) so
the HTML report stays one file with no script and no network."""

from __future__ import annotations

from html import escape

from tracemine.evaluate.model import ArmResult, Calibration, FamilyCalibration, FamilyRow, Rate

TOOL_HEADER = ["tool", "kept by mining", "predicted", "realized [95% CI]", "nominal calls"]
BIN_HEADER = ["predicted bin", "tools", "nominal calls", "mean predicted", "realized [95% CI]"]


OVER_PRICE = "over price (chance of as many)"
FAMILY_HEADER = ["contract family", "contracts", "predicted per call",
                 "realized per call [95% CI]", "realized per task [95% CI]",
                 OVER_PRICE]  # fmt: skip


def _family_row(row: FamilyRow) -> list[str]:
    predicted = "no price" if row.predicted is None else f"{100 * row.predicted:.3f}%"
    if row.predicted is not None and 0 < row.predicted < 5e-6:
        predicted = "<0.001%"  # priced, if barely: 0.000% would read as free
    return [row.family, str(row.contracts), predicted, row.calls.text(2), row.tasks.text(2),
            _over(row)]  # fmt: skip


def _over(row: FamilyRow) -> str:
    """``yes (p 0.25)`` for a family above its price, ``yes, beyond chance`` below ``REFUTED``."""
    if not row.over_price:
        return ""
    said = "yes, beyond chance" if row.beyond_chance else "yes"
    return said if row.chance is None else f"{said} (p {row.chance:.2g})"


def family_rows(families: FamilyCalibration) -> list[list[str]]:
    """One row per contract family, then the pooled row over the priced families."""
    return [*(_family_row(row) for row in families.families), _family_row(families.priced)]


def fresh(arms: list[ArmResult]) -> list[tuple[str, FamilyCalibration]]:
    """The arms that carry a fresh-task calibration per family, in report order."""
    return [(arm.arm, arm.families) for arm in arms if arm.available and arm.families]


def _share(value: float | None) -> str:
    return "no prediction" if value is None else f"{100 * value:.2f}%"


def tool_rows(calibration: Calibration) -> list[list[str]]:
    """One row per tool, then the call-weighted row over the tools with a prediction."""
    rows = [
        [row.tool, "—" if row.kept is None else str(row.kept), _share(row.predicted),
         row.realized.text(2), str(row.realized.n)]
        for row in calibration.tools
    ]  # fmt: skip
    predicted = sum(1 for row in calibration.tools if row.predicted is not None)
    rows.append([f"all {predicted} tools with a prediction (call-weighted)", "",
                 _share(calibration.predicted), calibration.realized.text(2),
                 str(calibration.realized.n)])  # fmt: skip
    return rows


def bin_rows(calibration: Calibration) -> list[list[str]]:
    """One row per bin of predicted rate."""
    return [
        [b.label, str(b.tools), str(b.realized.n),
         "—" if b.predicted is None else f"{100 * b.predicted:.2f}%", b.realized.text(2)]
        for b in calibration.bins
    ]  # fmt: skip


def calibrated(arms: list[ArmResult]) -> list[tuple[str, Calibration]]:
    """The arms that carry a calibration, in report order."""
    return [(arm.arm, arm.calibration) for arm in arms if arm.available and arm.calibration]


def predicted(calibration: Calibration) -> bool:
    """Whether any tool has a prediction (else bins and the plot would be empty)."""
    return any(row.predicted is not None for row in calibration.tools)


def _ceiling(points: list[tuple[float, Rate]]) -> float:
    """The axes' upper end: past every prediction and realized rate, a round share."""
    top = max([0.02, *(p for p, _ in points), *(r.rate or 0.0 for _, r in points)])
    for step in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0):
        if top * 1.1 <= step:
            return step
    return 1.0


def reliability_chart(calibration: Calibration, colour: str = "#2f6fb0") -> str:
    """Predicted (x) against realized (y): small circles per tool, squares per bin, Wilson
    95 % error bars (cut at the top edge), and the diagonal a calibrated selection sits on."""
    tools = [(t.predicted, t.realized, t.tool) for t in calibration.tools
             if t.predicted is not None and t.realized.n]  # fmt: skip
    bins = [(b.predicted, b.realized, b.label) for b in calibration.bins
            if b.predicted is not None and b.realized.n]  # fmt: skip
    points = [(p, r) for p, r, _ in tools + bins if p is not None]
    top = _ceiling(points)
    left, size, pad = 50, 260, 30
    width, height = left + size + 20, size + pad + 30

    def x(v: float) -> float:
        return left + size * min(v, top) / top

    def y(v: float) -> float:
        return 10 + size * (1 - min(v, top) / top)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           'font-family="sans-serif" font-size="10">']  # fmt: skip
    for i in range(5):
        v = top * i / 4
        out.append(f'<line x1="{x(v):.1f}" x2="{x(v):.1f}" y1="10" y2="{10 + size}" '
                   f'stroke="#eee"/><line x1="{left}" x2="{left + size}" y1="{y(v):.1f}" '
                   f'y2="{y(v):.1f}" stroke="#eee"/><text x="{x(v):.1f}" y="{size + 24}" '
                   f'text-anchor="middle">{100 * v:g}%</text><text x="{left - 4}" '
                   f'y="{y(v) + 3:.1f}" text-anchor="end">{100 * v:g}%</text>')  # fmt: skip
    out.append(f'<line x1="{x(0)}" y1="{y(0)}" x2="{x(top)}" y2="{y(top)}" stroke="#999" '
               'stroke-dasharray="4 3"><title>realized = predicted</title></line>')  # fmt: skip
    for marks, radius in ((tools, 2.5), (bins, 4.5)):
        for predicted, realized, label in marks:
            if predicted is None or realized.rate is None:
                continue
            cx, cy = x(predicted), y(realized.rate)
            title = escape(f"{label}: predicted {_share(predicted)}, realized {realized.text(2)}")
            out.append(f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{y(realized.low or 0):.1f}" '
                       f'y2="{y(realized.high or 0):.1f}" stroke="{colour}" '
                       f'stroke-opacity="{0.4 if radius < 3 else 0.9}"/>')  # fmt: skip
            if radius < 3:
                out.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{radius}" fill="none" '
                           f'stroke="{colour}"><title>{title}</title></circle>')  # fmt: skip
            else:
                out.append(f'<rect x="{cx - radius:.1f}" y="{cy - radius:.1f}" '
                           f'width="{2 * radius}" height="{2 * radius}" fill="{colour}">'
                           f"<title>{title}</title></rect>")  # fmt: skip
    out.append(f'<text x="{left + size / 2}" y="{size + 38}" text-anchor="middle">'
               "predicted false alarms per call (○ tool, ■ bin)</text>")  # fmt: skip
    out.append(f'<text x="12" y="{10 + size / 2}" text-anchor="middle" '
               f'transform="rotate(-90 12 {10 + size / 2})">realized</text>')  # fmt: skip
    return "\n".join([*out, "</svg>"])
