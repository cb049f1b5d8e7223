"""Property-based guarantees of ingest: random call logs round-trip, and whatever garbage
is mixed in, every record read is either stored or quarantined."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import duckdb
from hypothesis import given, settings
from hypothesis import strategies as st

from tracemine.ingest import ingest

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.text(max_size=30),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
tool_names = st.sampled_from(["get_order", "search", "list_items", "create_refund"])
# results are JSON values, and as often JSON documents sent as text (what many tools return)
results = st.one_of(json_values, json_values.map(json.dumps))
calls = st.fixed_dictionaries(
    {
        "name": tool_names,
        "arguments": st.dictionaries(st.text(min_size=1, max_size=8), json_values, max_size=4),
        "ok": st.booleans(),
        "result": results,
        "duration_ms": st.floats(min_value=0, max_value=1e6),
    }
)
call_logs = st.lists(
    st.fixed_dictionaries(
        {"task_id": st.text(min_size=1, max_size=6), "calls": st.lists(calls, max_size=6)}
    ),
    min_size=1,
    max_size=5,
)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def expected_result(sent: Any) -> Any:
    """What the store must hold for a result, worked out with the standard library alone:
    a string holding strict JSON (no NaN or Infinity) that is an object, an array, a number,
    true, false or null is that document (``json.dumps`` of what a tool returned); every
    other string (JSON strings included) stays the text it was; a value that is not a
    string is itself."""
    if not isinstance(sent, str):
        return sent
    try:
        document = json.loads(sent, parse_constant=_no_constant)
    except ValueError:
        return sent
    if isinstance(document, dict | list):
        return document
    if document is None or isinstance(document, int | float):  # bools are ints
        return document
    return sent


# each example is a real ingest into a DuckDB file: fewer, heavier examples
@settings(max_examples=20)
@given(call_logs)
def test_random_call_logs_round_trip(logs: list[dict]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "logs.jsonl"
        path.write_text("".join(json.dumps(log) + "\n" for log in logs))
        db = Path(tmp) / "s.duckdb"
        report = ingest([path], db, format="calllog", validate=True)
        # every line the test wrote was read, and stored
        assert report.files[0].units_read == len(logs)
        assert report.files[0].units_stored == len(logs)
        assert report.files[0].units_quarantined == 0
        con = duckdb.connect(str(db), read_only=True)
        rows = con.execute(
            "SELECT source_line, seq, tool, arguments, result, status, duration_ms, r.task_id "
            "FROM calls JOIN runs r USING (run_id) ORDER BY source_line, seq"
        ).fetchall()
        con.close()
    expected = [
        (
            line,
            seq,
            c["name"],
            c["arguments"],
            c["result"],
            c["ok"],
            c["duration_ms"],
            log["task_id"],
        )
        for line, log in enumerate(logs, 1)
        for seq, c in enumerate(log["calls"])
    ]
    assert len(rows) == len(expected)
    for row, want in zip(rows, expected, strict=True):
        line, seq, tool, arguments, result, status, duration, task = row
        assert (line, seq, tool, task) == (want[0], want[1], want[2], want[7])
        assert json.loads(arguments) == want[3]
        stored = json.loads(result)
        # a text result that is itself a JSON document is parsed, other text stays text
        expected = expected_result(want[4])
        assert stored == expected
        assert type(stored) is type(expected)
        assert status == ("ok" if want[5] else "tool_error")
        assert duration == want[6]


garbage = st.one_of(
    st.binary(min_size=1, max_size=40).filter(lambda b: b"\n" not in b and b.strip()),
    st.sampled_from([b'{"calls": [', b"[1, 2", b'{"a": }', b"\xff\xfe", b"null", b"42"]),
)


# valid JSON that orjson refuses or that no store column takes as is: each is one call
_CALL = b'{"task_id": "t", "calls": [{"name": "get", "arguments": {}, "ok": true, '
hostile = st.sampled_from(
    [
        _CALL + b'"result": {"n": 123456789012345678901234567890, "m": NaN}}]}',
        _CALL + b'"result": "\\udfffx", "index": 4294967296}], "trial": 9223372036854775808}',
        _CALL + b'"result": ' + b"[" * 300 + b"]" * 300 + b"}]}",
    ]
)


@settings(max_examples=20)
@given(
    st.lists(
        st.one_of(
            calls.map(lambda c: ("good", c)),
            garbage.map(lambda g: ("bad", g)),
            hostile.map(lambda h: ("hostile", h)),
        ),
        max_size=25,
    )
)
def test_every_line_is_stored_or_quarantined(lines: list[tuple[str, object]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mixed.jsonl"
        with open(path, "wb") as handle:
            handle.write(json.dumps({"task_id": "t", "calls": []}).encode() + b"\n")
            for kind, payload in lines:
                if kind == "good":
                    record = {"task_id": "t", "calls": [payload]}
                    handle.write(json.dumps(record).encode() + b"\n")
                else:  # bad or hostile: written as is
                    handle.write(payload + b"\n")  # type: ignore[operator]
        db = Path(tmp) / "s.duckdb"
        report = ingest([path], db, format="calllog")
        f = report.files[0]
        assert f.units_read == f.units_stored + f.units_quarantined
        # and against what was written: the first line, then one line per entry of `lines`
        assert f.units_read == 1 + len(lines)
        assert f.units_stored == 1 + sum(1 for kind, _ in lines if kind != "bad")
        assert f.units_quarantined == sum(1 for kind, _ in lines if kind == "bad")
        con = duckdb.connect(str(db), read_only=True)
        quarantined = con.execute("SELECT count(*) FROM quarantine WHERE level = 'unit'").fetchall()
        calls_stored = con.execute("SELECT count(*) FROM calls").fetchall()
        con.close()
        assert quarantined[0][0] == f.units_quarantined == sum(1 for k, _ in lines if k == "bad")
        assert calls_stored[0][0] == f.calls == sum(1 for kind, _ in lines if kind != "bad")
