"""Tables that fit the terminal, so that a person reads them at 80 columns as at 120.

Rich shares a narrow width out among all columns, which squeezes the one column a reader
reads (a contract's text) to a few characters while ids keep theirs. :func:`fit` decides
instead, in this order, until the table fits: compact headers, compound cells broken at
their parts (``0.00% [0.00, 2.46] (0/152)`` on three lines), then the optional columns
dropped, least useful first. Other columns never wrap; the one ``text`` column takes the
width left over and wraps there.

>>> table, dropped = fit("contracts", [Column("id"), Column("contract", text=True)], rows, 80)
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from rich import box
from rich.table import Table
from rich.text import Text

from tracemine.cli._common import printable

GAP = 2  # between two columns: one space of padding, one of the (blank) divider
TEXT_MIN = 36  # a text column narrower than this is read a few words a line


@dataclass(frozen=True)
class Column:
    """One column: its header, and how it gives way when the terminal is narrow.

    ``compact``: the header when the full one does not fit (line breaks allowed; by
    default the header wrapped to the width of the cells). ``split``: cells break onto
    lines at `` [`` and ``] (``. ``drop`` > 0: a column that can be left out, the highest
    first. ``text``: the column that takes the width left over and wraps.
    """

    header: str
    compact: str | None = None
    numeric: bool = False
    text: bool = False
    split: bool = False
    drop: int = 0


def fit(
    title: str, columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int
) -> tuple[Table, list[str]]:
    """A rich table of ``rows`` no wider than ``width`` where that can be had, and the
    headers of the columns left out to get there."""
    # cells and titles carry text from traces: controls shown escaped (and so measured as
    # shown), and plain Text below, never read as markup
    rows = [[printable(cell, markup=False) for cell in row] for row in rows]
    keep = list(range(len(columns)))
    compact = split = False
    droppable = sorted((c.drop, i) for i, c in enumerate(columns) if c.drop)
    while True:
        widths = [_width(columns[i], rows, i, compact, split) for i in keep]
        if sum(widths) + GAP * (len(keep) - 1) <= width:
            break
        if not compact:
            compact = True
        elif not split and any(columns[i].split for i in keep):
            split = True
        elif droppable:
            keep.remove(droppable.pop()[1])
        else:
            break  # as narrow as it gets: the terminal wraps what is left
    heading = Text(printable(title, markup=False))
    table = Table(title=heading, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False,
                  pad_edge=False, collapse_padding=True)  # fmt: skip
    for i in keep:
        column = columns[i]
        table.add_column(
            _header(column, rows, i, compact, split),
            justify="right" if column.numeric else "left",
            no_wrap=not column.text,
            overflow="fold",
            min_width=None if column.text else _width(column, rows, i, compact, split),
        )
    for row in rows:
        table.add_row(*(Text(_cell(row[i], split and columns[i].split)) for i in keep))
    dropped = [c.header for i, c in enumerate(columns) if i not in keep]
    return table, dropped


def left_out(dropped: list[str], width: int) -> str | None:
    """The line that says which columns a narrow terminal left out, if any."""
    if not dropped:
        return None
    return f"({', '.join(dropped)} left out at {width} columns; --json has every field)"


def _width(column: Column, rows: Sequence[Sequence[str]], i: int, compact: bool,
           split: bool) -> int:  # fmt: skip
    header = _header(column, rows, i, compact, split)
    widest = max(_cells_width(column, rows, i, split), *map(len, header.split("\n")))
    return min(widest, TEXT_MIN) if column.text else widest


def _cells_width(column: Column, rows: Sequence[Sequence[str]], i: int, split: bool) -> int:
    cells = [_cell(row[i], split and column.split) for row in rows]
    return max((len(line) for text in cells for line in text.split("\n")), default=0)


def _header(column: Column, rows: Sequence[Sequence[str]], i: int, compact: bool,
            split: bool) -> str:  # fmt: skip
    if not compact:
        return column.header
    if column.compact is not None:
        return column.compact
    width = _cells_width(column, rows, i, split)
    if column.text:
        width = min(width, TEXT_MIN)
    # as narrow as the cells, breaking at spaces and after hyphens
    return textwrap.fill(column.header, width=max(width, 1), break_long_words=False)


def _cell(text: str, split: bool) -> str:
    return text.replace(" [", "\n[").replace("] (", "]\n(") if split else text
