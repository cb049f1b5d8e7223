"""A JSON array file holding an integer past 64 bits is still valid JSON: every element is
read, none is lost to the fast parser's integer limit."""

from __future__ import annotations

from pathlib import Path

from tracemine.ingest.source import BadUnit, iter_units


def test_an_integer_past_64_bits_does_not_end_the_array(tmp_path: Path) -> None:
    path = tmp_path / "calls.json"
    path.write_text('[{"a": 1}, 9223372036854775808, null, {"b": [2]}]\n')
    units = list(iter_units(path))
    assert not [u for _, u in units if isinstance(u, BadUnit)]
    assert units == [(1, {"a": 1}), (2, 9223372036854775808), (3, None), (4, {"b": [2]})]
