"""Objects used as maps: ``variants: {"1270145486": {...}, "4983901480": {...}}``.

The store flattens every key into the path (``result.variants["1270145486"].price``), so a
contract mined there would only ever apply to that one record. An object is a map when its
keys look like ids and change from task to task; its paths then get the step ``{*}``
(``result.variants{*}.price``, one value per entry, like ``[*]`` over an array) before any
profile is built. Mining reads values through the view ``tm_values``, which is
``json_values`` with those paths rewritten.

Detection looks at the distinct paths first (cheap), then counts tasks only for objects
whose keys look like ids:

- a key looks like an id when it is all digits, has a run of three or more digits, is
  a hex or UUID token of eight characters or more with a digit in it, or is an email
  address (files shared with people, keyed by their address); it looks like a record's
  name when it holds words apart (``{"New Car Rental": 50.0}``: prices keyed by the
  companies the call named), which no field name does;
- an object is a map when at least ``ID_SHARE`` of its keys look like ids, it has at least
  ``MIN_KEYS`` of them, and a key appears on average in at most ``KEY_SHARE`` of the tasks
  the object appears in. Keys that every record shares (years, say) are fields. Keys
  that hold words apart make a map however often they recur (no field is named so:
  a city's restaurants, the same in every mined task, are records all the same), and
  so on one task, which cannot show its keys change.

Only the outermost map of a path is found; a map inside a map's entries keeps its keys.
The whole result (or arguments) object may be one (``result{*}``): its keys are then
weighed per tool against every key the tool's root has.
"""

from __future__ import annotations

import re
from collections import defaultdict

import duckdb
import pyarrow as pa

from tracemine.ingest.store import sql_string
from tracemine.model.paths import ROOTS, PathError, format_path, parse

ID_SHARE = 0.8
MIN_KEYS = 2
KEY_SHARE = 0.5
_ID = re.compile(r"\d+|.*\d{3,}.*|(?=.*\d)[0-9a-fA-F-]{8,}|[^@\s]+@[^@\s]+\.[^@\s]+")
QUOTED = '["'
_NAME = re.compile(r"\S+(?:\s+\S+)+")
_SEGMENT = r'(\.[A-Za-z_][A-Za-z0-9_\-]*|\["(?:[^"\\]|\\.)*"\])'


def id_like(key: str) -> bool:
    """Whether an object key looks like an identifier rather than a field name."""
    return _ID.fullmatch(key) is not None


def name_like(key: str) -> bool:
    """Whether an object key is a record's name of several words (``New Car Rental``)."""
    return _NAME.fullmatch(key) is not None


def key_like(key: str) -> bool:
    """Whether an object key names a record (an id, or a name of several words) rather
    than a field."""
    return id_like(key) or name_like(key)


def _candidates(paths: list[str], roots_whole: bool = False) -> dict[str, set[str]]:
    """Object paths whose keys mostly look like ids or names, with their child paths.
    ``roots_whole``: a root with enough such keys is a candidate with every key it has,
    whatever their share (paths of every tool, whose roots :func:`decide` weighs apart)."""
    children: dict[str, dict[str, str]] = defaultdict(dict)
    for text in paths:
        try:
            path = parse(text)
        except PathError:
            continue
        for i, step in enumerate(path.steps):
            if not isinstance(step, str):
                continue
            if any(isinstance(s, str) and key_like(s) for s in path.steps[:i]):
                break  # only the outermost map
            prefix = format_path(path.root, path.steps[:i])
            children[prefix].setdefault(step, format_path(path.root, path.steps[: i + 1]))
    found = {}
    for prefix, keys in children.items():
        whole = roots_whole and prefix in ROOTS
        if keyed_by_records(list(keys), whole):
            found[prefix] = set(keys.values())
    return found


def keyed_by_records(keys: list[str], whole: bool = False) -> bool:
    """Whether an object with these keys is keyed by records as far as its keys say: at
    least ``MIN_KEYS`` of them look like ids or names, and (unless ``whole``: a root,
    weighed per tool apart) at least ``ID_SHARE`` of them do."""
    ids = sum(key_like(key) for key in keys)
    return ids >= MIN_KEYS and (whole or ids >= ID_SHARE * len(keys))


def _under(path: str, prefix: str) -> bool:
    return path.startswith((prefix + ".", prefix + "[", prefix + "{"))


def distinct_paths(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Shard step: every path of the store's values."""
    return [row[0] for row in con.execute("SELECT DISTINCT path FROM json_values").fetchall()]


def wanted(paths: list[str]) -> list[str]:
    """The object paths that could be maps and their children, across tools (cheap, and
    empty for most stores): the paths whose tasks :func:`task_counts` counts."""
    candidates = _candidates(paths, roots_whole=True)
    return sorted({p for prefix, kids in candidates.items() for p in (prefix, *kids)})


def task_counts(con: duckdb.DuckDBPyConnection, paths: list[str]) -> list[tuple[str, str, int]]:
    """Shard step: per tool and one of ``paths``, the nominal tasks (``tm_calls``) that
    have a value there. A task lies in one shard, so the shards' counts add up."""
    con.register("_tm_map_paths", pa.table({"path": pa.array(paths, pa.string())}))
    try:
        rows = con.execute(
            "SELECT c.tool, v.path, count(DISTINCT c.task) FROM json_values v "
            "SEMI JOIN _tm_map_paths w ON w.path = v.path "
            "JOIN tm_calls c ON c.call_key = v.call_key GROUP BY c.tool, v.path"
        ).fetchall()
    finally:
        con.unregister("_tm_map_paths")
    return [(tool, path, int(tasks)) for tool, path, tasks in rows]


def decide(rows: list[tuple[str, str, int]]) -> list[tuple[str, str]]:
    """The objects used as maps, as (tool, path), from the tasks per tool and path of
    :func:`task_counts`: decided per tool, so another tool's fixed fields at the same
    path stay fields."""
    by_tool: dict[str, dict[str, int]] = defaultdict(dict)
    for tool, path, count in rows:
        by_tool[tool][path] = by_tool[tool].get(path, 0) + int(count)
    maps: list[tuple[str, str]] = []
    for tool, tasks in sorted(by_tool.items()):
        chosen: list[str] = []
        for prefix, kids in sorted(_candidates(list(tasks)).items(), key=lambda kv: len(kv[0])):
            whole = tasks.get(prefix, 0)
            seen = [tasks.get(kid, 0) for kid in kids]
            if any(_under(prefix, outer) for outer in chosen):
                continue  # a map inside a map's entries keeps its keys
            names = sum(name_like(parse(kid).steps[-1]) for kid in kids)
            # keys that hold words apart make a map however often they recur: no field is
            # named so, and the same records asked for in every mined task (one city's
            # restaurants) are still records
            if whole and (sum(seen) / len(seen) <= KEY_SHARE * whole
                          or names >= max(ID_SHARE * len(kids), MIN_KEYS)):  # fmt: skip
                chosen.append(prefix)
        maps += [(tool, prefix) for prefix in sorted(chosen)]
    return maps


def values_view_sql(maps: list[tuple[str, str]]) -> str:
    """SQL creating ``tm_values``: ``json_values`` with each map's key step made ``{*}``
    in the calls of its tool; values below a map count as many per call (``idx`` set),
    like those under ``[*]``."""
    if not maps:
        return "CREATE OR REPLACE TEMP VIEW tm_values AS SELECT * FROM json_values"
    grouped: dict[str, list[str]] = defaultdict(list)
    for tool, prefix in maps:
        grouped[tool].append(prefix)
    conditions, rewrites = [], []
    for tool, prefixes in sorted(grouped.items()):
        under = " OR ".join(
            f"starts_with(v.path, {sql_string(m + '.')}) "
            f"OR starts_with(v.path, {sql_string(m + QUOTED)})"
            for m in prefixes
        )
        escaped = "|".join(re.sub(r"([\\.^$|?*+()\[\]{}])", r"\\\1", m) for m in prefixes)
        pattern = sql_string("^(" + escaped + ")" + _SEGMENT)
        conditions.append(f"(m.tool = {sql_string(tool)} AND ({under}))")
        rewrite = f"regexp_replace(v.path, {pattern}, '\\1{{*}}')"
        rewrites.append(f"WHEN {conditions[-1]} THEN {rewrite}")
    tools = ", ".join(sql_string(tool) for tool in sorted(grouped))
    return f"""
    CREATE OR REPLACE TEMP VIEW tm_values AS
    SELECT v.call_key, v.side, CASE {" ".join(rewrites)} ELSE v.path END AS path,
           v.jtype, v.num, v.str, v.bool, v.len,
           CASE WHEN {" OR ".join(conditions)} THEN coalesce(v.idx, 0) ELSE v.idx END AS idx
    FROM json_values v
    LEFT JOIN (SELECT call_key, tool FROM tm_calls WHERE tool IN ({tools})) m
           ON m.call_key = v.call_key
    """
