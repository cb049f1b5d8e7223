"""The pytest plugin, loaded from its entry point: the ``tracemine_cassette`` fixture,
``--record-mode``, and cassettes beside the test."""

from __future__ import annotations

import json

import pytest

from helpers import FOREIGN_PLUGINS

pytest_plugins = ["pytester"]

AGENT_TEST = """
import os

LIVE = os.path.join(os.path.dirname(__file__), "live_calls.txt")

def lookup(city):
    with open(LIVE, "a") as out:
        out.write(city + "\\n")
    return {"city": city, "temperature": 21.5}

def test_weather(tracemine_cassette):
    weather = tracemine_cassette.guard("lookup")(lookup)
    assert weather(city=CITY)["temperature"] == 21.5
"""


@pytest.fixture(autouse=True)
def _only_this_plugin(pytester: pytest.Pytester) -> None:
    """The inner runs load what is installed, as a user's would; the plugins of other
    packages in the dev environment (DeepEval's, pytest-asyncio's) are left out, as this
    suite leaves them out, so that their warnings are not read as this plugin's."""
    skipped = " ".join(f"-p no:{name}" for name in FOREIGN_PLUGINS)
    pytester.makeini(f"[pytest]\naddopts = {skipped}\n")


def live_calls(pytester: pytest.Pytester) -> list[str]:
    path = pytester.path / "live_calls.txt"
    return path.read_text().split() if path.exists() else []


def test_record_once_then_replay_with_no_live_call(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_agent=AGENT_TEST.replace("CITY", '"Oslo"'))
    result = pytester.runpytest("--record-mode=once")
    result.assert_outcomes(passed=1)
    cassette = pytester.path / "cassettes" / "test_agent" / "test_weather.jsonl"
    assert cassette.is_file()  # beside the test, one file a test
    header, call = (json.loads(line) for line in cassette.read_text().splitlines())
    assert header["tracemine_cassette"] == 1 and call["tool"] == "lookup"
    assert live_calls(pytester) == ["Oslo"]

    result = pytester.runpytest()  # the default mode, none: replay only
    result.assert_outcomes(passed=1)
    assert live_calls(pytester) == ["Oslo"]


def test_replay_only_fails_on_a_call_not_recorded(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_agent=AGENT_TEST.replace("CITY", '"Oslo"'))
    pytester.runpytest("--record-mode=once").assert_outcomes(passed=1)
    pytester.makepyfile(test_agent=AGENT_TEST.replace("CITY", '"Bergen"'))
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*ReplayMiss*no recorded call answers lookup*",
                                 '*city: recorded "Oslo", this call "Bergen"*'])  # fmt: skip
    assert live_calls(pytester) == ["Oslo"]


def test_a_swallowed_miss_still_fails_the_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_swallow="""
        def test_swallow(tracemine_cassette):
            tool = tracemine_cassette.guard("t")(lambda: 1)
            try:
                tool()
            except Exception:
                pass
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, errors=1)  # the test body passed; teardown fails it
    result.stdout.fnmatch_lines(["*does not exist yet: record it with mode 'once'*"])


def test_the_marker_sets_path_and_ignored_arguments(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_marked="""
        import itertools, pytest
        ids = itertools.count()

        @pytest.mark.tracemine_cassette(path="shared/run.jsonl", ignore={"t": ["request_id"]})
        def test_marked(tracemine_cassette):
            tool = tracemine_cassette.guard("t")(lambda x, request_id: x * 2)
            assert tool(x=2, request_id=next(ids)) == 4
        """
    )
    pytester.runpytest("--record-mode", "all").assert_outcomes(passed=1)
    assert (pytester.path / "shared" / "run.jsonl").is_file()
    pytester.runpytest().assert_outcomes(passed=1)  # another request id, still replayed


def test_help_shows_the_record_mode(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(["*--record-mode={none,once,new_episodes,all}*"])
