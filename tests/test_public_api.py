"""The public surface is exactly ``tracemine.__all__``, and every name in it resolves."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import tracemine


def test_every_public_name_resolves() -> None:
    for name in tracemine.__all__:
        assert getattr(tracemine, name) is not None, name


def test_unknown_names_are_attribute_errors() -> None:
    try:
        tracemine.not_a_name  # noqa: B018
    except AttributeError as exc:
        assert "not_a_name" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("expected AttributeError")


def test_importing_tracemine_loads_no_heavy_library() -> None:
    code = (
        "import sys, tracemine; "
        "print(sorted(m for m in ('duckdb', 'polars', 'sklearn', 'pydantic') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_public_functions_win_over_same_named_stages() -> None:
    code = (
        "import tracemine.ingest.store, tracemine.mine.api, tracemine.gate, tracemine.evaluate; "
        "import tracemine; from tracemine import ingest, mine, check, evaluate, simulate; "
        "print(all(callable(f) for f in (ingest, mine, check, evaluate, simulate)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_every_top_level_module_is_a_stage_or_the_shared_base() -> None:
    """The package's top level holds its stages (folders), the public API and the base
    every stage shares (errors, files written whole, the paused collector); a module
    anywhere else belongs in a stage."""
    root = Path(tracemine.__file__).parent
    modules = sorted(p.stem for p in root.glob("*.py"))
    assert modules == ["__init__", "__main__", "_atomic", "_gc", "errors"]
    from tracemine import gate

    assert tracemine.check is gate.check
