"""The public surface is exactly ``tracemine.__all__``, and every name in it resolves."""

from __future__ import annotations

import subprocess
import sys

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
        "import tracemine.ingest.store, tracemine.mine.api, tracemine.check, tracemine.evaluate; "
        "import tracemine; from tracemine import ingest, mine, check, evaluate, simulate; "
        "print(all(callable(f) for f in (ingest, mine, check, evaluate, simulate)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
