"""The path language on its own, against answers worked out by hand from the grammar in
docs/contract-format.md: wildcards, quoted and escaped keys, derived values, and a missing
key kept apart from a JSON null."""

from __future__ import annotations

from typing import Any

import pytest

from tracemine.model.paths import MISSING, WILDCARD, PathError, evaluate, format_path, parse, select

RESULT: dict[str, Any] = {
    "items": [{"price": 3, "sku": "a"}, {"price": 4.5}, {"sku": "c"}, "text", None, [1]],
    "odd.key": 1,
    'x["y"]': 2,
    'q"t': 3,
    "back\\slash": 4,
    "a-b": 5,
    "n": None,
    "obj": {"b": 2, "a": 1},
    "text": "héllo",
    "grid": [[1, 2], [], [3]],
    "lines": [{"amount": 1}, {"amount": 2.5}],
    "no_lines": [],
    "mixed": [{"amount": 1}, {"amount": "2"}],
    "flagged": [{"amount": 1}, {"amount": True}],
    "numbers": [1, 2, 3.5],
    "flags": [True, 2],
    "labels": [1, "2"],
}
ARGS: dict[str, Any] = {"order_id": "#W1", "limit": 0, "filter": None}


@pytest.mark.parametrize(
    ("text", "root", "steps", "function"),
    [
        ("args.order_id", "args", ("order_id",), None),
        ("result", "result", (), None),
        ("result.items[*].price", "result", ("items", WILDCARD, "price"), None),
        ("result[*]", "result", (WILDCARD,), None),
        ("result.grid[*][*]", "result", ("grid", WILDCARD, WILDCARD), None),
        ('result["odd.key"]', "result", ("odd.key",), None),
        ('result["x[\\"y\\"]"]', "result", ('x["y"]',), None),
        ('result["q\\"t"]', "result", ('q"t',), None),
        ('result["back\\\\slash"]', "result", ("back\\slash",), None),
        ('result["[*]"]', "result", ("[*]",), None),
        ("result.a-b", "result", ("a-b",), None),
        ('result["a"].b', "result", ("a", "b"), None),
        ("len(result.items)", "result", ("items",), "len"),
        ("  len( result.items )  ", "result", ("items",), "len"),
        ("sum(result.items[*].price)", "result", ("items", WILDCARD, "price"), "sum"),
        ("keys(result)", "result", (), "keys"),
    ],
)
def test_parse(text: str, root: str, steps: tuple, function: str | None) -> None:
    path = parse(text)
    assert (path.root, path.steps, path.function) == (root, steps, function)
    assert path.has_wildcard == (WILDCARD in steps)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "order_id",
        "results.x",
        "result.",
        "result[0]",
        "result[]",
        'result["open',
        "avg(result)",
    ],
)
def test_what_is_not_a_path_is_refused(text: str) -> None:
    with pytest.raises(PathError):
        parse(text)


@pytest.mark.parametrize(
    ("root", "steps", "text"),
    [
        ("args", ["order_id"], "args.order_id"),
        ("result", ["items", WILDCARD, "price"], "result.items[*].price"),
        ("result", ["odd.key"], 'result["odd.key"]'),
        ("result", ['q"t'], 'result["q\\"t"]'),
        ("result", ["back\\slash"], 'result["back\\\\slash"]'),
        ("result", ["1st"], 'result["1st"]'),
        ("result", [""], 'result[""]'),
        ("result", ["a b", WILDCARD], 'result["a b"][*]'),
    ],
)
def test_format_path_and_back(root: str, steps: list, text: str) -> None:
    assert format_path(root, steps) == text
    assert parse(text).steps == tuple(steps)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("args.order_id", ["#W1"]),
        ("args.limit", [0]),
        ("args.filter", [None]),  # present, and null
        ("args.absent", [MISSING]),  # absent: not null
        ("result.n", [None]),
        ("result.absent", [MISSING]),
        ("result.n.deeper", []),  # a step into null selects nothing
        ("result.absent.deeper", []),  # nor into a missing key
        ("result.text.deeper", []),
        ("result.obj[*]", []),  # a wildcard over an object selects nothing
        ("result.text[*]", []),
        # strings, nulls and arrays inside the array select nothing; an object without the
        # key gives MISSING
        ("result.items[*].price", [3, 4.5, MISSING]),
        ("result.items[*].sku", ["a", MISSING, "c"]),
        ("result.grid[*][*]", [1, 2, 3]),
        ("result.grid[*]", [[1, 2], [], [3]]),
        ("result.no_lines[*].amount", []),
        ('result["odd.key"]', [1]),
        ("result.odd.key", []),  # dotted: two keys; "odd" is absent, nothing below it
        ("result.obj.b", [2]),
        ('result["x[\\"y\\"]"]', [2]),
        ('result["q\\"t"]', [3]),
        ('result["back\\\\slash"]', [4]),
        ("result.a-b", [5]),
    ],
)
def test_select(text: str, expected: list) -> None:
    got = select(parse(text), ARGS, RESULT)
    assert got == expected
    assert [v is MISSING for v in got] == [v is MISSING for v in expected]
    assert [type(v) for v in got] == [type(v) for v in expected]


def test_missing_is_not_null() -> None:
    assert MISSING is not None
    assert not MISSING
    (absent,) = select(parse("result.absent"), None, {"present": None})
    (null,) = select(parse("result.present"), None, {"present": None})
    assert absent is MISSING and null is None


def test_the_root_itself_and_a_root_that_is_not_an_object() -> None:
    assert select(parse("result"), ARGS, "plain text") == ["plain text"]
    assert select(parse("result.x"), ARGS, "plain text") == []
    assert select(parse("result[*]"), ARGS, [1, None]) == [1, None]
    assert select(parse("args.x"), None, RESULT) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("len(result.items)", [6]),
        ("len(result.text)", [5]),  # characters, not bytes
        ("len(result.obj)", [2]),
        ("len(result.no_lines)", [0]),
        ("len(result.n)", []),
        ("len(result.absent)", []),
        ("len(args.limit)", []),
        ("len(result.grid[*])", [2, 0, 1]),
        ("keys(result.obj)", [["a", "b"]]),  # sorted
        ("keys(result.items)", []),
        ("keys(result.absent)", []),
        ("sum(result.lines[*].amount)", [3.5]),
        ("sum(result.no_lines[*].amount)", [0]),  # nothing to add: zero
        ("sum(result.mixed[*].amount)", []),  # a string is not a number
        ("sum(result.flagged[*].amount)", []),  # nor is a boolean
        ("sum(result.items[*].price)", []),  # nor a missing key
        ("sum(result.grid[*][*])", [6]),
        ("sum(result.numbers)", [6.5]),
        ("sum(result.flags)", []),  # booleans are not numbers, with or without [*]
        ("sum(result.labels)", []),
        ("sum(result.absent)", []),
    ],
)
def test_evaluate(text: str, expected: list) -> None:
    got = evaluate(parse(text), ARGS, RESULT)
    assert got == expected
    assert [type(v) for v in got] == [type(v) for v in expected]


def test_plain_paths_have_no_function_applied() -> None:
    path = parse("result.items[*].price")
    assert evaluate(path, ARGS, RESULT) == select(path, ARGS, RESULT)
    assert parse("len(result.items)").plain == "result.items"
    assert parse('len(result["odd.key"])').plain == 'result["odd.key"]'
