"""Charts for reviewing contracts (altair, so they render in Jupyter; the review notebook
draws them as SVG with ``alt.renderers.enable("svg")``, so they show without a network).
Points are aggregated first: a file of tens of thousands of contracts stays a small chart."""

from __future__ import annotations

from typing import Any

import polars as pl

STATUS_COLORS = {"proposed": "#9e9e9e", "accepted": "#2e7d32", "rejected": "#c62828",
                 "muted": "#f9a825"}  # fmt: skip


def _status_scale() -> Any:
    import altair as alt

    return alt.Scale(domain=list(STATUS_COLORS), range=list(STATUS_COLORS.values()))


def support_chart(frame: pl.DataFrame) -> Any:
    """Support (distinct tasks) against held-out violations, one point per group of
    contracts of the same tool, kind, status and counts; bigger points stand for more
    contracts. Contracts high on the chart failed on tasks they were not mined from.

    >>> support_chart(contracts_frame(contracts))  # doctest: +SKIP
    """
    import altair as alt

    points = (
        frame.filter(pl.col("tasks").is_not_null())
        .group_by("tool", "kind", "status", "tasks", "heldout_violations")
        .agg(pl.len().alias("contracts"), pl.col("description").first().alias("example"))
    )
    return (
        alt.Chart(
            points.sort("tool", "kind", "status", "tasks"), title="Support vs held-out violations"
        )
        .mark_circle(opacity=0.7)
        .encode(
            x=alt.X("tasks:Q", title="supporting tasks"),
            y=alt.Y("heldout_violations:Q", title="held-out violations"),
            size=alt.Size("contracts:Q", title="contracts"),
            color=alt.Color("status:N", scale=_status_scale()),
            tooltip=[
                "tool:N",
                "kind:N",
                "status:N",
                "tasks:Q",
                "heldout_violations:Q",
                "contracts:Q",
                "example:N",
            ],
        )
    )


def coverage_chart(frame: pl.DataFrame) -> Any:
    """Contracts per tool, stacked by status: which tools are covered, and how much of
    each has been reviewed.

    >>> coverage_chart(contracts_frame(contracts))  # doctest: +SKIP
    """
    import altair as alt

    bars = frame.group_by("tool", "status").agg(pl.len().alias("contracts"))
    return (
        alt.Chart(bars.sort("tool", "status"), title="Contracts per tool")
        .mark_bar()
        .encode(
            y=alt.Y("tool:N", sort="-x", title=None),
            x=alt.X("contracts:Q", title="contracts"),
            color=alt.Color("status:N", scale=_status_scale()),
            tooltip=["tool:N", "status:N", "contracts:Q"],
        )
    )
