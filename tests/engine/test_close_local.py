"""Closing a local cluster that a worker's restart makes Dask refuse to close (``can only
join a started process``) is tried again, and never replaces what the mine returned or
the error it stopped with."""

from __future__ import annotations

import logging

import pytest

from tracemine.engine.dask import CLOSE_TRIES, close_local


class _Flaky:
    def __init__(self, failures: int) -> None:
        self.failures, self.calls = failures, 0

    def close(self) -> None:
        self.calls += 1
        if self.calls <= self.failures:
            raise AssertionError("can only join a started process")


def test_a_close_that_fails_once_is_tried_again() -> None:
    local = _Flaky(1)
    close_local(local)
    assert local.calls == 2


def test_a_close_that_keeps_failing_warns_instead_of_raising(
    caplog: pytest.LogCaptureFixture,
) -> None:
    local = _Flaky(99)
    with caplog.at_level(logging.WARNING, logger="tracemine.engine.dask"):
        close_local(local)
    assert local.calls == CLOSE_TRIES
    assert "did not close cleanly: AssertionError: can only join a started process" in caplog.text
