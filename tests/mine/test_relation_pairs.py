"""Relation pairs: found among affine paths at a cost that follows them, not every pair of
a tool's paths (a seat map keyed by seat has thousands)."""

from __future__ import annotations

import time

from tracemine.mine.profile.aggregates import PROFILE_COLUMNS
from tracemine.mine.propose.context import MineContext, PathProfile
from tracemine.mine.propose.relations import MAX_PAIRS_PER_TOOL, MAX_VOCABULARY_PAIRS, find_pairs

_LETTERS = "abcdefghijklmnopqrtuvwxyz"  # no s: a plural s is dropped


def _word(i: int) -> str:
    """A word of its own for each ``i`` (letters only: digits would be words too)."""
    out = ""
    while True:
        out = _LETTERS[i % len(_LETTERS)] + out
        i //= len(_LETTERS)
        if not i:
            return "w" + out


def _numeric(tool: str, side: str, path: str) -> PathProfile:
    stats = dict.fromkeys(PROFILE_COLUMNS, 0)
    stats.update(calls=10, c_all_numeric=10, c_all_integer=10)
    return PathProfile(tool, side, path, 10, stats)


def _context(tools: dict[str, list[tuple[str, str]]]) -> MineContext:
    profiles = {(tool, side, path): _numeric(tool, side, path)
                for tool, paths in tools.items() for side, path in paths}  # fmt: skip
    return MineContext("all", frozenset({"a"}), dict.fromkeys(tools, 10), profiles, {}, {})


def test_a_tool_of_thousands_of_unrelated_paths_is_searched_in_a_moment() -> None:
    # 2,000 scalar paths with no word in common and a few related ones: every pair tested
    # is four million name comparisons; what is affine, a handful. A second tool of many
    # related paths stops at its quota.
    unrelated = [("result", f"result.seats.{_word(i)}") for i in range(2000)]
    related = [("result", "result.low_fare"), ("result", "result.high_fare"),
               ("result", "result.price"), ("args", "args.max_price")]  # fmt: skip
    priced = [("result", f"result.seats.{_word(i)}_price") for i in range(300)]
    ctx = _context({"seats": [*unrelated, *related], "prices": priced})
    started = time.perf_counter()
    pairs = find_pairs(ctx)
    elapsed = time.perf_counter() - started
    assert {(p.kind, p.lpath, p.rpath) for p in pairs if p.tool == "seats"} == {
        ("ord", "result.high_fare", "result.low_fare"),  # high/low say an order
        ("eq", "result.price", "args.max_price"),  # a shared word: an echo…
        ("ord", "args.max_price", "result.price"),  # …or an order
        ("ratio", "result.high_fare", "result.low_fare"),  # …or a fixed multiple
        ("ratio", "result.price", "args.max_price"),
    }
    quota = [p for p in pairs if p.tool == "prices" and p.kind != "ratio"]
    assert len(quota) == MAX_PAIRS_PER_TOOL
    assert all(p.kind == "ord" and p.lpath < p.rpath for p in quota)
    # the ratios of those paths have a quota of their own, apart from the others'
    ratios = [p for p in pairs if p.tool == "prices" and p.kind == "ratio"]
    assert len(ratios) == MAX_VOCABULARY_PAIRS
    assert elapsed < 2.0, f"{elapsed:.1f} s for {len(unrelated)} paths"
