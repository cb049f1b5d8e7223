"""How often a candidate holds in a context: checked calls and violating calls.

The same count decides a proposal (no violation on the training tasks) and tests it
(violations on the held-out tasks). Kinds without parameters are counted from the summed
profiles alone; kinds whose parameters were fitted on a fold (range, length, one_of,
const, pattern) are counted exactly by one SQL statement over all folds at once
(:func:`fitted_sql`), which also picks a few counterexamples; it runs a part of the
calls at a time (:class:`~tracemine.mine.profile.aggregates.Part`) and the parts' counts are added.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache

import duckdb
import pyarrow as pa

from tracemine.mine.profile.aggregates import Part, Survey, order_of, order_sql, parts
from tracemine.mine.profile.formats import literal_prefix, shape_sql, shapes_sql
from tracemine.mine.propose.context import MineContext, PathProfile
from tracemine.model.contract import Contract, Kind
from tracemine.model.paths import parse

FITTED_KINDS = frozenset({Kind.RANGE, Kind.LENGTH, Kind.ONE_OF, Kind.CONST, Kind.PATTERN})
_EXAMPLES = 3
"""Violating calls kept per fitted item (the first in
:func:`~tracemine.mine.profile.aggregates.order_sql`
order)."""
FITTED_BITS = 1 << 28
"""Bits the held-out counts of a part may mark calls with: a bit per call key of the
part for each item (32 MB a thread), else the calls are grouped (:func:`fitted_sql`)."""
_TYPE_COLUMNS = {"number": "c_all_numeric"}


Example = tuple[tuple, int, str]
"""A violating call: its order (:func:`~tracemine.mine.profile.aggregates.order_of`, or ``()`` where
the calls come ordered), its key and what it showed."""


@dataclass
class Measure:
    checked: int = 0
    violations: int = 0
    examples: list[Example] = field(default_factory=list)


@lru_cache(maxsize=1 << 16)  # asked per candidate and context of a few thousand paths
def parent_path(path: str) -> str | None:
    parent = parse(path).parent
    return parent.text if parent is not None else None


def unary(kind: Kind, params: dict, tool: str, side: str, path: str, ctx: MineContext) -> Measure:
    """Checked and violating calls of a parameter-free unary property in ``ctx``."""
    profile = ctx.paths.get((tool, side, path))
    if kind == Kind.PRESENT:
        parent = ctx.paths.get((tool, side, parent_path(path) or ""))
        if parent is None:
            return Measure()
        present = profile["c_present"] if profile else 0
        return Measure(parent["c_obj"], parent["c_obj"] - present)
    if profile is None:
        return Measure()
    calls = profile["calls"]
    if kind == Kind.NOT_NULL:
        return Measure(calls, profile["c_null"])
    if kind == Kind.TYPE:
        names = params["type"]
        if isinstance(names, list):  # a nullable type, ["string", "null"]
            name = next(n for n in names if n != "null")
            return Measure(calls, calls - profile["c_opt_numeric" if name == "number" else
                                                  f"c_opt_{name}"])  # fmt: skip
        return Measure(calls, calls - profile[_TYPE_COLUMNS.get(names, f"c_all_{names}")])
    if kind == Kind.NON_NEGATIVE:
        return Measure(calls, profile["c_neg"] + _non_numeric(profile))
    if kind == Kind.POSITIVE:
        return Measure(calls, profile["c_nonpos"] + _non_numeric(profile))
    if kind == Kind.NON_EMPTY:
        return Measure(calls, profile["c_empty"] + calls - profile["c_len"])
    if kind == Kind.FORMAT:
        if profile.format != params["format"]:
            return Measure(calls, calls)  # the path's strings were not of that format
        return Measure(calls, calls - profile["c_fmt"])
    if kind == Kind.UNIQUE:
        return Measure(profile["c_multi"], profile["c_dup"])
    raise ValueError(f"{kind} is not counted from profiles")


def _non_numeric(profile: PathProfile) -> int:
    return int(profile["calls"] - profile["c_all_numeric"])


def measure(contract: Contract, ctx: MineContext) -> Measure | None:
    """Count ``contract`` in ``ctx`` from profiles, relation stats or conditional data;
    None for fitted kinds, which :func:`fitted_sql` counts."""
    if contract.when is not None:
        return ctx.shared.conditional.measure(contract, ctx)
    if contract.kind in FITTED_KINDS:
        return None
    pairs = (Kind.EQUALS, Kind.LE, Kind.LT, Kind.SUM_EQUALS, Kind.MEMBER, Kind.SUBSET,
             Kind.SHARES_TOKEN, Kind.RATIO)  # fmt: skip
    if (contract.kind in pairs and len(contract.paths) == 2) or contract.kind in (
        Kind.PAGE_FULL,
        Kind.PRODUCT,
    ):
        return ctx.shared.relations.measure(contract, ctx)
    path = contract.paths[0]
    return unary(contract.kind, contract.params, contract.tool, contract.side.value, path, ctx)


# -- fitted kinds, counted in SQL -----------------------------------------------------------

_VALUE_SQL = (
    "CASE v.jtype WHEN 'string' THEN CAST(to_json(v.str) AS VARCHAR) "
    "WHEN 'boolean' THEN CAST(v.bool AS VARCHAR) "
    "WHEN 'integer' THEN CAST(CAST(v.num AS HUGEINT) AS VARCHAR) "
    "ELSE '~' || v.jtype END"
)
_SHOWN_SQL = (
    f"CASE WHEN v.jtype = 'string' THEN 'string shaped ' || {shape_sql('v.str')} "
    "WHEN v.jtype IN ('integer', 'number') THEN 'number ' || CAST(v.num AS VARCHAR) "
    "ELSE v.jtype END"
)


def _held_out(part: Part) -> str:
    return f"""
    calls AS (SELECT c.call_key, c.tool, t.fold, {order_sql("c")} AS ord FROM {part.calls()} c
              JOIN _tm_folds t ON t.task = c.task),
    v AS (SELECT v.*, c.tool, c.fold FROM {part.values()} v
          SEMI JOIN _tm_only o ON o.path = v.path
          JOIN calls c ON c.call_key = v.call_key)
    """


def pattern_rows_sql(part: Part) -> str:
    """SQL building ``_tm_pattern_rows``: each held-out string of ``part`` under a pattern
    item, with whether it is alone at its path in its call (outside any array), whether it
    starts with the literal prefix and its key: the prefix plus the shape of the rest,
    which answers as the pattern's regular expression on the value would, with one
    regular expression per distinct key."""
    return f"""
    CREATE OR REPLACE TEMP TABLE _tm_pattern_rows AS
    WITH {_held_out(part)},
    rows AS (
        SELECT f.item, f.prefix, v.call_key, v.idx IS NULL AS single, v.jtype, v.len, v.str
        FROM v JOIN _tm_fitted f ON f.tool = v.tool AND f.fold = v.fold AND f.path = v.path
        WHERE f.kind = 'pattern'
    ), shapes AS MATERIALIZED ({shapes_sql("rows WHERE jtype = 'string'")})
    SELECT r.item, r.call_key, r.single, r.jtype, r.len, r.str,
           r.jtype = 'string' AND starts_with(r.str, r.prefix) AS prefixed,
           CASE WHEN r.jtype = 'string'
                THEN r.prefix || substr(s.shape, length(r.prefix) + 1) END AS key
    FROM rows r LEFT JOIN shapes s ON s.str = r.str
    """


def fitted_sql(part: Part, bits: bool = False) -> str:
    """SQL counting, per fitted item (a contract fitted on the other folds), the calls of
    its held-out fold (within ``part``) checked and violating, with the first
    ``_EXAMPLES`` violating calls (in :func:`~tracemine.mine.profile.aggregates.order_sql` order)
    and
    what they showed (strings redacted to shapes). Every
    check is per value; a call violates when one of its values does. Needs ``_tm_fitted``,
    ``_tm_fitted_values``, ``_tm_pattern_rows``, ``_tm_pattern_ok``, ``_tm_only`` and
    ``_tm_folds``.

    With ``bits`` an item's checked calls are the bits it sets in a bitstring of the
    part's call keys, and only the violating values are grouped by call; without, every
    value is (a value outside any array alone is its call's row)."""
    sized = "v.jtype IN ('array', 'string', 'object')"
    if bits:
        counted = f"""), seen AS (
        SELECT item, bit_count(bitstring_agg(call_key, {part.first}, {part.last})) AS checked
        FROM checked GROUP BY item
    ), bad AS (
        SELECT item, call_key, min({_SHOWN_SQL}) AS shown FROM checked v WHERE bad
        GROUP BY item, call_key
    )
    SELECT s.item, s.checked, count(b.call_key) AS violations,
           min_by({{'ord': c.ord, 'shown': b.shown}}, c.ord, {_EXAMPLES})
               FILTER (b.call_key IS NOT NULL) AS examples
    FROM seen s LEFT JOIN bad b ON b.item = s.item
    LEFT JOIN calls c ON c.call_key = b.call_key
    GROUP BY s.item, s.checked
    """
    else:
        counted = f"""), per_call AS (
        -- a value outside any array is its call's only one at its path: no grouping
        SELECT item, call_key, bad, CASE WHEN bad THEN {_SHOWN_SQL} END AS shown
        FROM checked v WHERE single
        UNION ALL
        SELECT item, call_key, bool_or(bad), min(CASE WHEN bad THEN {_SHOWN_SQL} END)
        FROM checked v WHERE NOT single GROUP BY item, call_key
    ), counted AS (
        SELECT item, count(*) AS checked, count(*) FILTER (bad) AS violations
        FROM per_call GROUP BY item
    ), shown AS (
        SELECT p.item, min_by({{'ord': c.ord, 'shown': p.shown}}, c.ord, {_EXAMPLES}) AS examples
        FROM per_call p JOIN calls c ON c.call_key = p.call_key WHERE p.bad GROUP BY p.item
    )
    SELECT n.item, n.checked, n.violations, s.examples
    FROM counted n LEFT JOIN shown s ON s.item = n.item
    """
    return f"""
    WITH {_held_out(part)},
    checked AS (
        SELECT f.item, v.call_key, v.idx IS NULL AS single, v.jtype, v.num, v.str,
               CASE f.kind
                   WHEN 'range' THEN v.jtype NOT IN ('integer', 'number')
                                     OR v.num < f.lo OR v.num > f.hi
                   WHEN 'length' THEN NOT {sized} OR v.len < f.lo OR v.len > f.hi
                   ELSE fv.value IS NULL END AS bad
        FROM v JOIN _tm_fitted f ON f.tool = v.tool AND f.fold = v.fold AND f.path = v.path
        LEFT JOIN _tm_fitted_values fv ON fv.item = f.item
             AND fv.value = CASE WHEN f.kind IN ('one_of', 'const') THEN {_VALUE_SQL} END
        WHERE f.kind <> 'pattern'
        UNION ALL
        SELECT v.item, v.call_key, v.single, v.jtype, NULL, v.str,
               NOT coalesce(v.prefixed AND ok.ok, FALSE) OR v.len > 256
        FROM _tm_pattern_rows v LEFT JOIN _tm_pattern_ok ok ON ok.item = v.item AND ok.key = v.key
    {counted}"""


def count_fitted(
    con: duckdb.DuckDBPyConnection, survey: Survey, items: list[tuple[int, int, Contract]],
    only: str | None = None,
) -> dict[int, Measure]:  # fmt: skip
    """Count fitted-kind contracts, each on its held-out fold: ``items`` are (item number,
    fold, contract). Needs ``_tm_folds(task, fold)`` registered. The calls are counted a
    part at a time; a call's values are all in its part, and so are its task's calls.
    With ``only`` (a table of ``task``), on those tasks alone."""
    if not items:
        return {}
    cols: dict[str, list] = {k: [] for k in ("item", "fold", "tool", "side", "path", "kind",
                                              "lo", "hi", "regex", "prefix")}  # fmt: skip
    values: dict[str, list] = {"item": [], "value": []}
    for item, fold, contract in items:
        params = contract.params
        regex = params.get("regex")
        row = (item, fold, contract.tool, contract.side.value, contract.paths[0],
               contract.kind.value, params.get("min"), params.get("max"), regex,
               literal_prefix(regex) if regex else "")  # fmt: skip
        for name, value in zip(cols, row, strict=True):
            cols[name].append(float(value) if name in ("lo", "hi") and value is not None
                              else value)  # fmt: skip
        for value in params.get("values", [params["value"]] if "value" in params else []):
            values["item"].append(item)
            values["value"].append(json.dumps(value, ensure_ascii=False))
    con.register("_tm_fitted", pa.table(cols, schema=_FITTED_SCHEMA))
    con.register("_tm_only", pa.table({"path": sorted(set(cols["path"]))}))
    con.register("_tm_fitted_values", pa.table(values, schema=_VALUES_SCHEMA))
    regexes = {
        item: re.compile(c.params["regex"]) for item, _, c in items if c.kind == Kind.PATTERN
    }
    matched: dict[tuple[int, str], bool] = {}  # (item, key) → the regex matches
    out = {item: Measure() for item, _, _ in items}
    try:
        for part in parts(con, only):
            con.execute(pattern_rows_sql(part))
            keys = con.execute(
                "SELECT DISTINCT item, key FROM _tm_pattern_rows WHERE prefixed"
            ).fetchall()
            for item, key in keys:
                if (item, key) not in matched:
                    matched[(item, key)] = bool(regexes[item].fullmatch(key))
            ok = {"item": [k[0] for k in keys], "key": [k[1] for k in keys],
                  "ok": [matched[(item, key)] for item, key in keys]}  # fmt: skip
            con.register("_tm_pattern_ok", pa.table(ok, schema=_OK_SCHEMA))
            span = part.last - part.first + 1
            bits = part.index is not None and span * len(items) <= FITTED_BITS
            try:
                rows = con.execute(fitted_sql(part, bits)).fetchall()
            finally:
                con.unregister("_tm_pattern_ok")
            for item, checked, violations, examples in rows:
                found = out[item]
                shown = found.examples + [
                    (order_of(e["ord"]), int(e["ord"]["key"]), str(e["shown"]))
                    for e in examples or []
                ]
                out[item] = Measure(found.checked + int(checked),
                                    found.violations + int(violations),
                                    sorted(shown)[:_EXAMPLES])  # fmt: skip
    finally:
        for name in ("_tm_fitted", "_tm_fitted_values", "_tm_only"):
            con.unregister(name)
        con.execute("DROP TABLE IF EXISTS _tm_pattern_rows")
    return out


def add_measures(shards: list[dict[int, Measure]]) -> dict[int, Measure]:
    """The shards' counts of each item added up, with the first counterexamples in
    :func:`~tracemine.mine.profile.aggregates.order_sql` order (of content, a task's: the same in
    every shard layout)."""
    out: dict[int, Measure] = {}
    for found in shards:
        for item, m in found.items():
            seen = out.get(item)
            out[item] = m if seen is None else Measure(
                seen.checked + m.checked, seen.violations + m.violations,
                sorted(seen.examples + m.examples)[:_EXAMPLES])  # fmt: skip
    return out


_FITTED_SCHEMA = pa.schema([
    ("item", pa.int64()), ("fold", pa.int64()), ("tool", pa.string()), ("side", pa.string()),
    ("path", pa.string()), ("kind", pa.string()), ("lo", pa.float64()), ("hi", pa.float64()),
    ("regex", pa.string()), ("prefix", pa.string()),
])  # fmt: skip
_VALUES_SCHEMA = pa.schema([("item", pa.int64()), ("value", pa.string())])
_OK_SCHEMA = pa.schema([("item", pa.int64()), ("key", pa.string()), ("ok", pa.bool_())])
