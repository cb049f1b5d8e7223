"""What the suite importers share, tested without the suites' packages: the frozen clock,
standalone schemas, JSON conversion, the deterministic writer, and the one-line errors
for a missing optional package."""

from __future__ import annotations

import datetime as datetime_module
import gzip
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from typer.testing import CliRunner

from tracemine.cli import app
from tracemine.errors import InputError
from tracemine.importers import import_suite
from tracemine.importers._common import (
    frozen_clock,
    frozen_datetime,
    inline_refs,
    jsonable,
    write_runs,
)

INSTANT = datetime_module.datetime(2024, 5, 15, 10, 0, 0)


def test_frozen_datetime_fixes_now_and_builds_plain_values() -> None:
    shim = frozen_datetime(INSTANT)
    assert shim.datetime.now() == INSTANT
    assert shim.date.today() == INSTANT.date()
    parsed = shim.datetime.fromisoformat("2025-01-02T23:59")
    # values built through the stand-in are plain datetimes, which YAML and pydantic expect
    assert type(parsed) is datetime_module.datetime
    assert shim.timedelta is datetime_module.timedelta


def test_frozen_clock_patches_the_modules_under_a_prefix_and_restores_them() -> None:
    tool = ModuleType("fake_suite.tools")
    tool.datetime = datetime_module  # type: ignore[attr-defined]
    other = ModuleType("other_suite")
    other.datetime = datetime_module  # type: ignore[attr-defined]
    sys.modules.update({"fake_suite.tools": tool, "other_suite": other})
    try:
        with frozen_clock("fake_suite", INSTANT):
            assert tool.datetime.datetime.now() == INSTANT
            assert other.datetime is datetime_module
        assert tool.datetime is datetime_module
    finally:
        del sys.modules["fake_suite.tools"], sys.modules["other_suite"]


def test_inline_refs_makes_a_schema_standalone() -> None:
    schema = {
        "$defs": {
            "Status": {"enum": ["open", "done"], "type": "string"},
            "Node": {"properties": {"child": {"$ref": "#/$defs/Node"}}, "type": "object"},
        },
        "properties": {
            "status": {"$ref": "#/$defs/Status", "default": "open"},
            "tree": {"$ref": "#/$defs/Node"},
        },
        "type": "object",
    }
    inlined = inline_refs(schema)
    assert "$defs" not in inlined
    assert inlined["properties"]["status"] == {
        "enum": ["open", "done"], "type": "string", "default": "open"
    }  # fmt: skip
    # a recursive definition stops at its own reference instead of looping
    assert inlined["properties"]["tree"]["properties"]["child"] == {"$ref": "#/$defs/Node"}


def test_jsonable_gives_json_values() -> None:
    value = {"when": INSTANT, "ids": ("a", "b"), "ratio": float("inf"), "n": [float("nan")]}
    assert jsonable(value) == {
        "when": "2024-05-15T10:00:00", "ids": ["a", "b"], "ratio": "inf", "n": ["nan"]
    }  # fmt: skip


def _run(run_id: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    return {"run_id": run_id, "task_id": run_id, "trial": None, "family": "f",
            "reward": None, "run_outcome": None, "calls": calls}  # fmt: skip


def test_write_runs_is_byte_stable_and_invents_no_timing(tmp_path: Path) -> None:
    call = {"seq": 0, "call_id": "call_0", "tool": "get", "server": "S", "arguments": {"id": 1},
            "result": {"ok": True}, "status": "ok", "error_type": None, "error_message": None}  # fmt: skip
    runs = [_run("r1", [call]), _run("r2", [dict(call, status="tool_error", result=None)])]
    first = write_runs(runs, tmp_path / "a" / "t.jsonl.gz").read_bytes()
    second = write_runs(runs, tmp_path / "b" / "t.jsonl.gz").read_bytes()
    assert first == second
    lines = [json.loads(line) for line in gzip.decompress(first).decode().splitlines()]
    assert [line["run_id"] for line in lines] == ["r1", "r2"]
    assert lines[0]["server"] == "S" and lines[1]["status"] == "tool_error"
    assert not {"started_at", "ended_at", "duration_ms"} & set(lines[0])


@pytest.fixture
def nothing_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any, **kwargs: Any) -> Any:
        if name in ("agentdojo", "bfcl_eval", "mpmath"):
            return None
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


@pytest.mark.parametrize(
    ("suite", "hint"),
    [("agentdojo", "pip install 'tracemine[agentdojo]'"), ("bfcl", "pip install --no-deps")],
)
def test_a_missing_package_says_how_to_install_it(
    nothing_installed: None, tmp_path: Path, suite: str, hint: str
) -> None:
    with pytest.raises(InputError, match="is not installed") as caught:
        import_suite(suite, tmp_path)
    assert hint in str(caught.value)
    result = CliRunner().invoke(app, ["import-suite", suite, "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "is not installed" in result.output and hint in result.output
    assert not list(tmp_path.iterdir()), "nothing written"


def test_unknown_suite_and_bad_limit_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown suite"):
        import_suite("nope", tmp_path)
    with pytest.raises(InputError, match="at least 1"):
        import_suite("bfcl", tmp_path, limit=0)
