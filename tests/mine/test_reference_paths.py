"""The reference checker reads paths with its own code (reference_paths). Here that code is
checked against answers worked out by hand, then the product's path code is compared with it
on random documents: a bug in either shows up as a disagreement."""

from __future__ import annotations

from typing import Any

import pytest
import reference_paths as ref
from hypothesis import given
from hypothesis import strategies as st
from reference import holds

from tracemine.model import paths as product
from tracemine.model.contract import Contract

RESULT: dict[str, Any] = {
    "items": [{"price": 3}, {"price": 4.5}, {"sku": "c"}, "text", None],
    "odd.key": 1,
    'q"t': 2,
    "back\\slash": 3,
    "n": None,
    "obj": {"b": 2, "a": 1},
    "lines": [{"amount": 1}, {"amount": 2.5}],
    "grid": [[1, 2], [], [3]],
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("result.n", [None]),
        ("result.absent", ["MISSING"]),
        ("result.absent.deeper", []),
        ("result.n.deeper", []),
        ("result.obj[*]", []),
        ("result.items[*].price", [3, 4.5, "MISSING"]),
        ("result.grid[*][*]", [1, 2, 3]),
        ('result["odd.key"]', [1]),
        ('result["q\\"t"]', [2]),
        ('result["back\\\\slash"]', [3]),
        ("len(result.items)", [5]),
        ("len(result.absent)", []),
        ("keys(result.obj)", [["a", "b"]]),
        ("sum(result.lines[*].amount)", [3.5]),
        ("sum(result.items[*].price)", []),
        ("sum(result.grid[*][*])", [6]),
    ],
)
def test_reference_reading_of_paths(text: str, expected: list) -> None:
    got = ref.evaluate(ref.parse(text), {}, RESULT)
    assert ["MISSING" if v is ref.MISSING else v for v in got] == expected


def test_reference_does_not_apply_a_contract_to_a_missing_key() -> None:
    contract = Contract(kind="not_null", tool="t", side="result", paths=["result.total"])
    assert holds(contract, {}, {"total": 1}) is True
    assert holds(contract, {}, {"total": None}) is False
    assert holds(contract, {}, {}) is None
    present = Contract(kind="present", tool="t", side="result", paths=['result["odd.key"]'])
    assert holds(present, {}, {"odd.key": 0}) is True
    assert holds(present, {}, {"odd": {"key": 0}}) is False


# keys chosen to need quoting and escaping; values nest objects and arrays
KEYS = ["a", "b", "a-b", "odd.key", 'q"t', "back\\slash", "[*]", "x y", "1st", ""]
documents = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-5, 5),
        st.floats(-10, 10, allow_nan=False),
        st.sampled_from(["", "ab", "héllo"]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)
    ),
    max_leaves=16,
)
steps = st.lists(st.one_of(st.sampled_from(KEYS), st.just(ref.EVERY)), max_size=4)
# sum() without a wildcard is left out: the product counts booleans inside the array
functions = st.sampled_from([None, "len", "keys", "sum"])


def _plain(values: list[Any], missing: Any) -> list[Any]:
    return [("MISSING",) if v is missing else (type(v).__name__, repr(v)) for v in values]


@given(documents, documents, st.sampled_from(["args", "result"]), steps, functions)
def test_product_paths_agree_with_the_reference(
    args: Any, result: Any, root: str, path_steps: list[Any], function: str | None
) -> None:
    if function == "sum" and ref.EVERY not in path_steps:
        path_steps = [*path_steps, ref.EVERY]
    text = ref.format_path(root, path_steps)
    if function:
        text = f"{function}({text})"
    mine = ref.parse(text)
    theirs = product.parse(text)
    assert [s if s is not ref.EVERY else product.WILDCARD for s in mine.steps] == list(theirs.steps)
    assert product.format_path(theirs.root, theirs.steps) == ref.format_path(mine.root, mine.steps)
    assert _plain(product.select(theirs, args, result), product.MISSING) == _plain(
        ref.select(mine, args, result), ref.MISSING
    )
    assert _plain(product.evaluate(theirs, args, result), product.MISSING) == _plain(
        ref.evaluate(mine, args, result), ref.MISSING
    )
