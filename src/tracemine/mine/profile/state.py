"""What a mine builds before it proposes anything, and reuses while it still applies.

    tm_calls           per shard: the nominal calls (status ok, runs passing ``where``)
                       with their task and part
                       (:func:`tracemine.mine.profile.aggregates.nominal_calls_sql`)
    tm_profile_state   the fingerprints the tables were built for: per shard the one of
                       ``tm_calls`` (key ``calls``); where the profiles are merged the
                       mine's (key ``state``: counts, the granularity and the path survey)
                       and the profiles' (key ``profiles``)
    tm_profiles, tm_profile_values
                       where the profiles are merged: per tool, side, path and unit
                       (:mod:`tracemine.mine.profile.aggregates`)

Each shard step here returns what its store holds, and the merge is exact because a task
lies in one shard: counts, distinct tasks and runs add up; minima, maxima and value sets
combine. With one store, the shard and the merged profiles are the same database, and the
profiles are built in place.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field, replace
from typing import Any

import duckdb
import pyarrow as pa

from tracemine.errors import TaskKeyError
from tracemine.ingest.store import fetch_arrow, fetch_one, transaction
from tracemine.ingest.taskkey import TaskKey, store_runs, suggest
from tracemine.mine.profile import aggregates as profile
from tracemine.mine.profile import maps as map_paths
from tracemine.mine.profile.aggregates import (
    LISTED_DISTINCT,
    Survey,
    build_profiles,
    fingerprint_of,
    ingest_rows,
    stale_tasks,
    survey_print,
    survey_state,
)
from tracemine.mine.profile.formats import guess_format
from tracemine.mine.profile.listing import MAX_LITERAL_CHARS
from tracemine.mine.profile.shards import Setup, Shards, concat, has_table, integers, prepare
from tracemine.mine.profile.where import Filter, where_sql


@dataclass
class Nominal:
    """A shard's nominal calls in brief (or, merged, the whole mine's): the files read,
    the calls per tool and task, and counts."""

    ingests: list[tuple[int, str, int]]
    tool_tasks: list[tuple[str, str, int]]  # (tool, task, calls)
    calls: int = 0
    tasks: int = 0
    runs: int = 0
    runs_without_task: int = 0

    @classmethod
    def merge(cls, shards: list[Nominal]) -> Nominal:
        return cls(
            [i for s in shards for i in s.ingests], [t for s in shards for t in s.tool_tasks],
            sum(s.calls for s in shards), sum(s.tasks for s in shards),
            sum(s.runs for s in shards), sum(s.runs_without_task for s in shards),
        )  # fmt: skip


@dataclass(frozen=True)
class ProfileInfo:
    """What the stored profiles cover, how fine they are, and whether this mine reused
    them (``reused``: the nominal calls and survey; ``profiles_reused``: the profiles)."""

    fingerprint: str
    reused: bool
    calls: int
    tasks: int
    runs: int
    runs_without_task: int
    seconds: float
    survey: Survey
    per_fold: bool = False
    profiles_reused: bool = False
    tasks_built: int = 0
    """How many tasks' profile rows this mine built (0: all reused; per fold, all tasks)."""
    per_task: bool = False
    """Whether what the store keeps is counted per task (one store, profiles not per
    fold), so that a later mine counts again only the tasks that changed: the profiles,
    and the relation counts beside them."""
    tool_tasks: list[tuple[str, str, int]] = field(default_factory=list, repr=False)


def _state(con: duckdb.DuckDBPyConnection, key: str) -> dict[str, Any]:
    con.execute("CREATE TABLE IF NOT EXISTS tm_profile_state (key VARCHAR PRIMARY KEY, value JSON)")
    row = fetch_one(con, "SELECT value FROM tm_profile_state WHERE key = ?", [key])
    return json.loads(row[0]) if row else {}


def _save_state(con: duckdb.DuckDBPyConnection, key: str, state: dict[str, Any]) -> None:
    con.execute("INSERT OR REPLACE INTO tm_profile_state VALUES (?, ?)", [key, json.dumps(state)])


def run_counts(con: duckdb.DuckDBPyConnection, filters: list[Filter]) -> tuple[int, int]:
    """Shard step: the runs passing ``filters``, and how many of them have a task id."""
    where, params = where_sql(filters)
    row = fetch_one(con, f"SELECT count(*), count(task_id) FROM runs r WHERE {where}", params)
    return (int(row[0]), int(row[1])) if row else (0, 0)


def runs_of(con: duckdb.DuckDBPyConnection, filters: list[Filter]) -> list[dict[str, Any]]:
    """Shard step: the runs passing ``filters``, as the dicts a task key reads."""
    where, params = where_sql(filters)
    return store_runs(con, where, params)


def nominal(con: duckdb.DuckDBPyConnection, filters: list[Filter], task_key: str | None) -> Nominal:
    """Shard step: build ``tm_calls`` unless the stored one was built for these files and
    options, and say what it holds."""
    ingests = ingest_rows(con)
    print_ = fingerprint_of(ingests, filters, task_key)
    if _state(con, "calls").get("fingerprint") != print_:
        where, params = where_sql(filters)
        with transaction(con):
            task_table = _register_task_key(con, task_key) if task_key else None
            con.execute(profile.nominal_calls_sql(where, task_table, profile.part_calls(con)),
                        params)  # fmt: skip
            if task_table:
                con.unregister(task_table)
            _save_state(con, "calls", {"fingerprint": print_})
    rows = con.execute("SELECT tool, task, count(*) FROM tm_calls GROUP BY ALL").fetchall()
    counts = fetch_one(
        con,
        "SELECT count(*), count(DISTINCT task), count(DISTINCT run_id), "
        "count(DISTINCT run_id) FILTER (task_missing) FROM tm_calls",
    )
    assert counts is not None
    calls, tasks, runs, missing = (int(n) for n in counts)
    return Nominal(ingests, [(t, k, int(n)) for t, k, n in rows], calls, tasks, runs, missing)


SURELY_FEW = LISTED_DISTINCT // 2
SURELY_MANY = 2 * LISTED_DISTINCT
"""Approximate distinct counts (HyperLogLog, off by a few per cent) at most ``SURELY_FEW``
or past ``SURELY_MANY`` are taken as said; between them, and wherever shards' values
must be added up, the distinct values are counted exactly."""


def survey_rows(
    con: duckdb.DuckDBPyConnection, alone: bool
) -> tuple[list[tuple], dict[str, list[str]]]:
    """Shard step: :func:`~tracemine.mine.profile.aggregates.survey_sql`'s rows, and the distinct
    values of the paths whose count decides whether they are listed: near the limit, or,
    unless the shard is ``alone`` (its values need no adding up), any path that could be
    under it (past ``SURELY_MANY`` in one shard, a path is past it in the whole)."""
    rows = con.execute(profile.survey_sql()).fetchall()
    low = SURELY_FEW if alone else -1
    few = [row[0] for row in rows if low < row[4] <= SURELY_MANY]
    distinct: dict[str, list[str]] = {}
    if few:
        con.register("_tm_only", pa.table({"path": pa.array(few, pa.string())}))
        try:
            for path, found in con.execute(profile.survey_distinct_sql()).fetchall():
                distinct[path] = list(found or [])
        finally:
            con.unregister("_tm_only")
    return rows, distinct


def merge_survey(
    shards: list[tuple[list[tuple], dict[str, list[str]]]], maps: tuple[tuple[str, str], ...]
) -> tuple[Survey, int, int]:
    """The survey of every shard's rows, the number of paths and the number of values.
    A path's values are listed when the whole holds at most ``LISTED_DISTINCT`` distinct
    ones: the union of the shards' sets, counted exactly, or in one store an approximate
    count far enough from the limit to decide."""
    merged: dict[str, list[Any]] = {}
    sets: dict[str, set[str] | None] = {}  # a path's distinct values; None: too many
    for rows, distinct in shards:
        for path, low, high, longest, count, nested, scalar, strings, n in rows:
            found = set(distinct[path]) if path in distinct else None
            if found is None and count <= SURELY_FEW and len(shards) == 1:
                found = set()  # surely few, and no other shard's to add
            if path not in merged:
                merged[path] = [low, high, longest, nested, scalar, strings, int(n)]
                sets[path] = found
                continue
            known = sets[path]
            sets[path] = None if known is None or found is None else known | found
            m = merged[path]
            m[0] = _extreme(min, m[0], low)
            m[1] = _extreme(max, m[1], high)
            m[2] = _extreme(max, m[2], longest)
            m[3], m[4], m[5] = m[3] or nested, m[4] and scalar, m[5] and strings
            m[6] += int(n)
    formats, listed, nested_scalars, shaped = {}, set(), set(), set()
    values = 0
    for path in sorted(merged):
        low, high, longest, nested, scalar, strings, n = merged[path]
        values += n
        name = guess_format(low, high)
        if name:
            formats[path] = name
        digits = any(c.isdigit() for c in (low or "") + (high or ""))
        if strings and not name and digits and (longest or 0) <= MAX_LITERAL_CHARS:
            shaped.add(path)
        known = sets[path]
        few = known is not None and len(known) <= LISTED_DISTINCT
        if scalar and (longest or 0) <= MAX_LITERAL_CHARS and few:
            listed.add(path)
        if nested and scalar:
            nested_scalars.add(path)
    survey = Survey(formats, frozenset(listed), frozenset(nested_scalars), frozenset(shaped), maps)
    return survey, len(merged), values


def _extreme(pick: Any, a: Any, b: Any) -> Any:
    """``pick`` of two values, either of which may be missing (SQL's NULL)."""
    return b if a is None else a if b is None else pick(a, b)


def detect_maps(shards: Shards) -> tuple[tuple[str, str], ...]:
    """The objects of the nominal calls used as maps (:mod:`tracemine.mine.profile.maps`)."""
    paths = sorted({p for found in shards.map(map_paths.distinct_paths, label="paths")
                    for p in found})  # fmt: skip
    wanted = map_paths.wanted(paths)
    if not wanted:
        return ()
    rows = [r for found in shards.map(map_paths.task_counts, wanted, label="maps") for r in found]
    return tuple(map_paths.decide(rows))


def ensure_calls(
    shards: Shards, client: duckdb.DuckDBPyConnection, filters: list[Filter],
    task_key: str | None,
) -> ProfileInfo:  # fmt: skip
    """Build ``tm_calls`` in every shard, and the path survey, unless those stored match
    the files and options; choose the profiles' granularity (:func:`profile.per_fold`,
    or per fold whenever the profiles are merged from several shards)."""
    started = time.perf_counter()
    if task_key:
        _check_task_key(shards, task_key)
    found = Nominal.merge(shards.map(nominal, filters, task_key, label="nominal calls"))
    print_ = fingerprint_of(found.ingests, filters, task_key)
    state = _state(client, "state")
    # a state written before profiles had a granularity is rebuilt whatever its print
    reused = state.get("fingerprint") == print_ and "per_fold" in state
    if not reused:
        maps = detect_maps(shards)
        shards.setup(Setup(maps))
        found_rows = shards.map(survey_rows, shards.client_is_store, label="survey")
        survey, paths, values = merge_survey(found_rows, maps)
        fold = profile.per_fold(found.tasks, paths, values) or not shards.client_is_store
        state = {
            "fingerprint": print_, "calls": found.calls, "tasks": found.tasks,
            "runs": found.runs, "runs_without_task": found.runs_without_task, "per_fold": fold,
            "survey": survey_state(survey),
        }  # fmt: skip
        _save_state(client, "state", state)
    saved = state["survey"]
    survey = Survey(saved["formats"], frozenset(saved["listed"]), frozenset(saved["distinct"]),
                    frozenset(saved["shaped"]),
                    tuple((tool, path) for tool, path in saved["maps"]))  # fmt: skip
    shards.setup(Setup(survey.maps))
    return ProfileInfo(
        fingerprint=print_, reused=reused, calls=state["calls"], tasks=state["tasks"],
        runs=state["runs"], runs_without_task=state["runs_without_task"],
        seconds=round(time.perf_counter() - started, 3), survey=survey,
        per_fold=bool(state["per_fold"]), tool_tasks=found.tool_tasks,
    )  # fmt: skip


def build_in_place(con: duckdb.DuckDBPyConnection, info: ProfileInfo) -> int:
    """Build one store's profiles in place (in the caller's transaction); per task, keep
    the stored rows of tasks whose calls are unchanged when the survey is too
    (:func:`~tracemine.mine.profile.aggregates.stale_tasks`), so that mining again after
    new traces builds the new tasks' rows only. Returns how many tasks' rows were built."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE _tm_task_digests AS {profile.task_digests_sql()}")
    built = _state(con, "profiles")
    stale = None
    kept = ("tm_profile_tasks", "tm_profiles", "tm_profile_values")
    if (not info.per_fold and not built.get("per_fold", True)
            and built.get("survey") == survey_print(info.survey)
            and all(has_table(con, t) for t in kept)):  # fmt: skip
        stale = stale_tasks(con, "tm_profile_tasks")
    if stale is None:
        build_profiles(con, info.survey, info.per_fold)
        count = info.tasks
    else:
        con.register("_tm_stale", pa.table({"task": pa.array(stale, pa.string())}))
        try:
            for table in ("tm_profiles", "tm_profile_values"):
                con.execute(f"DELETE FROM {table} WHERE unit IN (SELECT task FROM _tm_stale)")
            build_profiles(con, info.survey, False, only="_tm_stale")
        finally:
            con.unregister("_tm_stale")
        count = len(stale)
    if info.per_fold:
        con.execute("DROP TABLE IF EXISTS tm_profile_tasks")
    else:
        con.execute("CREATE OR REPLACE TABLE tm_profile_tasks AS SELECT * FROM _tm_task_digests")
    con.execute("DROP TABLE _tm_task_digests")
    return count


def shard_profiles(con: duckdb.DuckDBPyConnection, survey: Survey) -> tuple[pa.Table, pa.Table]:
    """Shard step: build the shard's profiles per fold (needs ``_tm_folds``) and return
    its two tables."""
    with transaction(con):
        build_profiles(con, survey, fold=True)
    return (
        integers(fetch_arrow(con, "SELECT * FROM tm_profiles")),
        integers(fetch_arrow(con, "SELECT * FROM tm_profile_values")),
    )


def merge_profiles(
    client: duckdb.DuckDBPyConnection, shards: list[tuple[pa.Table, pa.Table]]
) -> None:
    """Add the shards' fold profiles up into the client's ``tm_profiles`` and
    ``tm_profile_values``, as the parts of one store are added up."""
    client.register("_tm_shard_profiles", concat([p for p, _ in shards]))
    client.register("_tm_shard_values", concat([v for _, v in shards]))
    try:
        for sql in profile.sum_units_sql("_tm_shard_profiles", "_tm_shard_values"):
            client.execute(sql)
    finally:
        client.unregister("_tm_shard_profiles")
        client.unregister("_tm_shard_values")


def ensure_profiles(
    shards: Shards, client: duckdb.DuckDBPyConnection, info: ProfileInfo,
    assignment: dict[str, int],
) -> ProfileInfo:  # fmt: skip
    """Build ``tm_profiles`` and ``tm_profile_values`` for the calls of ``info`` unless
    those stored match: per task, or per fold of ``assignment``, as ``info.per_fold``
    says. The shards' connections get ``assignment`` as ``_tm_folds``."""
    started = time.perf_counter()
    shards.setup(Setup(info.survey.maps, assignment))
    key: list[Any] = [info.fingerprint, info.per_fold]
    if info.per_fold:
        key.append(hashlib.sha256(json.dumps(sorted(assignment.items())).encode()).hexdigest())
    print_ = hashlib.sha256(json.dumps(key).encode()).hexdigest()[:16]
    reused = _state(client, "profiles").get("fingerprint") == print_
    built = 0
    if not reused:
        if shards.client_is_store:  # one store: built in place, a part at a time
            prepare(client, Setup(info.survey.maps, assignment))
            with transaction(client):
                built = build_in_place(client, info)
                _save_state(client, "profiles", {"fingerprint": print_, "per_fold": info.per_fold,
                                                 "survey": survey_print(info.survey)})  # fmt: skip
        else:
            merge_profiles(client, shards.map(shard_profiles, info.survey, label="profiles"))
            _save_state(client, "profiles", {"fingerprint": print_, "per_fold": True})
            built = info.tasks
    seconds = round(info.seconds + time.perf_counter() - started, 3)
    return replace(info, seconds=seconds, profiles_reused=reused, tasks_built=built,
                   per_task=shards.client_is_store and not info.per_fold)  # fmt: skip


def task_key_hits(con: duckdb.DuckDBPyConnection, spec: str) -> tuple[int, int]:
    """Shard step: the store's runs, and those ``--task-key`` finds a task id in."""
    key = TaskKey.parse(spec)
    runs = store_runs(con)
    return len(runs), sum(bool(key.task_id(run)) for run in runs)


def _check_task_key(shards: Shards, spec: str) -> None:
    """A ``--task-key`` that finds no task id in any run of any shard is a mistake."""
    hits = shards.map(task_key_hits, spec, label="task key")
    if sum(runs for runs, _ in hits) and not sum(found for _, found in hits):
        runs = [run for found in shards.map(runs_of, []) for run in found]
        said = "".join(f"\n  {s}" for s in suggest(runs))
        hint = f"; what the runs carry would give:{said}" if said else ""
        raise TaskKeyError(f"--task-key {spec!r} finds no task id in any run of the store{hint}")


def _register_task_key(con: duckdb.DuckDBPyConnection, spec: str) -> str:
    """Derive each run's task id with ``--task-key`` (same rules as ingest) and register
    the mapping as a table for the nominal-calls SQL."""
    key = TaskKey.parse(spec)
    runs = store_runs(con)
    ids = [run["run_id"] for run in runs]
    con.register("_tm_task_map", pa.table({"run_id": ids, "task": [key.task_id(r) for r in runs]}))
    return "_tm_task_map"
