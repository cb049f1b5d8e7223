"""Replay runs inside agent processes and test suites: it imports the standard library
only, and its public names are exactly ``__all__``."""

from __future__ import annotations

import tracemine.replay

from helpers import heavy_imports, public_names


def test_importing_replay_loads_no_heavy_dependency() -> None:
    assert heavy_imports("tracemine.replay", "pytest") == []


def test_public_names() -> None:
    assert sorted(tracemine.replay.__all__) == public_names(tracemine.replay, "pytest_plugin")
