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
  address (files shared with people, keyed by their address);
- an object is a map when at least ``ID_SHARE`` of its keys look like ids, it has at least
  ``MIN_KEYS`` of them, and a key appears on average in at most ``KEY_SHARE`` of the tasks
  the object appears in. Keys that every record shares (years, say) are fields.

Only the outermost map of a path is found; a map inside a map's entries keeps its keys.
"""

from __future__ import annotations

import re
from collections import defaultdict

import duckdb
import pyarrow as pa

from tracemine.model.paths import PathError, format_path, parse

ID_SHARE = 0.8
MIN_KEYS = 2
KEY_SHARE = 0.5
_ID = re.compile(r"\d+|.*\d{3,}.*|(?=.*\d)[0-9a-fA-F-]{8,}|[^@\s]+@[^@\s]+\.[^@\s]+")
_SEGMENT = r'(\.[A-Za-z_][A-Za-z0-9_\-]*|\["(?:[^"\\]|\\.)*"\])'


def id_like(key: str) -> bool:
    """Whether an object key looks like an identifier rather than a field name."""
    return _ID.fullmatch(key) is not None


def _candidates(paths: list[str]) -> dict[str, set[str]]:
    """Object paths whose keys mostly look like ids, with their child paths."""
    children: dict[str, dict[str, str]] = defaultdict(dict)
    for text in paths:
        try:
            path = parse(text)
        except PathError:
            continue
        for i, step in enumerate(path.steps):
            if not isinstance(step, str):
                continue
            if any(isinstance(s, str) and id_like(s) for s in path.steps[:i]):
                break  # only the outermost map
            prefix = format_path(path.root, path.steps[:i])
            children[prefix].setdefault(step, format_path(path.root, path.steps[: i + 1]))
    found = {}
    for prefix, keys in children.items():
        ids = [k for k in keys if id_like(k)]
        if len(ids) >= MIN_KEYS and len(ids) >= ID_SHARE * len(keys):
            found[prefix] = set(keys.values())
    return found


def detect(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The paths of the objects used as maps in the nominal calls (``tm_calls``)."""
    paths = [row[0] for row in con.execute("SELECT DISTINCT path FROM json_values").fetchall()]
    candidates = _candidates(paths)
    if not candidates:
        return []
    wanted = sorted({p for prefix, kids in candidates.items() for p in (prefix, *kids)})
    con.register("_tm_map_paths", pa.table({"path": wanted}))
    try:
        tasks = dict(
            con.execute(
                "SELECT v.path, count(DISTINCT c.task) FROM json_values v "
                "SEMI JOIN _tm_map_paths w ON w.path = v.path "
                "JOIN tm_calls c ON c.call_key = v.call_key GROUP BY v.path"
            ).fetchall()
        )
    finally:
        con.unregister("_tm_map_paths")
    maps = []
    for prefix, kids in sorted(candidates.items()):
        whole = tasks.get(prefix, 0)
        seen = [tasks.get(kid, 0) for kid in kids]
        if whole and sum(seen) / len(seen) <= KEY_SHARE * whole:
            maps.append(prefix)
    return maps


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def values_view_sql(maps: list[str]) -> str:
    """SQL creating ``tm_values``: ``json_values`` with each map's key step made ``{*}``;
    values below a map count as many per call (``idx`` set), like those under ``[*]``."""
    if not maps:
        return "CREATE OR REPLACE TEMP VIEW tm_values AS SELECT * FROM json_values"
    under = " OR ".join(
        f"starts_with(path, {_quote(m + '.')}) OR starts_with(path, {_quote(m + '[' + chr(34))})"
        for m in maps
    )
    escaped = "|".join(re.sub(r"([\\.^$|?*+()\[\]{}])", r"\\\1", m) for m in maps)
    rewrite = f"regexp_replace(path, {_quote('^(' + escaped + ')' + _SEGMENT)}, '\\1{{*}}')"
    return f"""
    CREATE OR REPLACE TEMP VIEW tm_values AS
    SELECT call_key, side, CASE WHEN {under} THEN {rewrite} ELSE path END AS path,
           jtype, num, str, bool, len,
           CASE WHEN {under} THEN coalesce(idx, 0) ELSE idx END AS idx
    FROM json_values
    """
