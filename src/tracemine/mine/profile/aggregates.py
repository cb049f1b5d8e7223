"""Profiles: SQL aggregates per tool, side, path and *unit*, stored in the DuckDB store.

    tm_calls           the nominal calls (status ok, runs passing ``where``) with their task
                       and part (below)
    tm_profile_state   the fingerprints the tables were built for, counts, the granularity
                       and the path survey: per path, the format its strings seem to have,
                       whether its values are few enough to list, whether duplicates within
                       a call are counted, whether its strings get shape profiles
    tm_profiles        per tool, side, path and unit: the unit's tasks, and how many calls
                       had each property (types, nulls, negatives, zeros, empties, format,
                       duplicates, key present), min/max of numbers, lengths and strings,
                       sums for spread
    tm_profile_values  per tool, side, path and unit: values and string shapes (capped per
                       task), with the calls and tasks that showed them

Every column is a count, a sum, a min or a max, so a context (the tasks outside a fold,
or one fold) is the sum (min, max) of its units' rows.

**Granularity.** A unit is a task or a fold. Per task, the tables do not depend on the
folds: re-mining with another seed or another number of folds sums them anew without
reading a value. But with many tasks and many paths a row per task and path approaches
the size of the value table it summarises (50,000 tasks of wide results: millions of
rows, and every context sum joins them with eleven contexts). Per fold, the tables hold a
row per fold and path whatever the number of tasks, and are exact: a task lies in one
fold, so a fold's distinct tasks, calls, values and per-task value caps add up as the
tasks' would. They are built for one fold assignment, so a re-mine with another seed or
number of folds reads the values again (one profile build, about what the first mine
cost); one with other thresholds reuses them. :func:`per_fold` chooses: per fold when
the per-task tables would hold more than ``1 / PROFILE_SHARE`` of the value rows.

Both are built by the same statements (:func:`unit_profiles_sql`,
:func:`~tracemine.mine.profile.listing.values_sql`), one *part* at a time: whole tasks, taken in
call order until about ``PART_CALLS`` calls, fewer when calls carry many values
(:func:`part_calls`). Their hash tables then hold one part's calls and tasks, so the
memory they need follows the part size rather than the store's (a million calls at once
took gigabytes); every per-task row is complete within its part, and per fold the parts'
rows are added up at the end. The per-call layer (:func:`call_paths_sql`) is not stored:
it is an inline query that later steps restrict to the few paths they need.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import duckdb

from tracemine.ingest.store import fetch_one, sql_string
from tracemine.mine.profile.formats import format_sql, register_shapes
from tracemine.mine.profile.listing import shaped_strings_sql, values_sql
from tracemine.mine.profile.where import Filter

PROFILE_VERSION = "10"
LISTED_DISTINCT = 256
"""Values of a path are listed only when the whole store holds about this many or fewer."""
PART_CALLS = 100_000
"""About this many nominal calls per part (a task is never split)."""
PART_VALUES = 4_000_000
"""And about this many values: wide results (a hundred values a call) make parts of fewer
calls, whose hash tables stay small enough to be cheap to build."""
BITS_PER_GROUP = 16_384
"""A part's tasks are counted per row of a fold (profiles, relation counts) by a bit each
while they are this few (2 KB an aggregate state; :func:`distinct_tasks_sql`)."""
PROFILE_SHARE = 16
"""Profiles are kept per task while their rows stay under this share of the value rows
(tasks × paths against values); past it, per fold (:func:`per_fold`)."""
JSON_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")
NULLABLE_TYPES = ("boolean", "integer", "string", "array", "object")

# (column, aggregate over a task's per-call rows, aggregate over a task's values where each
# call has one value at the path) — every column a count, sum, min or max: mergeable
_SIZED = "jtype IN ('array', 'string', 'object')"
_PROFILE_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("calls", "count(*)", "count(*)"),
    ("vals", "sum(n)", "count(*)"),
    ("c_null", "count(*) FILTER (n_null > 0)", "count(*) FILTER (jtype = 'null')"),
    ("c_obj", "count(*) FILTER (n_object > 0)", "count(*) FILTER (jtype = 'object')"),
    *((f"c_all_{t}", f"count(*) FILTER (n_{t} = n)", f"count(*) FILTER (jtype = '{t}')")
      for t in JSON_TYPES),
    ("c_all_numeric", "count(*) FILTER (n_integer + n_number = n)",
     "count(*) FILTER (jtype IN ('integer', 'number'))"),
    # every value of the call of one type or null: a nullable type (["string", "null"])
    *((f"c_opt_{t}", f"count(*) FILTER (n_{t} + n_null = n)",
       f"count(*) FILTER (jtype IN ('{t}', 'null'))") for t in NULLABLE_TYPES),
    ("c_opt_numeric", "count(*) FILTER (n_integer + n_number + n_null = n)",
     "count(*) FILTER (jtype IN ('integer', 'number', 'null'))"),
    ("c_neg", "count(*) FILTER (n_neg > 0)", "count(*) FILTER (num < 0)"),
    ("c_nonpos", "count(*) FILTER (n_neg + n_zero > 0)", "count(*) FILTER (num <= 0)"),
    ("nmin", "min(nmin)", "min(num)"),
    ("nmax", "max(nmax)", "max(num)"),
    ("nsum", "sum(nsum)", "sum(num)"),
    ("nsq", "sum(nsq)", "sum(num * num)"),
    ("nn", "sum(n_integer + n_number)", "count(num)"),
    ("c_len", "count(*) FILTER (n_len = n)", f"count(*) FILTER ({_SIZED})"),
    ("c_empty", "count(*) FILTER (n_empty > 0)", f"count(*) FILTER ({_SIZED} AND len = 0)"),
    ("lmin", "min(lmin)", f"min(len) FILTER ({_SIZED})"),
    ("lmax", "max(lmax)", f"max(len) FILTER ({_SIZED})"),
    ("lsum", "sum(lsum)", f"sum(CAST(len AS DOUBLE)) FILTER ({_SIZED})"),
    ("lsq", "sum(lsq)", f"sum(CAST(len AS DOUBLE) * len) FILTER ({_SIZED})"),
    ("ln", "sum(n_len)", f"count(*) FILTER ({_SIZED})"),
    ("c_fmt", "count(*) FILTER (n_string > 0 AND n_fmt = n_string)", "count(*) FILTER ({fmt})"),
    ("c_multi", "count(*) FILTER (n > 1)", "0"),
    ("c_dup", "count(*) FILTER (n_dup > 0)", "0"),
    ("c_present", "count(*) FILTER (present_ok)",
     "CASE WHEN path IN ('args', 'result') THEN 0 ELSE count(*) END"),
    ("smin", "min(smin)", "min(str)"),
    ("smax", "max(smax)", "max(str)"),
)  # fmt: skip
PROFILE_COLUMNS = tuple(name for name, _, _ in _PROFILE_COLUMNS)
MIN_COLUMNS = frozenset({"nmin", "lmin", "smin"})
MAX_COLUMNS = frozenset({"nmax", "lmax", "smax"})


@dataclass(frozen=True)
class Survey:
    """What a first cheap pass learns per path: its likely format, whether its values are
    worth listing, whether duplicates within a call are counted, whether its strings look
    like ids (short, with digits, no known format) and get shape profiles."""

    formats: dict[str, str] = field(default_factory=dict)
    listed: frozenset[str] = frozenset()
    distinct: frozenset[str] = frozenset()
    shaped: frozenset[str] = frozenset()
    # objects keyed by ids, whose key step is ``{*}``: (tool, path)
    maps: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Part:
    """Some whole tasks of ``tm_calls`` (``index`` None: all of them), with the range of
    their call keys, which lets a scan of ``json_values`` skip the rest of the store, and
    how many tasks they are (0: not counted). With ``only`` (a table of ``task``), just
    the part's tasks listed there."""

    index: int | None = None
    first: int = 0
    last: int = 0
    tasks: int = 0
    only: str | None = None

    def calls(self) -> str:
        """SQL relation: the part's nominal calls."""
        if self.index is None:
            return "tm_calls"
        among = f" AND task IN (SELECT task FROM {self.only})" if self.only else ""
        return f"(SELECT * FROM tm_calls WHERE part = {self.index}{among})"

    def values(self) -> str:
        """SQL relation: ``tm_values`` rows (the values, with maps' keys as ``{*}``) within
        the part's key range (a superset of its calls' values, so join it with
        :meth:`calls`)."""
        if self.index is None:
            return "tm_values"
        return f"(SELECT * FROM tm_values WHERE call_key BETWEEN {self.first} AND {self.last})"


EVERY = Part()


def parts(con: duckdb.DuckDBPyConnection, only: str | None = None) -> list[Part]:
    """The parts of ``tm_calls`` in order (one covering everything when it is empty); with
    ``only`` (a table of ``task``), the parts holding those tasks, each restricted to them
    (none when no task is listed)."""
    among = f"WHERE task IN (SELECT task FROM {only})" if only else ""
    rows = con.execute(
        "SELECT part, min(call_key), max(call_key), count(DISTINCT task) FROM tm_calls "
        f"{among} GROUP BY part ORDER BY part"
    ).fetchall()
    found = [Part(int(i), int(first), int(last), int(n), only) for i, first, last, n in rows]
    return found if only else found or [EVERY]


def part_calls(con: duckdb.DuckDBPyConnection) -> int:
    """Calls per part: ``PART_CALLS``, or fewer when the store's calls carry on average
    more than ``PART_VALUES / PART_CALLS`` values each."""
    row = fetch_one(con, "SELECT (SELECT count(*) FROM json_values), (SELECT count(*) FROM calls)")
    values, calls = (int(row[0]), int(row[1])) if row else (0, 0)
    per_call = values / calls if calls else 0.0
    return max(1, min(PART_CALLS, int(PART_VALUES / per_call) if per_call else PART_CALLS))


def nominal_calls_sql(where: str, task_table: str | None, size: int = PART_CALLS) -> str:
    """SQL building ``tm_calls``: calls that ended ok, in runs passing ``where``, with the
    task they belong to (a run without one is its own task, ``run:<run_id>``), the hash
    of what the call said (``content``: tool, arguments and result as stored, compact
    JSON) and the part of that task: tasks ordered by their first call, cut every
    ``size`` calls. Every choice among calls orders them by :func:`order_sql`, never by
    their key: keys follow the order a file listed its calls in, which is the wrapping's,
    not the calls'."""
    source = "t.task" if task_table else "r.task_id"
    join = f"LEFT JOIN {task_table} t ON t.run_id = c.run_id" if task_table else ""
    return f"""
    CREATE OR REPLACE TABLE tm_calls AS
    WITH nominal AS (
        SELECT c.call_key, c.tool, coalesce({source}, 'run:' || c.run_id) AS task, c.run_id,
               coalesce(r.trial, -1) AS trial, c.call_id, c.seq, {source} IS NULL AS task_missing,
               hash(c.tool, CAST(c.arguments AS VARCHAR), CAST(c.result AS VARCHAR)) AS content
        FROM calls c JOIN runs r ON r.run_id = c.run_id {join}
        WHERE c.status = 'ok' AND ({where})
    ), tasks AS (
        SELECT task, min(call_key) AS first, count(*) AS n FROM nominal GROUP BY task
    ), cut AS (
        SELECT task, (sum(n) OVER (ORDER BY first, task) - n) // {size} AS part
        FROM tasks
    )
    SELECT n.*, cut.part FROM nominal n JOIN cut ON cut.task = n.task
    ORDER BY n.call_key
    """


def order_sql(alias: str = "c") -> str:
    """SQL: the order calls (``tm_calls`` rows aliased ``alias``) are chosen in wherever
    only some are taken (counterexamples, samples): by what they said, then task, trial,
    run and position, with the key last only to break ties between identical calls. The
    trial comes before the run id because formats name runs differently (a platform
    names a run by its trace id): trials of a task are then taken in the same order
    whatever format carried them."""
    a = alias
    return (f"{{'content': {a}.content, 'task': {a}.task, 'trial': {a}.trial, "
            f"'run': {a}.run_id, 'seq': coalesce({a}.seq, -1), 'key': {a}.call_key}}")  # fmt: skip


def order_of(found: dict) -> tuple:
    """The Python tuple of an :func:`order_sql` value (a dict), which sorts alike."""
    return (int(found["content"]), str(found["task"]), int(found["trial"]), str(found["run"]),
            int(found["seq"]), int(found["key"]))  # fmt: skip


def survey_sql() -> str:
    """SQL: per path of the nominal calls, its extreme strings (to guess a format), the
    longest string, an approximate distinct count, whether it lies under an array, and
    how many values it has."""
    return f"""
    SELECT path, min(str), max(str), max(len) FILTER (jtype = 'string'),
           approx_count_distinct({SURVEY_KEY}), bool_or(idx IS NOT NULL),
           bool_and(jtype IN ('string', 'integer', 'boolean', 'null')),
           bool_and(jtype IN ('string', 'null')), count(*)
    FROM tm_values v SEMI JOIN tm_calls c ON c.call_key = v.call_key
    GROUP BY path ORDER BY path
    """


SURVEY_KEY = "coalesce(str, CAST(num AS VARCHAR), CAST(bool AS VARCHAR))"


def survey_distinct_sql() -> str:
    """SQL: the distinct values of each path named in ``_tm_only`` (those few enough to
    be listed), so that shards' counts merge exactly."""
    return f"""
    SELECT path, list(DISTINCT {SURVEY_KEY}) FILTER ({SURVEY_KEY} IS NOT NULL)
    FROM tm_values v SEMI JOIN tm_calls c ON c.call_key = v.call_key
    SEMI JOIN _tm_only o ON o.path = v.path
    GROUP BY path
    """


def per_fold(tasks: int, paths: int, values: int) -> bool:
    """Whether profiles are kept per fold rather than per task: when a row per task and
    path (an upper estimate of the per-task rows) would be more than ``1 / PROFILE_SHARE``
    of the value rows, so that the profiles no longer summarise the values."""
    return tasks * paths * PROFILE_SHARE > values


def call_paths_sql(
    survey: Survey,
    only: str | None = None,
    part: Part = EVERY,
    singles: bool = True,
    dups: bool = True,
    presence: bool = True,
) -> str:
    """A SELECT of one row per nominal call of ``part`` and path: counts by JSON type,
    negatives, zeros, min/max, lengths, strings in the path's format, duplicates, key
    present.

    A value outside any array is alone at its path in its call, so its row is computed
    without grouping; only values under arrays are aggregated. ``only`` names a table of
    ``path`` to restrict to; without ``singles`` only the rows of values under arrays are
    made. Without ``dups`` (``presence``) the ``n_dup``
    (``present_ok``) column is NULL, and the distinct count (the join with the parent
    path) it needs is not made.

    The values are read by each half rather than through a shared CTE: fanning one scan
    out to two consumers cost more than scanning the part twice."""
    sized = "jtype IN ('array', 'string', 'object')"
    scalar = "coalesce(str, CAST(num AS VARCHAR), CAST(bool AS VARCHAR))"
    fmt = format_sql(survey.formats)
    columns = [  # (name, expression for one value, aggregate over many)
        ("n", "1", "count(*)"),
        *((f"n_{t}", f"CAST(jtype = '{t}' AS BIGINT)", f"count(*) FILTER (jtype = '{t}')")
          for t in JSON_TYPES),
        ("n_neg", "CAST(coalesce(num < 0, FALSE) AS BIGINT)", "count(*) FILTER (num < 0)"),
        ("n_zero", "CAST(coalesce(num = 0, FALSE) AS BIGINT)", "count(*) FILTER (num = 0)"),
        ("nmin", "num", "min(num)"),
        ("nmax", "num", "max(num)"),
        ("nsum", "num", "sum(num)"),
        ("nsq", "num * num", "sum(num * num)"),
        ("n_len", f"CAST({sized} AS BIGINT)", f"count(*) FILTER ({sized})"),
        ("n_empty", f"CAST({sized} AND len = 0 AS BIGINT)",
         f"count(*) FILTER ({sized} AND len = 0)"),
        ("lmin", f"CASE WHEN {sized} THEN len END", f"min(len) FILTER ({sized})"),
        ("lmax", f"CASE WHEN {sized} THEN len END", f"max(len) FILTER ({sized})"),
        ("lsum", f"CASE WHEN {sized} THEN CAST(len AS DOUBLE) END",
         f"sum(CAST(len AS DOUBLE)) FILTER ({sized})"),
        ("lsq", f"CASE WHEN {sized} THEN CAST(len AS DOUBLE) * len END",
         f"sum(CAST(len AS DOUBLE) * len) FILTER ({sized})"),
        ("n_fmt", f"CAST({fmt} AS BIGINT)", f"count(*) FILTER ({fmt})"),
        ("smin", "str", "min(str)"),
        ("smax", "str", "max(str)"),
    ]  # fmt: skip
    single = ", ".join(f"{one} AS {name}" for name, one, _ in columns)
    many = ", ".join(f"{agg} AS {name}" for name, _, agg in columns)
    restrict = f"SEMI JOIN {only} o ON o.path = v.path" if only else ""
    values = f"""(SELECT v.* FROM {part.values()} v
        SEMI JOIN {part.calls()} c ON c.call_key = v.call_key {restrict}) v"""
    # duplicates are counted only on array paths of scalars, by a grouping of their own
    # values: kept in the grouping of every value, each of a part's (call, path) groups
    # held a list, and that grouping cost twice as much (1.6M groups at 17k real-wide
    # calls, most of them one value). A call's distinct values are counted in a list of
    # their 64-bit hashes: one small set per call, where a DISTINCT aggregate regroups
    # every value by (call, path, value). Two different values of one call would have
    # to share a hash to be taken for a duplicate (about 1 in 10^19 a pair).
    counted = sorted(survey.distinct) if dups else []
    listed = ", ".join(f"({sql_string(p)})" for p in counted)
    dup_rows = f"""SELECT call_key, side, path, count({scalar}) - coalesce(len(list_distinct(
                   list(hash({scalar})) FILTER ({scalar} IS NOT NULL))), 0) AS n_dup
               FROM {values} SEMI JOIN (VALUES {listed}) d(path) ON d.path = v.path
               WHERE idx IS NOT NULL GROUP BY call_key, side, path HAVING count(*) > 1"""
    with_dups = (
        f"""SELECT g.*, d.n_dup FROM grouped g LEFT JOIN ({dup_rows}) d
            ON d.call_key = g.call_key AND d.side = g.side AND d.path = g.path"""
        if counted
        else "SELECT *, CAST(NULL AS BIGINT) AS n_dup FROM grouped"
    )
    nested_rows = (
        """SELECT m.*, CASE WHEN p.parent IS NOT NULL THEN m.n = coalesce(up.n_object, -1) END
               AS present_ok
    FROM multi m LEFT JOIN parents p ON p.path = m.path
    LEFT JOIN (SELECT call_key, path, n_object FROM multi WHERE n_object > 0) up
        ON up.call_key = m.call_key AND up.path = p.parent"""
        if presence
        else "SELECT m.*, CAST(NULL AS BOOLEAN) AS present_ok FROM multi m"
    )
    present = "CASE WHEN path NOT IN ('args', 'result') THEN TRUE END"
    singles_rows = f"""
    SELECT call_key, side, path, {single}, CAST(NULL AS BIGINT) AS n_dup,
           {present if presence else "CAST(NULL AS BOOLEAN)"} AS present_ok
    FROM {values} WHERE idx IS NULL
    UNION ALL"""
    return rf"""
    WITH grouped AS (
        SELECT call_key, side, path, {many}
        FROM {values} WHERE idx IS NOT NULL GROUP BY call_key, side, path
    ), multi AS {"MATERIALIZED" if presence else ""} ({with_dups}
    ), parents AS (
        SELECT path, regexp_replace(path, '\.[A-Za-z_][A-Za-z0-9_\-]*$|\["([^"\\]|\\.)*"\]$', '')
               AS parent
        FROM (SELECT DISTINCT path FROM multi)
        WHERE NOT suffix(path, '[*]') AND NOT suffix(path, '{{*}}')
    ){singles_rows if singles else ""}
    {nested_rows}
    """


@contextmanager
def plain_scans(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Within the block, DuckDB reads a relation each time a query names it. A query over
    :func:`call_paths_sql` names the values twice (its two halves), and DuckDB would share
    that scan, materializing every value it reads once more before filtering: over a
    whole wide store, about the memory limit, and spilled past it. The plain scans cost
    less."""
    row = fetch_one(con, "SELECT current_setting('disabled_optimizers')")
    disabled = str(row[0]) if row and row[0] else ""
    off = ",".join(filter(None, [disabled, "common_subplan"]))
    con.execute(f"SET disabled_optimizers = '{off}'")
    try:
        yield
    finally:
        con.execute(f"SET disabled_optimizers = '{disabled}'")


def unit_profiles_sql(survey: Survey, part: Part, fold: bool) -> str:
    """A SELECT of one row per tool, side, path and unit of ``part`` — its task, or with
    ``fold`` its fold (needs ``_tm_folds``) — with the unit's tasks: the columns of
    ``tm_profiles``.

    Values outside arrays (``idx`` NULL) are alone at their path in their call, so their
    rows aggregate the values directly; values under arrays are first aggregated per call
    (:func:`call_paths_sql`). A path's values are all one or all the other, so the two
    halves never share a row. Per fold, the rows are grouped by fold at once (a few
    groups, not one per task), counting the distinct tasks."""
    fmt = format_sql(survey.formats)
    per_call = ", ".join(f"{calls} AS {name}" for name, calls, _ in _PROFILE_COLUMNS)
    per_value = ", ".join(
        f"{values.replace('{fmt}', fmt)} AS {name}" for name, _, values in _PROFILE_COLUMNS
    )
    tasks = distinct_tasks_sql(part, "c.task_no", "c.task") if fold else "CAST(1 AS BIGINT)"
    return f"""
    WITH c AS MATERIALIZED {unit_calls(part, fold)}
    SELECT c.tool, v.side, v.path, c.unit, {tasks} AS tasks, {per_value}
    FROM {part.values()} v JOIN c ON c.call_key = v.call_key
    WHERE v.idx IS NULL
    GROUP BY c.tool, v.side, v.path, c.unit
    UNION ALL
    SELECT c.tool, p.side, p.path, c.unit, {tasks}, {per_call}
    FROM ({call_paths_sql(survey, part=part, singles=False)}) p
    JOIN c ON c.call_key = p.call_key
    GROUP BY c.tool, p.side, p.path, c.unit
    """


def distinct_tasks_sql(part: Part, rank: str, task: str) -> str:
    """SQL aggregate: the distinct tasks among a group's rows of ``part``, given a task's
    rank among the part's tasks (``rank``, from 1) or else its name (``task``). With a bit
    per task of the part it is a plain aggregate, where ``count(DISTINCT …)`` makes DuckDB
    copy every input row of the aggregate aside and group it a second time; the bits are
    a part's tasks for every group, so only while they are few."""
    if not 0 < part.tasks <= BITS_PER_GROUP:
        return f"count(DISTINCT {task})"
    return f"bit_count(bitstring_agg({rank}, 1, {part.tasks}))"


def merged_columns_sql(table: str = "") -> str:
    """The profile columns summed (min, max) over rows of ``table``: how units add up."""
    prefix = f"{table}." if table else ""
    aggs = []
    for name in PROFILE_COLUMNS:
        fn = "min" if name in MIN_COLUMNS else "max" if name in MAX_COLUMNS else "sum"
        aggs.append(f"{fn}({prefix}{name}) AS {name}")
    return ", ".join(aggs)


def profiles_sql(survey: Survey, part: Part, fold: bool, into: str, append: bool) -> str:
    """SQL building the table ``into`` (or, with ``append``, adding to it): the rows of
    :func:`unit_profiles_sql`."""
    head = f"INSERT INTO {into}" if append else f"CREATE OR REPLACE TABLE {into} AS"
    return f"{head} {unit_profiles_sql(survey, part, fold)}"


def unit_calls(part: Part, fold: bool) -> str:
    """SQL relation: the part's nominal calls with their profile ``unit``: their task, or
    with ``fold`` their fold (``fold``, and as text ``unit``; needs ``_tm_folds``) and their
    task's rank in the part (``task_no``, from 1: what :func:`distinct_tasks_sql` counts)."""
    if not fold:
        return f"(SELECT *, task AS unit FROM {part.calls()})"
    return f"""(SELECT c.*, f.fold, CAST(f.fold AS VARCHAR) AS unit,
                      dense_rank() OVER (ORDER BY c.task) AS task_no
               FROM {part.calls()} c JOIN _tm_folds f ON f.task = c.task)"""


def ingest_rows(con: duckdb.DuckDBPyConnection) -> list[tuple[int, str, int]]:
    """(ingest id, file hash, calls stored) of every file read into the store."""
    rows = con.execute(
        "SELECT ingest_id, file_hash, calls_stored FROM ingests ORDER BY ingest_id"
    ).fetchall()
    return [(int(i), str(h), int(n or 0)) for i, h, n in rows]


def fingerprint_of(
    ingests: list[tuple[int, str, int]], filters: list[Filter], task_key: str | None
) -> str:
    """What was ingested (files by content, in ingest order), not when: the same files
    read into a new store, or into the stores of shards, give the same fingerprint, so
    re-running a pipeline rewrites nothing needlessly."""
    ordered = sorted(ingests)
    summary = [
        len(ordered),
        ordered[-1][0] if ordered else None,
        sum(n for _, _, n in ordered) if ordered else None,
        hashlib.md5(",".join(h for _, h, _ in ordered).encode()).hexdigest() if ordered else None,
    ]
    state = [PROFILE_VERSION, summary, [f.text for f in filters], task_key]
    return hashlib.sha256(json.dumps(state, default=str).encode()).hexdigest()[:16]


def fingerprint(con: duckdb.DuckDBPyConnection, filters: list[Filter], task_key: str | None) -> str:
    """The fingerprint of the store on ``con`` (:func:`fingerprint_of`)."""
    return fingerprint_of(ingest_rows(con), filters, task_key)


def build_profiles(
    con: duckdb.DuckDBPyConnection, survey: Survey, fold: bool, only: str | None = None
) -> None:
    """Build the profile tables a part at a time; per fold, each part's rows go to a
    staging table and the parts' rows of one fold are added up at the end. With ``only``
    (per task: a table of ``task``), add the rows of those tasks to the stored tables."""
    profiles, values = ("_tm_part_profiles", "_tm_part_values") if fold else (
        "tm_profiles", "tm_profile_values")  # fmt: skip
    assert not (fold and only), "a fold's rows cannot be rebuilt for some of its tasks"
    for k, part in enumerate(parts(con, only)):
        append = k > 0 or only is not None
        con.execute(profiles_sql(survey, part, fold, profiles, append=append))
        register_shapes(con, shaped_strings_sql(survey, part), "_tm_shapes")
        try:
            con.execute(values_sql(survey, part, fold, values, append=append))
        finally:
            con.unregister("_tm_shapes")
    if not fold:
        return
    for sql in sum_units_sql(profiles, values):
        con.execute(sql)
    con.execute(f"DROP TABLE {profiles}")
    con.execute(f"DROP TABLE {values}")


def task_digests_sql() -> str:
    """SQL: per task of ``tm_calls``, its calls and a digest of which calls they are and
    what they said (their keys and content hashes). A task's per-task profile rows depend
    on nothing else but the survey, so a task whose digest is unchanged keeps its rows."""
    return (
        "SELECT task, count(*) AS calls, bit_xor(hash(call_key, content)) AS digest "
        "FROM tm_calls GROUP BY task"
    )


def survey_state(survey: Survey) -> dict[str, Any]:
    """A survey as JSON (stored with the state, and hashed with what was built with it)."""
    return {"formats": dict(sorted(survey.formats.items())), "listed": sorted(survey.listed),
            "distinct": sorted(survey.distinct), "shaped": sorted(survey.shaped),
            "maps": [list(m) for m in survey.maps]}  # fmt: skip


def survey_print(survey: Survey) -> str:
    """A short hash of :func:`survey_state`."""
    return hashlib.sha256(json.dumps(survey_state(survey)).encode()).hexdigest()[:16]


REBUILD_SHARE = 0.5
"""Per-task rows (profiles, relation counts) are rebuilt only for the tasks whose calls
changed while those are at most this share of the tasks; past it, every task's are built
anew (deleting most of the rows costs more than it saves)."""


def stale_tasks(con: duckdb.DuckDBPyConnection, stored: str) -> list[str] | None:
    """The tasks whose per-task rows are stale: new, gone, or with other calls (digests of
    ``_tm_task_digests``, :func:`task_digests_sql`) than when the rows were built (digests
    of ``stored``); None when they are more than ``REBUILD_SHARE`` of the tasks."""
    rows = con.execute(
        "SELECT coalesce(n.task, o.task) FROM _tm_task_digests n "
        f"FULL JOIN {stored} o ON o.task = n.task "
        "WHERE n.task IS NULL OR o.task IS NULL OR n.calls <> o.calls OR n.digest <> o.digest"
    ).fetchall()
    total = fetch_one(con, "SELECT count(*) FROM _tm_task_digests")
    if total is None or len(rows) > REBUILD_SHARE * int(total[0]):
        return None
    return sorted(str(task) for (task,) in rows)


def sum_units_sql(profiles: str, values: str) -> tuple[str, str]:
    """SQL building ``tm_profiles`` and ``tm_profile_values`` by adding up the rows of
    one unit in ``profiles`` and ``values`` (the parts of a store, or the shards of a
    corpus: a task lies in one of them, so its fold's counts add up)."""
    return (
        f"""CREATE OR REPLACE TABLE tm_profiles AS
        SELECT tool, side, path, unit, sum(tasks) AS tasks, {merged_columns_sql()}
        FROM {profiles} GROUP BY tool, side, path, unit""",
        f"""CREATE OR REPLACE TABLE tm_profile_values AS
        SELECT tool, side, path, unit, kind, value, sum(calls) AS calls, sum(tasks) AS tasks,
               max(distinct_n) AS distinct_n
        FROM {values} GROUP BY tool, side, path, unit, kind, value""",
    )
