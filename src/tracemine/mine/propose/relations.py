"""Relations within one call: which path pairs to try, and per-task counts for each.

Pairs are tried only between type-compatible paths with some affinity (a shared name part,
a shared value, or a name that says what the other is: ``limit`` for a list's length,
``total`` for a sum), so their number grows with the paths of a tool, not its square.
Per part of the tasks, the per-call rows of the (tool, side, path)s some pair reads are
built once and numbered; then per pair and fold one SQL statement over them, joined on the
call and the path's number, counts the tasks and calls checked and the calls breaking each
direction of the relation; a context sums its folds' rows.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from tracemine.ingest.store import fetch_arrow, sql_string, transaction
from tracemine.mine.profile.aggregates import (
    Part,
    Survey,
    call_paths_sql,
    distinct_tasks_sql,
    parts,
    plain_scans,
    stale_tasks,
    survey_print,
    task_digests_sql,
    unit_calls,
)
from tracemine.mine.profile.formats import name_tokens
from tracemine.mine.profile.shards import Shards, concat, has_table, integers
from tracemine.mine.propose.context import MineContext, PathProfile
from tracemine.mine.propose.measure import Measure
from tracemine.mine.propose.scales import Scales, load_scales
from tracemine.model.contract import Contract, Kind
from tracemine.model.paths import element_steps, format_path, parse, selects_many
from tracemine.monitor._tokens import tokens_sql

LIMIT_WORDS = frozenset({"limit", "max", "top", "size", "count", "num", "n", "k", "per", "page"})
TOTAL_WORDS = frozenset({"total", "sum", "subtotal", "amount", "count"})
ORDER_WORDS = (("start", "end"), ("min", "max"), ("from", "to"), ("begin", "end"),
               ("low", "high"), ("first", "last"))  # fmt: skip
VAGUE_WORDS = frozenset(
    {"is", "at", "the", "of", "a", "value", "data", "item", "result", "cent", "pct", "m"}
)  # units and fillers: ``shipping_cents`` and ``subtotal_cents`` are not related by name
MAX_PAIRS_PER_TOOL = 400
MAX_VOCABULARY_PAIRS = 64
"""Pairs per tool and each of the kinds ``tok``, ``ratio`` and ``page``, apart from the
quota of the others: a tool's wide result must not starve them, nor they the others."""
START_WORDS = frozenset({"offset", "start", "skip", "cursor"})
PAGE_WORDS = frozenset({"page", "pageno", "pagenumber"})
PAGE_LIMIT_WORDS = frozenset({"limit", "size", "max", "top", "k", "n", "results", "per"})
COUNT_WORDS = frozenset({"total", "count", "num", "matched", "found"})
"""A result count beside a page (``total``, ``total_hits``, ``count``): not ``page_size``,
which echoes the limit."""
_NO_WORDS_FORMATS = frozenset({"date", "date-time", "uuid", "time"})


@dataclass(frozen=True)
class Pair:
    """Two paths of one tool's calls; ``kind`` says which relations the counts test:
    eq (v1: differ), ord (v1: l>r, v2: l>=r, v3: l<r, v4: l<=r), len (the same on
    len(left)), sum (v1: sum(left) != right), member (v1: a left value not in right),
    tok (v1: no word of right in left, v2: the same string), page (v1: len(left) is not
    min(xpath, right - start), v2: right - start > xpath, the page was cut by the limit;
    ``vtype`` says what ``opath`` is: ``start`` an offset, ``page`` a 1-based page number,
    ``none`` no such argument), asked (v1: a value the argument list left asked for is
    none of the result's values at right), product (v1: left is not right × xpath, of
    side ``xside``; ``vtype`` ``one`` three numbers, ``len`` xpath a list whose length
    counts, ``each`` three keys of one list's elements), ratio (left / right per task,
    :mod:`.scales`) and keys (v1: a name in right that is no key of the map left, v2: a
    key not in right)."""

    pid: int
    tool: str
    kind: str
    vtype: str  # number | string
    lside: str
    lpath: str
    rside: str
    rpath: str
    xpath: str = ""
    opath: str = ""
    xside: str = "args"


class _Affinity:
    """Which scalar paths of one tool have some affinity with which: a shared name part, a
    name pair that says an order (``start``, ``end``) or a shared listed value. Indexed by
    name part and by value, so that finding a path's affine paths costs what there are,
    not a test against every path of the tool (a seat map has thousands)."""

    def __init__(self, profiles: list[PathProfile], ctx: MineContext) -> None:
        self.tokens = [name_tokens(p.path) - VAGUE_WORDS for p in profiles]
        self.values: list[frozenset[Any]] = []
        self.by_token: dict[str, list[int]] = defaultdict(list)
        self.by_value: dict[Any, list[int]] = defaultdict(list)
        for i, profile in enumerate(profiles):
            for word in self.tokens[i]:
                self.by_token[word].append(i)
            listing = ctx.values.get((profile.tool, profile.side, profile.path))
            listed = frozenset(listing.counts) if listing is not None else frozenset()
            self.values.append(listed)
            for value in listed:
                self.by_value[value].append(i)
        self._memo: dict[int, list[int]] = {}

    def of(self, i: int) -> list[int]:
        """The indexes affine with path ``i`` (itself among them when it is), in order."""
        found = self._memo.get(i)
        if found is not None:
            return found
        near: set[int] = set()
        tokens = self.tokens[i]
        for word in tokens:
            near.update(self.by_token[word])
        for x, y in ORDER_WORDS:
            if x in tokens:
                near.update(self.by_token.get(y, ()))
            if y in tokens:
                near.update(self.by_token.get(x, ()))
        for value in self.values[i]:
            near.update(self.by_value[value])
        self._memo[i] = found = sorted(near)
        return found


def _vtype(profile: PathProfile) -> str | None:
    calls = profile["calls"]
    if profile["c_all_numeric"] == calls:
        return "number"
    dated = profile.format in ("date", "date-time") and profile["c_fmt"] == calls
    if profile["c_all_string"] == calls:
        return "date" if dated else "string"
    return None


def find_pairs(ctx: MineContext) -> list[Pair]:
    """Candidate pairs per tool, from the profiles of every task (deterministic order):
    the first ``MAX_PAIRS_PER_TOOL`` that :func:`_tool_pairs` yields."""
    pairs: list[Pair] = []
    for tool in ctx.tools():
        for kind, vtype, left, right in itertools.islice(_tool_pairs(ctx, tool),
                                                         MAX_PAIRS_PER_TOOL):  # fmt: skip
            pairs.append(Pair(len(pairs), tool, kind, vtype, left.side, left.path,
                              right.side, right.path))  # fmt: skip
        for found in _VOCABULARY_PAIRS:
            for row in itertools.islice(found(ctx, tool), MAX_VOCABULARY_PAIRS):
                one, two = row[2], row[3]
                extra = [str(x) for x in row[4:]]  # page pairs: the limit's path, the offset's
                pairs.append(Pair(len(pairs), tool, row[0], row[1], one.side, one.path,
                                  two.side, two.path, *extra))  # fmt: skip
    return pairs


def _scalars(ctx: MineContext, tool: str) -> list[tuple[PathProfile, str]]:
    """A tool's supported paths of one scalar value type, outside any array."""
    out = []
    for p in ctx.profiles(tool):
        vtype = _vtype(p) if p.tasks >= ctx.min_support else None
        if vtype is not None and p.path not in ("args", "result") and not p.has_wildcard:
            out.append((p, vtype))
    return out


_Found = Iterator[tuple[str, str, PathProfile, PathProfile]]


def _token_pairs(ctx: MineContext, tool: str) -> _Found:
    """A result string and an argument string, neither a date nor an id of a fixed
    shape: whether the result speaks of what was asked (``cityName`` of ``query``)."""
    strings = [p for p, t in _scalars(ctx, tool) if t == "string"
               and p.format not in _NO_WORDS_FORMATS]  # fmt: skip
    for left in strings:
        if left.side != "result":
            continue
        for right in strings:
            if right.side == "args":
                yield ("tok", "string", left, right)


def _ratio_pairs(ctx: MineContext, tool: str) -> _Found:
    """Two numbers of one call with a shared name part (``amount_cents`` and ``amount``,
    ``fare`` and ``total``), the first in the result: whether one is a fixed multiple of
    the other (a unit, a rate)."""
    numbers = [p for p, t in _scalars(ctx, tool) if t == "number"]
    affinity = _Affinity(numbers, ctx)
    for i, left in enumerate(numbers):
        if left.side != "result":
            continue
        for j in affinity.of(i):
            right = numbers[j]
            if j != i and (right.side == "args" or left.path < right.path):
                yield ("ratio", "number", left, right)


def _page_pairs(
    ctx: MineContext, tool: str
) -> Iterator[tuple[str, str, PathProfile, PathProfile, str, str]]:
    """A result list, a count beside it (``total``, ``total_hits``) and a limit among the
    arguments (``limit``, ``page_size``, ``max_results``), with an offset or page argument
    when there is one: whether the list is as long as the page can be."""
    scalars = _scalars(ctx, tool)
    numbers = [p for p, t in scalars if t == "number"]
    counts = [p for p in numbers if p.side == "result" and name_tokens(p.path) & COUNT_WORDS
              and not name_tokens(p.path) & PAGE_LIMIT_WORDS - {"n"}]  # fmt: skip
    limits = [p for p in numbers if p.side == "args"
              and name_tokens(p.path) & PAGE_LIMIT_WORDS]  # fmt: skip
    starts = [p for p in numbers if p.side == "args" and name_tokens(p.path) & START_WORDS]
    pages = [p for p in numbers if p.side == "args" and name_tokens(p.path) & PAGE_WORDS
             and not name_tokens(p.path) & PAGE_LIMIT_WORDS]  # fmt: skip
    lists = [p for p in ctx.profiles(tool) if p.side == "result" and p.json_type == "array"
             and not p.has_wildcard and p.tasks >= ctx.min_support]  # fmt: skip
    offset = ("start", starts[0].path) if starts else ("page", pages[0].path) if pages else (
        "none", "")  # fmt: skip
    for left in lists:
        for right in counts:
            for limit in limits:
                yield ("page", offset[0], left, right, limit.path, offset[1])


def _keys_pairs(ctx: MineContext, tool: str) -> _Found:
    """An object of the result used as a map (``result{*}``: entries keyed by the
    companies or hotels the call named) and an argument of strings, one or a list:
    whether the map's entries are the names asked for. Tried on tools of any support
    (one task shows whether the keys are the names it asked for; pricing says what that
    is worth), since a map's keys are rare and so are such pairs."""
    profiles = list(ctx.profiles(tool))
    maps = [p for p in profiles if p.side == "result" and p.path.endswith("{*}")
            and not selects_many(p.path[:-3])]  # fmt: skip
    if not maps:
        return
    names = []
    for p in profiles:
        if p.side != "args" or p.has_wildcard or p.path == "args":
            continue
        element = ctx.paths.get((tool, "args", p.path + "[*]")) if p.json_type == "array" else p
        if element is not None and element["c_all_string"] == element["calls"] > 0:
            names.append(p)
    for entry in maps:
        owner = ctx.paths.get((tool, "result", entry.path[:-3]))
        if owner is None:
            continue
        for right in names:
            yield ("keys", "string", owner, right)


PRODUCT_WORDS = frozenset({"total", "subtotal", "amount", "sum", "cost"})
"""What a product is named (``total``, ``line_total``, ``amount_cents``): unit price times
quantity is a total, whatever the unit."""


def _product_pairs(
    ctx: MineContext, tool: str
) -> Iterator[tuple[str, str, PathProfile, PathProfile, str, str, str]]:
    """A result number named like a total (``total``, ``amount``, ``line_total``) and two
    other numbers of the call, one of them whole (a quantity) or the length of an argument
    list (``len(args.passengers)``): whether the total is their product, unit price times
    quantity, so a price or a total in the wrong unit breaks it. Three keys of one list's
    elements (``items[*].line_total``, ``items[*].unit_price``, ``items[*].quantity``) are
    tried element by element. A factor that was always 0 or always 1 says nothing."""
    supported = [p for p in ctx.profiles(tool) if p.tasks >= ctx.min_support
                 and p.path not in ("args", "result")]  # fmt: skip

    def factor(p: PathProfile) -> bool:
        return _vtype(p) == "number" and not (p["nmin"] == p["nmax"] and p["nmin"] in (0, 1))

    def whole(p: PathProfile) -> bool:
        return p["c_all_integer"] == p["calls"]

    def total(p: PathProfile) -> bool:
        return p.side == "result" and bool(name_tokens(p.path) & PRODUCT_WORDS)

    groups: dict[str, list[PathProfile]] = defaultdict(list)  # "": one value a call
    lists = []
    for p in supported:
        if not p.has_wildcard and factor(p):
            groups[""].append(p)
        elif p.has_wildcard and factor(p):
            element = element_steps((parse(p.path),))  # P[*].key, as the monitor reads it
            if element is not None:
                groups[f"{p.side}:{format_path(p.side, element[0])}"].append(p)
        if p.side == "args" and p.json_type == "array" and not p.has_wildcard:
            lists.append(p)
    for group, numbers in sorted(groups.items()):
        mode = "each" if group else "one"
        for x in numbers:
            if not total(x):
                continue
            others = sorted((p for p in numbers if p is not x), key=lambda p: (p.side, p.path))
            for a, b in itertools.combinations(others, 2):
                if whole(a) or whole(b):
                    yield ("product", mode, x, a, b.path, "", b.side)
            if not group:
                for a in others:
                    for n in lists:
                        yield ("product", "len", x, a, n.path, "", n.side)


# the vocabulary's pair finders, each with a quota of its own (rows: kind, value type,
# left, right, then what the kind needs more)
_VOCABULARY_PAIRS: tuple[Callable[[MineContext, str], Iterator[tuple[Any, ...]]], ...] = (
    _token_pairs,
    _ratio_pairs,
    _page_pairs,
    _keys_pairs,
    _product_pairs,
)


def _tool_pairs(ctx: MineContext, tool: str) -> Iterator[tuple[str, str, PathProfile, PathProfile]]:
    """A tool's pairs in order: echoes and orders between affine scalars, sums of a list's
    numbers, lengths of lists, members of argument lists and what those lists asked for.
    Lazily, so that a tool of thousands of paths stops being searched once it has its
    quota."""
    profiles = [p for p in ctx.profiles(tool) if p.tasks >= ctx.min_support]
    typed = [(p, _vtype(p)) for p in profiles]
    scalars = [(p, t) for p, t in typed if t is not None and p.path not in ("args", "result")]
    affinity = _Affinity([p for p, _ in scalars], ctx)
    for i, (left, lt) in enumerate(scalars):
        for j in affinity.of(i):
            right, rt = scalars[j]
            if j == i or right.has_wildcard:
                continue
            same = lt == rt or {lt, rt} == {"string", "date"}
            if same and left.side == "result" and right.side == "args" and lt != "date":
                yield ("eq", "string" if lt != "number" else "number", left, right)
            if lt == rt and lt in ("number", "date") and (left.has_wildcard or
                                                          left.path < right.path):  # fmt: skip
                yield ("ord", lt, left, right)
    totals = [
        (j, right)
        for j, (right, rt) in enumerate(scalars)
        if rt == "number" and right.side == "result" and not right.has_wildcard
    ]
    for i, (left, lt) in enumerate(scalars):
        if not (left.has_wildcard and lt == "number" and left.side == "result"):
            continue
        near = set(affinity.of(i))
        for j, right in totals:
            if name_tokens(right.path) & TOTAL_WORDS or j in near:
                yield ("sum", "number", left, right)
    arrays = [p for p in profiles if p.json_type == "array" and p.side == "result"]
    sizes = [right for right, rt in scalars if rt == "number" and not right.has_wildcard
             and _names_a_size(right)]  # fmt: skip
    for left in arrays:
        for right in sizes:
            yield ("len", "number", left, right)
    # argument lists of scalars, each with its elements' profile and their value type
    asked = []
    for p in profiles:
        if p.side == "args" and p.json_type == "array" and not p.has_wildcard:
            element = ctx.paths.get((tool, "args", p.path + "[*]"))
            et = _vtype(element) if element is not None else None
            if element is not None and et in ("string", "number"):
                asked.append((p, element, et))
    for left, lt in scalars:
        for right, _, et in asked:
            if left.side == "result" and lt == et and _affine(left, right, ctx):
                yield ("member", lt, left, right)
    # the other way: every value an argument list asked for comes back among the result's
    # values (``args.participants[*]`` within ``result.participants[*]``, ``args.ids[*]``
    # within ``result[*].id``), so an emptied or cut result breaks it
    returned = [(p, _vtype(p)) for p in profiles if p.side == "result" and p.has_wildcard]
    for _, element, et in asked:
        for back, bt in returned:
            if bt == et and _affine(element, back, ctx):
                yield ("asked", et, element, back)


def _names_a_size(right: PathProfile) -> bool:
    """A limit among the arguments (``limit``, ``page``) or a count among the results."""
    words = name_tokens(right.path)
    if right.side == "args":
        return bool(words & LIMIT_WORDS)
    return right.side == "result" and bool(words & {"count", "num", "size"} or words == {"total"})


def _affine(a: PathProfile, b: PathProfile, ctx: MineContext) -> bool:
    ta, tb = name_tokens(a.path) - VAGUE_WORDS, name_tokens(b.path) - VAGUE_WORDS
    if ta & tb:
        return True
    if any((x in ta and y in tb) or (y in ta and x in tb) for x, y in ORDER_WORDS):
        return True
    va = ctx.values.get((a.tool, a.side, a.path))
    vb = ctx.values.get((b.tool, b.side, b.path))
    return bool(va and vb and set(va.counts) & set(vb.counts))


def options(pair: Pair) -> list[tuple[Kind, list[str], tuple[str, ...], dict]]:
    """The contracts a pair can yield, strongest first within each direction, with the
    count columns whose sum is their violations."""
    left, right = pair.lpath, pair.rpath
    if pair.kind == "eq":
        return [(Kind.EQUALS, echo_order(left, right), ("v1",), {})]
    if pair.kind == "ord":
        return [
            (Kind.EQUALS, echo_order(left, right), ("v1", "v3"), {}),
            (Kind.LT, [left, right], ("v2",), {}),
            (Kind.LE, [left, right], ("v1",), {}),
            (Kind.LT, [right, left], ("v4",), {}),
            (Kind.LE, [right, left], ("v3",), {}),
        ]
    if pair.kind == "len":
        size = f"len({left})"
        return [
            (Kind.EQUALS, [size, right], ("v1", "v3"), {}),
            (Kind.LT, [size, right], ("v2",), {}),
            (Kind.LE, [size, right], ("v1",), {}),
        ]
    if pair.kind == "sum":
        return [(Kind.SUM_EQUALS, [f"sum({left})", right], ("v1",), {"tolerance": SUM_TOLERANCE})]
    if pair.kind == "tok":
        return [(Kind.SHARES_TOKEN, [left, right], ("v1",), {})]
    if pair.kind == "page":
        where = {"start": {"start": pair.opath}, "page": {"page": pair.opath}}.get(pair.vtype, {})
        return [(Kind.PAGE_FULL, [f"len({left})", right, pair.xpath], ("v1",), where)]
    if pair.kind == "ratio":
        return [(Kind.RATIO, [left, right], (), {})]
    if pair.kind == "product":
        factor = f"len({pair.xpath})" if pair.vtype == "len" else pair.xpath
        return [(Kind.PRODUCT, [left, right, factor], ("v1",), {"tolerance": SUM_TOLERANCE})]
    if pair.kind == "keys":
        entries = f"keys({left})"
        return [(Kind.SUBSET, [right, entries], ("v1",), {}),
                (Kind.SUBSET, [entries, right], ("v2",), {})]  # fmt: skip
    kind = Kind.SUBSET if selects_many(left) else Kind.MEMBER
    return [(kind, [left, right], ("v1",), {})]


def echo_order(a: str, b: str) -> list[str]:
    """Equality reads as an echo: the result path first, then the argument it repeats;
    the same order whichever pair found it, so both give one contract id."""
    return sorted([a, b], key=lambda path: (not path.startswith("result"), path))


SUM_TOLERANCE = 0.01
"""Absolute tolerance of ``sum_equals`` (plus 1e-9 relative): cents add up exactly, and
floating amounts within a cent."""


def pair_calls_sql(survey: Survey, part: Part) -> str:
    """SQL building ``_tm_pair_units`` (``part``'s calls with their tool, fold and task
    number) and ``_tm_pair_calls``: one row per call and path some pair reads, keyed by
    the path's number in ``_tm_pair_paths`` (``pno``: tool, side, path), so that the
    pairs' joins compare two integers, not names. Read once per part, apart from the
    statement that counts (a shared scan inside it is planned worse)."""
    # the relations read neither duplicates nor key presence: skip what those cost
    per_call = call_paths_sql(survey, "_tm_only", part, dups=False, presence=False)
    # each call carries its fold, and its task as a number (its rank in the part): the
    # rows are counted per fold without joining the tasks' names again
    return f"""
    CREATE OR REPLACE TEMP TABLE _tm_pair_units AS
        SELECT call_key, tool, fold, task_no AS task, task AS name
        FROM {unit_calls(part, fold=True)};
    CREATE OR REPLACE TEMP TABLE _tm_pair_calls AS
        SELECT n.pno, p.call_key, c.task, c.fold, p.n, p.n_null, p.n_integer, p.n_number,
               p.n_string, p.n_array, p.n_object, p.nmin, p.nmax, p.nsum, p.lmax, p.smin,
               p.smax
        FROM ({per_call}) p
        JOIN _tm_pair_units c ON c.call_key = p.call_key
        JOIN _tm_pair_paths n ON n.tool = c.tool AND n.side = p.side AND n.path = p.path;
    """


def pair_stats_sql(
    survey: Survey,
    part: Part,
    append: bool = False,
    keys: bool = False,
    per_task: bool = False,
    products: bool = False,
) -> str:
    """SQL building ``_tm_pair_stats(pid, fold, tasks, checked, v1..v4)`` from
    ``_tm_pairs`` (with the numbers of their paths, ``lno``, ``rno``, ``xno``, ``ono``),
    ``_tm_pair_calls`` and ``_tm_pair_units`` (:func:`pair_calls_sql`), or with ``append``
    adding ``part``'s tasks. A task lies in one part and one fold, so the parts' rows of
    a fold add up. ``keys``: some pairs are of kind ``keys``, whose counts read the raw
    values a second time (only then). With ``per_task`` the rows are per pair and task
    (``task``, its name, in place of ``fold``)."""
    num_l = "l.n_integer + l.n_number = l.n"
    if per_task:  # a task's number in the part, joined back to its name
        unit, tasks = "u.name", "CAST(1 AS BIGINT)"
        names = "JOIN (SELECT DISTINCT task, name FROM _tm_pair_units) u ON u.task = s.task"
    else:
        unit, tasks, names = "s.fold", distinct_tasks_sql(part, "s.task", "s.task"), ""
    num_r = "r.n = 1 AND r.n_integer + r.n_number = 1"
    head = (
        "INSERT INTO _tm_pair_stats" if append else "CREATE OR REPLACE TEMP TABLE _tm_pair_stats AS"
    )
    return f"""
    {head}
    WITH c AS (SELECT * FROM _tm_pair_units), cp AS (SELECT * FROM _tm_pair_calls), two AS (
        SELECT pr.pid, r.task, r.fold, r.call_key, CASE
            WHEN pr.kind = 'eq' AND pr.vtype = 'string' THEN
                 [NOT (l.n_string = l.n AND r.n_string = 1 AND l.smin = r.smin
                       AND l.smax = r.smin), FALSE, FALSE, FALSE]
            WHEN pr.kind = 'eq' THEN
                 [NOT ({num_l} AND {num_r} AND l.nmin = r.nmin AND l.nmax = r.nmin),
                  FALSE, FALSE, FALSE]
            WHEN pr.kind = 'ord' AND pr.vtype = 'number' THEN
                 [l.nmax > r.nmin, l.nmax >= r.nmin, l.nmin < r.nmin, l.nmin <= r.nmin]
            WHEN pr.kind = 'ord' THEN
                 [l.smax > r.smin, l.smax >= r.smin, l.smin < r.smin, l.smin <= r.smin]
            WHEN pr.kind = 'len' THEN
                 [l.lmax > r.nmin, l.lmax >= r.nmin, l.lmax < r.nmin, FALSE]
            WHEN pr.kind = 'tok' THEN
                 [NOT list_has_any({tokens_sql("l.smin")}, {tokens_sql("r.smin")}),
                  l.smin = r.smin, FALSE, FALSE]
            ELSE [abs(coalesce(l.nsum, 0) - r.nmin) > {SUM_TOLERANCE} + 1e-9 * abs(r.nmin),
                  FALSE, FALSE, FALSE]
            END AS v
        FROM _tm_pairs pr
        JOIN cp r ON r.pno = pr.rno
        LEFT JOIN cp l ON l.call_key = r.call_key AND l.pno = pr.lno
        WHERE pr.kind NOT IN ('member', 'asked', 'page', 'ratio', 'keys', 'product')
        AND r.n = 1 AND r.n_null = 0
        AND CASE
            WHEN pr.kind = 'sum' THEN {num_r} AND (l.call_key IS NULL OR {num_l})
            WHEN pr.kind = 'tok' THEN r.n_string = 1 AND l.n = 1 AND l.n_string = 1
                 AND len({tokens_sql("r.smin")}) > 0
            WHEN pr.kind = 'len' THEN {num_r} AND l.n = 1 AND l.n_array = 1
            WHEN pr.kind = 'ord' AND pr.vtype = 'number' THEN {num_r} AND {num_l} AND l.n > 0
            WHEN pr.kind = 'ord' THEN r.n_string = 1 AND l.n_string = l.n AND l.n > 0
            ELSE l.n > 0 END
    ), page AS (
        SELECT pr.pid, r.task, r.fold, r.call_key,
               [l.lmax <> greatest(least(x.nmin, r.nmin - s.start), 0),
                r.nmin - s.start > x.nmin, FALSE, FALSE] AS v
        FROM _tm_pairs pr
        JOIN cp r ON r.pno = pr.rno
        JOIN cp l ON l.call_key = r.call_key AND l.pno = pr.lno
        JOIN cp x ON x.call_key = r.call_key AND x.pno = pr.xno
        LEFT JOIN cp o ON o.call_key = r.call_key AND o.pno = pr.ono
             AND o.n = 1 AND o.n_integer + o.n_number = 1
        CROSS JOIN LATERAL (SELECT CASE pr.vtype WHEN 'start' THEN coalesce(o.nmin, 0)
                                    WHEN 'page' THEN (coalesce(o.nmin, 1) - 1) * x.nmin
                                    ELSE 0 END AS start) s
        WHERE pr.kind = 'page' AND r.n = 1 AND {num_r} AND l.n = 1 AND l.n_array = 1
              AND x.n = 1 AND x.n_integer + x.n_number = 1
    ), lv AS (
        SELECT pr.pid, pr.kind, pr.rno, c.task, c.fold, v.call_key, v.str, v.num
        FROM _tm_pairs pr
        JOIN c ON c.tool = pr.tool
        JOIN {part.values()} v ON v.call_key = c.call_key AND v.side = pr.lside
                               AND v.path = pr.lpath
        WHERE pr.kind IN ('member', 'asked')
    ), rv AS (
        SELECT DISTINCT pr.pid, v.call_key, v.str, v.num FROM _tm_pairs pr
        JOIN c ON c.tool = pr.tool
        JOIN {part.values()} v ON v.call_key = c.call_key AND v.side = pr.rside
             AND v.path = CASE pr.kind WHEN 'asked' THEN pr.rpath ELSE pr.rpath || '[*]' END
        WHERE pr.kind IN ('member', 'asked')
    ), member AS (
        -- as the monitor judges: a member's list is checked where it is present (an
        -- empty list holds nothing), what was asked for wherever the argument asked
        SELECT lv.pid, lv.task, lv.fold, lv.call_key,
               [count(rv.call_key) < count(*), FALSE, FALSE, FALSE] AS v
        FROM lv
        LEFT JOIN cp r ON lv.kind = 'member' AND r.pno = lv.rno AND r.call_key = lv.call_key
        LEFT JOIN rv ON rv.pid = lv.pid AND rv.call_key = lv.call_key
             AND rv.str IS NOT DISTINCT FROM lv.str AND rv.num IS NOT DISTINCT FROM lv.num
        WHERE lv.kind = 'asked' OR r.n > 0
        GROUP BY lv.pid, lv.task, lv.fold, lv.call_key
    ){_keys_sql(part) if keys else ""}{_products_sql(part) if products else ""}
    SELECT s.pid, {unit} AS {"task" if per_task else "fold"}, {tasks} AS tasks,
           count(*) AS checked,
           count(*) FILTER (v[1]) AS v1, count(*) FILTER (v[2]) AS v2,
           count(*) FILTER (v[3]) AS v3, count(*) FILTER (v[4]) AS v4
    FROM (SELECT * FROM two UNION ALL SELECT * FROM member UNION ALL SELECT * FROM page
          {"UNION ALL SELECT * FROM keyed" if keys else ""}
          {
        "UNION ALL SELECT * FROM product UNION ALL SELECT * FROM each_product" if products else ""
    }) s {names}
    GROUP BY s.pid, {unit}
    """


_STEP = r'\.[A-Za-z_][A-Za-z0-9_\-]*|\["(?:[^"\\]|\\.)*"\]'
"""One step of a path into an object: ``.name`` or ``["a key"]`` (as ``format_path``)."""


def _raw_values(part: Part) -> str:
    """``json_values`` within ``part``'s key range: the values with maps' keys in their
    paths."""
    if part.index is None:
        return "json_values"
    return f"(SELECT * FROM json_values WHERE call_key BETWEEN {part.first} AND {part.last})"


def _keys_sql(part: Part) -> str:
    """The CTEs counting ``keys`` pairs (``keyed``), appended to :func:`pair_stats_sql`'s:
    per call, the map's keys against the names the argument holds."""
    return f"""
    , mkeys AS (
        -- a map's keys are in the raw paths only (``tm_values`` reads them as ``{{*}}``):
        -- the entries are the paths one segment below the map's
        SELECT pr.pid, v.call_key, list(DISTINCT CASE WHEN starts_with(e.step, '.')
               THEN e.step[2:] ELSE regexp_replace(e.step[3:-3], '\\\\(.)', '\\1', 'g') END) AS ks
        FROM _tm_pairs pr
        JOIN c ON c.tool = pr.tool
        JOIN {_raw_values(part)} v ON v.call_key = c.call_key AND v.side = pr.lside
             AND starts_with(v.path, pr.lpath) AND length(v.path) > length(pr.lpath)
        CROSS JOIN LATERAL (SELECT v.path[length(pr.lpath) + 1:] AS step) e
        WHERE pr.kind = 'keys' AND regexp_full_match(e.step, '{_STEP}')
        GROUP BY pr.pid, v.call_key
    ), names AS (
        SELECT pr.pid, v.call_key, list(DISTINCT v.str) FILTER (v.jtype = 'string') AS rs,
               bool_or(v.jtype <> 'string') AS odd
        FROM _tm_pairs pr
        JOIN c ON c.tool = pr.tool
        JOIN {part.values()} v ON v.call_key = c.call_key AND v.side = pr.rside
             AND (v.path = pr.rpath AND v.jtype <> 'array' OR v.path = pr.rpath || '[*]')
        WHERE pr.kind = 'keys'
        GROUP BY pr.pid, v.call_key
    ), keyed AS (
        SELECT pr.pid, m.task, m.fold, m.call_key,
               [q.odd OR NOT list_has_all(coalesce(k.ks, []), coalesce(q.rs, [])),
                NOT list_has_all(coalesce(q.rs, []), coalesce(k.ks, [])), FALSE, FALSE] AS v
        FROM _tm_pairs pr
        JOIN cp m ON m.pno = pr.lno
        JOIN names q ON q.pid = pr.pid AND q.call_key = m.call_key
        LEFT JOIN mkeys k ON k.pid = pr.pid AND k.call_key = m.call_key
        WHERE pr.kind = 'keys' AND m.n = 1 AND m.n_object = 1
    )"""


def _products_sql(part: Part) -> str:
    """The CTEs counting ``product`` pairs (``product``, per call; ``each_product``, per
    element of one list), appended to :func:`pair_stats_sql`'s only when some pair is one:
    the element form reads the part's values."""
    return f"""
    , product AS (
        -- three numbers of the call (the third a list's length with ``len``), as the
        -- monitor reads them: a call without the three is not judged
        SELECT pr.pid, l.task, l.fold, l.call_key,
               [abs(l.nmin - r.nmin * CASE pr.vtype WHEN 'len' THEN x.lmax ELSE x.nmin END)
                > {SUM_TOLERANCE} + 1e-9 * abs(l.nmin), FALSE, FALSE, FALSE] AS v
        FROM _tm_pairs pr
        JOIN cp l ON l.pno = pr.lno
        JOIN cp r ON r.call_key = l.call_key AND r.pno = pr.rno
        JOIN cp x ON x.call_key = l.call_key AND x.pno = pr.xno
        WHERE pr.kind = 'product' AND pr.vtype IN ('one', 'len')
              AND l.n = 1 AND l.n_integer + l.n_number = 1
              AND r.n = 1 AND r.n_integer + r.n_number = 1 AND x.n = 1
              AND CASE pr.vtype WHEN 'len' THEN x.n_array + x.n_string + x.n_object = 1
                  ELSE x.n_integer + x.n_number = 1 END
    ), elements AS (
        SELECT pr.pid, c.task, c.fold, v.call_key, v.idx,
               max(v.num) FILTER (v.path = pr.lpath) AS x,
               max(v.num) FILTER (v.path = pr.rpath) AS a,
               max(v.num) FILTER (v.path = pr.xpath) AS b
        FROM _tm_pairs pr
        JOIN c ON c.tool = pr.tool
        JOIN {part.values()} v ON v.call_key = c.call_key AND v.side = pr.lside
             AND v.path IN (pr.lpath, pr.rpath, pr.xpath)
        WHERE pr.kind = 'product' AND pr.vtype = 'each' AND v.num IS NOT NULL
              AND v.idx IS NOT NULL
        GROUP BY pr.pid, c.task, c.fold, v.call_key, v.idx
    ), each_product AS (
        -- per element with the three numbers, as the monitor judges them
        SELECT pid, task, fold, call_key,
               [bool_or(abs(x - a * b) > {SUM_TOLERANCE} + 1e-9 * abs(x)), FALSE, FALSE, FALSE]
               AS v
        FROM elements WHERE x IS NOT NULL AND a IS NOT NULL AND b IS NOT NULL
        GROUP BY pid, task, fold, call_key
    )"""


def pair_sums_sql(stats: str = "_tm_pair_stats") -> str:
    """SQL summing pair counts per context (needs ``_tm_fold_membership``)."""
    return f"""
    SELECT m.ctx, s.pid, sum(s.tasks) AS tasks, sum(s.checked) AS checked,
           sum(s.v1) AS v1, sum(s.v2) AS v2, sum(s.v3) AS v3, sum(s.v4) AS v4
    FROM {stats} s JOIN _tm_fold_membership m ON m.fold = s.fold
    GROUP BY ALL
    """


_PAIR_FIELDS = (
    "pid",
    "tool",
    "kind",
    "vtype",
    "lside",
    "lpath",
    "rside",
    "rpath",
    "xpath",
    "opath",
    "xside",
)


@contextmanager
def _pairs_registered(
    con: duckdb.DuckDBPyConnection, pairs: pa.Table
) -> Iterator[tuple[bool, bool]]:
    """Within the block, ``_tm_pairs`` (``pairs`` with their paths' numbers),
    ``_tm_pair_paths`` and ``_tm_only`` are registered on ``con``; yields whether some
    pair is of kind ``keys`` and whether some is a ``product``."""
    numbered: dict[tuple[str, str, str], int] = {}
    ends = {"l": ("lside", "lpath"), "r": ("rside", "rpath"), "x": ("xside", "xpath"),
            "o": (None, "opath")}  # page pairs: the offset is an argument  # fmt: skip
    cols = {name: pairs.column(name).to_pylist() for name in _PAIR_FIELDS}
    numbers: dict[str, list[int | None]] = {}
    for end, (side, path) in ends.items():
        numbers[f"{end}no"] = [
            numbered.setdefault((tool, cols[side][i] if side else "args", at), len(numbered))
            if at
            else None
            for i, (tool, at) in enumerate(zip(cols["tool"], cols[path], strict=True))
        ]
    for name, column in numbers.items():
        pairs = pairs.append_column(name, pa.array(column, pa.int32()))
    con.register("_tm_pairs", pairs)
    keyed = list(numbered)
    con.register("_tm_pair_paths", pa.table({
        "tool": pa.array([k[0] for k in keyed], pa.string()),
        "side": pa.array([k[1] for k in keyed], pa.string()),
        "path": pa.array([k[2] for k in keyed], pa.string()),
        "pno": pa.array(list(numbered.values()), pa.int32())}))  # fmt: skip
    con.register("_tm_only", pa.table({"path": sorted({k[2] for k in numbered})}))
    try:
        yield "keys" in cols["kind"], "product" in cols["kind"]
    finally:
        for name in ("_tm_pairs", "_tm_pair_paths", "_tm_only"):
            con.unregister(name)
        for name in ("_tm_pair_stats", "_tm_pair_calls", "_tm_pair_units"):
            con.execute(f"DROP TABLE IF EXISTS {name}")


def _counted(
    con: duckdb.DuckDBPyConnection, pairs: pa.Table, survey: Survey, among: list[Part],
    into: str | None = None,
) -> pa.Table | None:  # fmt: skip
    """``_tm_pair_stats`` of ``pairs`` over the parts ``among`` (None: no pair or part);
    with ``into``, counted per task and added to that table (named by ``_tm_pair_ids``)
    rather than returned."""
    if not among or not pairs.num_rows:
        return None
    with _pairs_registered(con, pairs) as (keys, products), plain_scans(con):
        # the per-call rows' two halves each scan the part
        for k, part in enumerate(among):
            con.execute(pair_calls_sql(survey, part))
            con.execute(pair_stats_sql(survey, part, append=k > 0, keys=keys, products=products,
                                       per_task=into is not None))  # fmt: skip
        if into is None:
            return integers(fetch_arrow(con, "SELECT * FROM _tm_pair_stats"))
        con.execute(f"""INSERT INTO {into} SELECT i.pair, s.task,
                        {", ".join(f"s.{c}" for c in _COUNTS)}
                        FROM _tm_pair_stats s JOIN _tm_pair_ids i ON i.pid = s.pid""")
        return None


def pair_stats(con: duckdb.DuckDBPyConnection, pairs: pa.Table, survey: Survey) -> pa.Table:
    """Shard step: every pair's counts per fold (``_tm_pair_stats``), a part of the tasks
    at a time. A task lies in one shard, so the shards' rows of a fold add up."""
    found = _counted(con, pairs, survey, parts(con))
    assert found is not None, "pair_stats is called with pairs"
    return found


_PAIR_KEY = _PAIR_FIELDS[1:]
"""What a pair is, whatever number a mine gives it."""
_COUNTS = ("tasks", "checked", "v1", "v2", "v3", "v4")


def stored_pair_stats(con: duckdb.DuckDBPyConnection, pairs: pa.Table, survey: Survey) -> pa.Table:
    """One store's pair counts per fold (needs ``_tm_folds``), from counts per pair and
    task kept in the store (``tm_pair_tasks``, with the digests of the tasks they were
    counted on, ``tm_pair_digests``, and the pairs and survey, ``tm_pair_keys``): a task
    whose calls are unchanged keeps its counts, and a pair counted before keeps its
    counts on those tasks; the stale tasks and the new pairs are counted. Per task,
    the rows are what the per-fold statement adds up, so the fold sums are the same."""
    # a pair by a 64-bit hash of what it is: the per-task rows join on a number
    names = [int.from_bytes(hashlib.sha256(json.dumps(
                 [pairs.column(f)[i].as_py() for f in _PAIR_KEY]).encode()).digest()[:8],
                 "little", signed=True)
             for i in range(pairs.num_rows)]  # fmt: skip
    ids = pa.table({"pid": pairs.column("pid"), "pair": pa.array(names, pa.int64())})
    printed = survey_print(survey)
    con.execute(f"CREATE OR REPLACE TEMP TABLE _tm_task_digests AS {task_digests_sql()}")
    stored = ("tm_pair_tasks", "tm_pair_digests", "tm_pair_keys")
    stale, known = None, set()
    if all(has_table(con, t) for t in stored):
        rows = con.execute("SELECT pair, survey FROM tm_pair_keys").fetchall()
        if all(said == printed for _, said in rows):
            known = {pair for pair, _ in rows}
            stale = stale_tasks(con, "tm_pair_digests")
    con.register("_tm_pair_ids", ids)
    try:
        with transaction(con):
            if stale is None:
                con.execute("CREATE OR REPLACE TABLE tm_pair_tasks (pair BIGINT, task VARCHAR, "
                            + ", ".join(f"{c} BIGINT" for c in _COUNTS) + ")")  # fmt: skip
                _counted(con, pairs, survey, parts(con), into="tm_pair_tasks")
            else:
                old = pa.array([name in known for name in names])
                con.register("_tm_stale", pa.table({"task": pa.array(stale, pa.string())}))
                con.execute("DELETE FROM tm_pair_tasks WHERE task IN (SELECT task FROM _tm_stale) "
                            "OR pair NOT IN (SELECT pair FROM _tm_pair_ids)")  # fmt: skip
                # the pairs counted before on the stale tasks, new pairs on every task
                _counted(con, pairs.filter(old), survey, parts(con, "_tm_stale"), "tm_pair_tasks")
                _counted(con, pairs.filter(pc.invert(old)), survey, parts(con), "tm_pair_tasks")
                con.unregister("_tm_stale")
            con.execute(
                "CREATE OR REPLACE TABLE tm_pair_keys AS "
                f"SELECT pair, {sql_string(printed)} AS survey FROM _tm_pair_ids"
            )
            con.execute("CREATE OR REPLACE TABLE tm_pair_digests AS SELECT * FROM _tm_task_digests")
    finally:
        con.execute("DROP TABLE IF EXISTS _tm_task_digests")
    try:
        sums = ", ".join(f"sum(s.{c}) AS {c}" for c in _COUNTS)
        return integers(fetch_arrow(con, f"""
            SELECT i.pid, f.fold, {sums} FROM tm_pair_tasks s
            JOIN _tm_pair_ids i ON i.pair = s.pair JOIN _tm_folds f ON f.task = s.task
            GROUP BY i.pid, f.fold"""))  # fmt: skip
    finally:
        con.unregister("_tm_pair_ids")


class Relations:
    """The pairs of a mine, their per-context counts, and how to count a relational
    contract in a context."""

    def __init__(self, pairs: list[Pair]) -> None:
        self.pairs = pairs
        self.scales = Scales()
        self.lookup: dict[tuple[str, Kind, tuple[str, ...]], tuple[int, tuple[str, ...]]] = {}
        for pair in pairs:
            for kind, paths, columns, _ in options(pair):
                self.lookup.setdefault((pair.tool, kind, tuple(paths)), (pair.pid, columns))

    def load(
        self, shards: Shards, client: duckdb.DuckDBPyConnection,
        contexts: dict[str, MineContext], survey: Survey, per_task: bool = False,
    ) -> None:  # fmt: skip
        """Count every pair per task in every shard, and sum the counts into each context
        (on ``client``, which has the fold membership). With ``per_task`` (one store,
        ``client``, whose profiles are per task) the counts are kept per task in the
        store and reused (:func:`stored_pair_stats`)."""
        if not self.pairs:
            return
        table = pa.table({name: [getattr(p, name) for p in self.pairs] for name in _PAIR_FIELDS})
        ratios = [p for p in self.pairs if p.kind == "ratio"]
        if ratios:
            folds = (len(contexts) - 1) // 2
            self.scales = load_scales(shards, pa.table({
                name: [getattr(p, name) for p in ratios] for name in _PAIR_FIELDS}),
                survey, folds)  # fmt: skip
        if per_task:  # one store, whose counts per task are kept and reused
            found = stored_pair_stats(client, table, survey)
        else:
            found = concat(shards.map(pair_stats, table, survey, label="relations"))
        client.register("_tm_pair_rows", found)
        try:
            cursor = client.execute(pair_sums_sql("_tm_pair_rows"))
            names = [d[0] for d in cursor.description][2:]
            rows = cursor.fetchall()
        finally:
            client.unregister("_tm_pair_rows")
        for ctx, pid, *counts in rows:
            contexts[ctx].relations[int(pid)] = dict(zip(names, map(int, counts), strict=True))

    def measure(self, contract: Contract, ctx: MineContext) -> Measure:
        found = self.lookup.get((contract.tool, contract.kind, tuple(contract.paths)))
        if found is None:
            return Measure()
        pid, columns = found
        if contract.kind == Kind.RATIO:
            return self.scales.measure(pid, contract, ctx)
        counts = ctx.relations.get(pid)
        if counts is None:
            return Measure()
        return Measure(counts["checked"], min(counts["checked"], sum(counts[c] for c in columns)))
