"""Value listings: per tool, path and unit (a task or a fold), the values and string shapes
each task showed most often, capped per task (``tm_profile_values``).

A listed path's values (kind ``v``, JSON-encoded) and a shaped path's string shapes (kind
``h``) are counted per task, ranked within the task by how often they were seen, and
kept while the task has at most ``VALUES_PER_TASK`` of them; the rows also say how many
distinct values the task had, so a context knows when its list is partial.

The statement runs once per part (:class:`~tracemine.mine.profile.aggregates.Part`). Its grouping
keys are numbers: a task of a tool is its rank among the part's calls, and a path its
position in the survey's list, packed with the kind into one BIGINT. Grouping and ranking
millions of rows by five strings (tool, side, path, task, kind) cost more than the rest of
the statement; the names are joined back on the few rows that remain.
"""

from __future__ import annotations

from typing import Protocol

from tracemine.ingest.store import sql_string


class Survey(Protocol):
    """What a listing reads of :class:`tracemine.mine.profile.aggregates.Survey`: which paths'
    values
    are listed and which paths' strings are shaped. (The profile builds listings, so
    this module names only what it needs, not the profile's types.)"""

    @property
    def listed(self) -> frozenset[str]: ...
    @property
    def shaped(self) -> frozenset[str]: ...


class Part(Protocol):
    """What a listing reads of :class:`tracemine.mine.profile.aggregates.Part`: its relations."""

    def calls(self) -> str: ...
    def values(self) -> str: ...


VALUES_PER_TASK = 32
"""Distinct values (and shapes) kept per tool, path and task; more marks the path open."""
MAX_LITERAL_CHARS = 64

_VALUE = (
    "CASE v.jtype WHEN 'string' THEN CAST(to_json(v.str) AS VARCHAR) "
    "WHEN 'boolean' THEN CAST(v.bool AS VARCHAR) "
    "ELSE CAST(CAST(v.num AS HUGEINT) AS VARCHAR) END"
)


def path_ids_sql(listed: frozenset[str], shaped: frozenset[str]) -> tuple[str, int]:
    """SQL relation ``(path, pid, listed, shaped)``: each listed or shaped path with its
    position (joined with the values, it tells each row its path's flags by one hash
    lookup), and how many there are."""
    paths = sorted(listed | shaped)
    if not paths:
        empty = "SELECT CAST(NULL AS VARCHAR) AS path, 0 AS pid, FALSE AS listed, FALSE AS shaped"
        return f"({empty} WHERE FALSE)", 1
    rows = ", ".join(
        f"({sql_string(p)}, {i}, {p in listed}, {p in shaped})" for i, p in enumerate(paths)
    )
    return f"(SELECT * FROM (VALUES {rows}) t(path, pid, listed, shaped))", len(paths)


def shaped_strings_sql(survey: Survey, part: Part) -> str:
    """SQL: the distinct strings of ``part`` whose shapes the listing counts (those of
    shaped paths, short enough to list; of any call in the part's range of keys)."""
    paths, _ = path_ids_sql(survey.listed, survey.shaped)
    return f"""SELECT DISTINCT v.str FROM {part.values()} v
        SEMI JOIN {paths} s ON s.path = v.path AND s.shaped
        WHERE v.jtype = 'string' AND v.len <= {MAX_LITERAL_CHARS} AND v.str IS NOT NULL"""


def values_sql(
    survey: Survey, part: Part, fold: bool, into: str, append: bool, cap: int = VALUES_PER_TASK
) -> str:
    """SQL building the table ``into`` (or, with ``append``, adding to it): per tool, path,
    unit (task, or with ``fold`` fold, which needs ``_tm_folds``) and value, the calls and
    tasks that showed it among their ``cap`` most frequent, and the most distinct values
    one of those tasks had. Needs ``_tm_shapes(str, shape)`` for the strings of
    :func:`shaped_strings_sql` (:func:`~tracemine.mine.profile.formats.register_shapes`).

    A task's values are ranked only when it has more than ``cap`` of them: the others keep
    every value, and counting a task's values is one hash aggregate where ranking is a
    sort. Per fold, the rows kept are summed over the fold's tasks at once."""
    head = f"INSERT INTO {into}" if append else f"CREATE OR REPLACE TABLE {into} AS"
    paths, n = path_ids_sql(survey.listed, survey.shaped)
    short = f"(v.jtype <> 'string' OR v.len <= {MAX_LITERAL_CHARS})"
    # tt: the call's tool and task as one number; a key is (tt, path, kind)
    calls = (
        f"""SELECT c.call_key, c.tool, c.task, f.fold,
                   dense_rank() OVER (ORDER BY c.tool, c.task) AS tt,
                   dense_rank() OVER (ORDER BY c.tool) AS tno
            FROM {part.calls()} c JOIN _tm_folds f ON f.task = c.task"""
        if fold
        else f"""SELECT call_key, tool, task, dense_rank() OVER (ORDER BY tool, task) AS tt
            FROM {part.calls()}"""
    )
    return f"""{head}
    WITH c AS MATERIALIZED ({calls}
    ), tagged AS (
        SELECT (c.tt * {n} + s.pid) * 2 AS key, v.side, {_VALUE} AS value
        FROM {part.values()} v JOIN c ON c.call_key = v.call_key
        JOIN {paths} s ON s.path = v.path AND s.listed
        WHERE v.jtype IN ('string', 'integer', 'boolean') AND {short}
        UNION ALL
        SELECT (c.tt * {n} + s.pid) * 2 + 1, v.side, h.shape
        FROM {part.values()} v JOIN c ON c.call_key = v.call_key
        JOIN {paths} s ON s.path = v.path AND s.shaped
        JOIN _tm_shapes h ON h.str = v.str
        WHERE v.jtype = 'string' AND v.len <= {MAX_LITERAL_CHARS}
    ), grouped AS MATERIALIZED (
        SELECT key, side, value, count(*) AS seen FROM tagged GROUP BY key, side, value
    ), sized AS (
        SELECT g.*, z.distinct_n FROM grouped g JOIN (
            SELECT key, side, count(*) AS distinct_n FROM grouped GROUP BY key, side
        ) z ON z.key = g.key AND z.side = g.side
    ), kept AS (
        SELECT key, side, value, seen, distinct_n FROM sized WHERE distinct_n <= {cap}
        UNION ALL
        SELECT key, side, value, seen, distinct_n FROM (
            SELECT *, row_number() OVER (PARTITION BY key, side ORDER BY seen DESC, value) AS rank
            FROM sized WHERE distinct_n > {cap}
        ) WHERE rank <= {cap}
    ){_per_fold(paths, n) if fold else _per_task(paths, n)}"""


def _per_task(paths: str, n: int) -> str:
    return f"""
    SELECT t.tool, k.side, p.path, t.task AS unit, CASE k.key % 2 WHEN 1 THEN 'h' ELSE 'v' END
               AS kind, k.value, k.seen AS calls, CAST(1 AS BIGINT) AS tasks, k.distinct_n
    FROM kept k JOIN (SELECT DISTINCT tt, tool, task FROM c) t ON t.tt = k.key // {2 * n}
    JOIN {paths} p ON p.pid = k.key // 2 % {n}"""


def _per_fold(paths: str, n: int) -> str:
    # summed by numbers (tool, fold, path, kind); the names join the fold's few rows
    return f"""
    , folded AS (
        SELECT t.tno, t.fold, k.key // 2 % {n} AS pid, k.side, k.key % 2 AS kind, k.value,
               sum(k.seen) AS calls, count(*) AS tasks, max(k.distinct_n) AS distinct_n
        FROM kept k JOIN (SELECT DISTINCT tt, tno, fold FROM c) t ON t.tt = k.key // {2 * n}
        GROUP BY t.tno, t.fold, pid, k.side, kind, k.value
    )
    SELECT t.tool, f.side, p.path, CAST(f.fold AS VARCHAR) AS unit,
           CASE f.kind WHEN 1 THEN 'h' ELSE 'v' END AS kind, f.value, f.calls, f.tasks,
           f.distinct_n
    FROM folded f JOIN (SELECT DISTINCT tno, tool FROM c) t ON t.tno = f.tno
    JOIN {paths} p ON p.pid = f.pid"""
