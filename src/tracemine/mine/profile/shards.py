"""Where mining reads its calls: one store, or the stores of many shards of one corpus.

Every mining step that reads calls or values is written as a *shard step*, a function
``step(con, *args)`` run on the connection of each shard's store, and a merge of what
the shards returned, which is exact: counts add, minima and maxima combine, rows of calls
are concatenated in key order. A task never spans two shards (the engine merges the
stores of shards that share one), so whatever a step counts per task is whole within one
shard. The single store is the case of one shard, whose connection also holds the
merged profiles: :func:`tracemine.mine.mine` runs the very steps and merges that a
sharded mine (:mod:`tracemine.engine`) runs on many.

Each step's connection is prepared with the mine's :class:`Setup`: the view ``tm_values``
(the values, with maps' keys read as ``{*}``) and ``_tm_folds`` (task → fold).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import duckdb
import pyarrow as pa

from tracemine.mine.profile.maps import values_view_sql

T = TypeVar("T")


@dataclass(frozen=True)
class Setup:
    """What a step's connection needs besides the store: the objects read as maps and the
    fold of every task (None before folds are assigned)."""

    maps: tuple[tuple[str, str], ...] = ()
    assignment: Mapping[str, int] | None = None


def prepare(con: duckdb.DuckDBPyConnection, setup: Setup) -> None:
    """Create ``tm_values`` for ``setup.maps`` (once ``tm_calls`` exists) and register
    ``_tm_folds``."""
    if has_table(con, "tm_calls"):
        con.execute(values_view_sql(list(setup.maps)))
    if setup.assignment is not None:
        con.register("_tm_folds", folds_table(setup.assignment))


def folds_table(assignment: Mapping[str, int]) -> pa.Table:
    return pa.table({"task": pa.array(list(assignment), pa.string()),
                     "fold": pa.array(list(assignment.values()), pa.int64())})  # fmt: skip


def has_table(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    """Whether the store on ``con`` has a (stored, not temporary) table ``name``."""
    rows = con.execute(
        "SELECT 1 FROM duckdb_tables() WHERE table_name = ? AND NOT temporary "
        "AND database_name = current_database() LIMIT 1",
        [name],
    ).fetchall()
    return bool(rows)


class Shards(Protocol):
    """The shards of one mine. ``map`` runs a step on every shard (in shard order) and
    returns what each returned; ``setup`` changes what every later step's connection is
    prepared with. ``client_is_store`` is True when the one shard's connection is the one
    merged profiles go to (the single store), so that a step can be run in place."""

    client_is_store: bool

    def map(self, step: Callable[..., T], *args: Any, label: str = "") -> list[T]: ...

    def setup(self, setup: Setup) -> None: ...


class LocalShards:
    """Shards whose stores are open in this process, read one after the other."""

    def __init__(self, cons: Sequence[duckdb.DuckDBPyConnection], client_is_store: bool) -> None:
        self.cons = list(cons)
        self.client_is_store = client_is_store and len(self.cons) == 1
        self._setup = Setup()

    def map(self, step: Callable[..., T], *args: Any, label: str = "") -> list[T]:
        out = []
        for con in self.cons:
            prepare(con, self._setup)
            out.append(step(con, *args))
        return out

    def setup(self, setup: Setup) -> None:
        self._setup = setup


def integers(table: pa.Table) -> pa.Table:
    """``table`` with DuckDB's 128-bit sums (Arrow decimals of scale 0) as 64-bit
    integers, so that summing them again gives integers, as in one store."""
    for i, column in enumerate(table.schema):
        if pa.types.is_decimal(column.type) and column.type.scale == 0:
            table = table.set_column(i, column.name, table.column(i).cast(pa.int64()))
    return table


def concat(tables: Sequence[pa.Table]) -> pa.Table:
    """Tables of one schema, one after the other (the shards' rows)."""
    nonempty = [t for t in tables if t.num_rows] or list(tables[:1])
    return pa.concat_tables(nonempty) if len(nonempty) > 1 else nonempty[0]
