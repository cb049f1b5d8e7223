"""pytest plugin (registered through the ``pytest11`` entry point): cassettes as fixtures.

    def test_refund(tracemine_cassette):
        get_order = tracemine_cassette.guard("get_order")(tools.get_order)
        assert agent(get_order).done

The cassette of a test sits beside its module: ``cassettes/<module>/<test name>.jsonl``.
``--record-mode`` (or the ini option ``tracemine_record_mode``) picks the mode; the
default, ``none``, never calls a tool live, so CI replays only. Record with
``pytest --record-mode=once``. The marker sets what a test needs otherwise::

    @pytest.mark.tracemine_cassette(path="shared.jsonl", ignore={"search": ["request_id"]},
                                    live={"send_mail"}, live_from_step=None)

A relative ``path`` is taken from the test module's folder. At teardown the cassette is
saved as the mode says, and a miss the code under test swallowed fails the test.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tracemine.replay._player import MODES, Player

_OPTION = "--record-mode"
_CALL_FAILED = pytest.StashKey[bool]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tracemine", "tracemine cassettes")
    # another cassette plugin may define the option with the same modes: then it is shared
    with contextlib.suppress(ValueError):
        group.addoption(
            _OPTION,
            action="store",
            default=None,
            choices=MODES,
            help="tracemine cassettes: none (replay only, the default), once, new_episodes, all",
        )
    parser.addini("tracemine_record_mode", "default record mode of tracemine cassettes",
                  default="none")  # fmt: skip


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "tracemine_cassette(path=None, ignore=None, live=None, live_from_step=None): "
        "where the test's tracemine cassette is and how it is replayed",
    )


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.when == "call":
        item.stash[_CALL_FAILED] = report.failed
    return report


def cassette_path(node: Any) -> Path:
    """``<folder of the test module>/cassettes/<module>/<test name>.jsonl``."""
    module = Path(node.path)
    name = re.sub(r"[^\w.-]+", "_", node.name).strip("_") or "test"
    return module.parent / "cassettes" / module.stem / f"{name}.jsonl"


def _mode(config: pytest.Config) -> str:
    mode = config.getoption(_OPTION, default=None) or config.getini("tracemine_record_mode")
    if mode not in MODES:
        raise pytest.UsageError(f"record mode {mode!r} is not one of {', '.join(MODES)}")
    return str(mode)


@pytest.fixture
def tracemine_cassette(request: pytest.FixtureRequest) -> Iterator[Player]:
    """A :class:`~tracemine.replay.Player` on this test's cassette."""
    marker = request.node.get_closest_marker("tracemine_cassette")
    options: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
    path = options.pop("path", None)
    if path is None:
        where = cassette_path(request.node)
    else:
        where = Path(path)
        if not where.is_absolute():
            where = Path(request.node.path).parent / where
    player = Player(where, mode=_mode(request.config), **options)
    yield player
    if request.node.stash.get(_CALL_FAILED, False):
        player.save()  # the test failed already (a miss raised in it says so itself)
    else:
        player.close()
