"""Hostile input against every reader: real records of each format (the fixtures) with
values swapped for wrong types, deep and wide structures, huge values and JSON texts that
break the parser, and fields taken away. Whatever comes out, ingest raises nothing and
every record read is stored or quarantined."""

from __future__ import annotations

import json
import re
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracemine.errors import InputError
from tracemine.ingest import ingest
from tracemine.ingest.limits import Limits
from tracemine.ingest.readers import READERS
from tracemine.ingest.source import BadUnit, iter_units

FIXTURES = Path(__file__).parent.parent / "fixtures" / "ingest"
CAP = 64 << 10  # a small record cap: a huge value makes an over-long line


def _seeds(reader: str) -> list[Any]:
    """The first units of each fixture file of ``reader``."""
    units: list[Any] = []
    for path in sorted((FIXTURES / reader).iterdir()):
        if ".golden." in path.name:
            continue
        found = [u for _, u in iter_units(path) if not isinstance(u, BadUnit)]
        units.extend(found[:4])
    assert units, reader
    return units


# Deep structures cannot be written by json.dumps: a placeholder stands for one and is
# replaced in the written line (as an array nest, or as JSON text inside a string). Its
# token is made at run time: hypothesis draws strings from the test's own literals.
_TOKEN = uuid.uuid4().hex
_PLACEHOLDER = re.compile(f'"{_TOKEN}:([0-9]+):([01])"')


@dataclass(frozen=True)
class Deep:
    depth: int
    as_text: bool


def _placeholder(value: object) -> str:
    assert isinstance(value, Deep)
    return f"{_TOKEN}:{value.depth}:{int(value.as_text)}"


def _expand(match: re.Match[str]) -> str:
    depth = int(match[1])
    nest = "[" * depth + "]" * depth
    return f'"{nest}"' if match[2] == "1" else nest


def _line(unit: Any) -> str:
    return _PLACEHOLDER.sub(_expand, json.dumps(unit, default=_placeholder)) + "\n"


hostile_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from(["", " ", "{", '{"a": ', "[1, 2", "NaN", "null", "-1e999", "\ud800"]),
    st.builds(Deep, st.sampled_from([40, 300, 600, 1100]), st.booleans()),
    st.integers(min_value=1000, max_value=3000).map(lambda n: list(range(n))),  # wide
    st.integers(min_value=100, max_value=400).map(lambda n: {f"k{i}": i for i in range(n)}),
    st.sampled_from([CAP // 2, CAP * 2]).map(lambda n: "x" * n),  # huge
    st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=5)), max_size=4),
    st.dictionaries(st.text(max_size=6), st.one_of(st.none(), st.integers()), max_size=3),
)


# a string of the source (arguments, results, texts) holding JSON text the parser refuses
hostile_texts = st.one_of(
    st.builds(Deep, st.sampled_from([300, 1000, 1100]), st.just(True)),
    st.sampled_from(["{", '{"a": ', "[1, 2", "NaN", "-1e999", "[" * 2000]),
    # a wide array as text: 3,000 items, or a line over the cap. (Not ~16,000 items under
    # the cap: flattening such a result runs DuckDB out of its memory cap, a store-side
    # limit of its own that this test does not cover.)
    st.sampled_from([6000, CAP * 2]).map(lambda n: "[" + "1," * (n // 2) + "1]"),
)


def _mutate(data: st.DataObject, unit: Any) -> Any:
    """``unit`` with one value somewhere inside it replaced, removed or wrapped."""
    if not isinstance(unit, dict | list) or not unit or data.draw(st.integers(0, 9)) == 0:
        return data.draw(hostile_values)  # the whole record, or a leaf
    keys = list(unit) if isinstance(unit, dict) else list(range(len(unit)))
    key = data.draw(st.sampled_from(keys))
    copy: Any = dict(unit) if isinstance(unit, dict) else list(unit)
    action = data.draw(
        st.sampled_from(["descend", "descend", "descend", "replace", "remove", "wrap"])
    )
    if isinstance(unit[key], str) and action != "remove":
        copy[key] = data.draw(hostile_texts)
    elif action == "descend":
        copy[key] = _mutate(data, unit[key])
    elif action == "replace":
        copy[key] = data.draw(hostile_values)
    elif action == "remove":
        del copy[key]
    else:
        copy[key] = [unit[key], unit[key]] if data.draw(st.booleans()) else {"": unit[key]}
    return copy


def _poison(data: st.DataObject, unit: Any) -> Any:
    """``unit`` with about one string in four (keys aside) replaced by hostile JSON text."""
    if isinstance(unit, dict):
        return {key: _poison(data, value) for key, value in unit.items()}
    if isinstance(unit, list):
        return [_poison(data, value) for value in unit]
    if isinstance(unit, str) and data.draw(st.integers(0, 3)) == 0:
        return data.draw(hostile_texts)
    return unit


@pytest.mark.parametrize("reader", sorted(READERS))
@settings(max_examples=10)
@given(data=st.data())
def test_hostile_records_are_stored_or_quarantined(reader: str, data: st.DataObject) -> None:
    seeds = _seeds(reader)
    units = []
    for _ in range(data.draw(st.integers(1, 4), label="units")):
        unit = data.draw(st.sampled_from(seeds))
        if data.draw(st.booleans(), label="poison"):
            unit = _poison(data, unit)
        for _ in range(data.draw(st.integers(0, 5), label="changes")):
            unit = _mutate(data, unit)
        units.append(unit)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "hostile.jsonl"
        path.write_text("".join(map(_line, units)))
        db = Path(tmp) / "s.duckdb"
        try:
            report = ingest([path], db, format=reader, limits=Limits(max_record_bytes=CAP))
        except InputError as exc:
            # mutated past recognition: a forced reader that finds no call says what the
            # records look like and stores nothing, a user's mistake and not a crash
            assert "found no tool calls" in str(exc) and "\n" not in str(exc), exc
            return
        (f,) = report.files
        # a file of one line holding a JSON array is an array file: its elements are units
        one_array = len(units) == 1 and isinstance(units[0], list)
        assert f.units_read == (len(units[0]) if one_array else len(units))
        assert f.units_read == f.units_stored + f.units_quarantined
        con = duckdb.connect(str(db), read_only=True)
        try:
            (unit_rows, calls), *_ = con.execute(
                "SELECT (SELECT count(*) FROM quarantine WHERE level = 'unit'), "
                "(SELECT count(*) FROM calls)"
            ).fetchall()
        finally:
            con.close()
        assert unit_rows == f.units_quarantined
        assert calls == f.calls
