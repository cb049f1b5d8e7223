"""Record modes behave as VCR.py documents them:

none          replay; any new call raises, nothing is written
once          no cassette: record everything; a cassette: replay, new calls raise
new_episodes  replay what was recorded; record new calls and add them to the cassette
all           never replay; call everything live and record the cassette anew
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tracemine.errors import InputError
from tracemine.replay import Player, ReplayMiss


class Echo:
    """A live tool that says how often it was called."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, word: str) -> dict[str, object]:
        self.calls += 1
        return {"word": word, "live_call": self.calls}


def play(path: Path, mode: str, *words: str) -> tuple[list[object], Echo, Player]:
    echo = Echo()
    player = Player(path, mode=mode)
    tool = player.guard("echo")(echo)
    answers: list[object] = []
    for word in words:
        try:
            answers.append(tool(word=word))
        except ReplayMiss:
            answers.append("miss")
    player.save()
    return answers, echo, player


def recorded_words(path: Path) -> list[str]:
    return [json.loads(line)["arguments"]["word"] for line in path.read_text().splitlines()[1:]]


@pytest.fixture
def cassette(tmp_path: Path) -> Path:
    path = tmp_path / "echo.jsonl"
    play(path, "once", "a", "b")
    return path


def test_once_records_when_there_is_no_cassette(tmp_path: Path) -> None:
    path = tmp_path / "echo.jsonl"
    answers, echo, _ = play(path, "once", "a", "b")
    assert echo.calls == 2 and recorded_words(path) == ["a", "b"]
    assert answers == [{"word": "a", "live_call": 1}, {"word": "b", "live_call": 2}]


def test_once_replays_and_refuses_new_calls_when_the_cassette_exists(cassette: Path) -> None:
    before = cassette.read_text()
    answers, echo, player = play(cassette, "once", "a", "c")
    assert echo.calls == 0
    assert answers == [{"word": "a", "live_call": 1}, "miss"]
    assert cassette.read_text() == before
    assert len(player.misses) == 1


def test_none_replays_and_raises_for_any_new_call(cassette: Path) -> None:
    before = cassette.read_text()
    answers, echo, _ = play(cassette, "none", "b", "c")
    assert echo.calls == 0 and answers == [{"word": "b", "live_call": 2}, "miss"]
    assert cassette.read_text() == before


def test_none_without_a_cassette_says_to_record_one(tmp_path: Path) -> None:
    player = Player(tmp_path / "absent.jsonl", mode="none")
    with pytest.raises(ReplayMiss, match="does not exist yet: record it with mode 'once'"):
        player.guard("echo")(Echo())(word="a")
    assert not (tmp_path / "absent.jsonl").exists()


def test_new_episodes_replays_recorded_calls_and_adds_new_ones(cassette: Path) -> None:
    answers, echo, _ = play(cassette, "new_episodes", "a", "c")
    assert echo.calls == 1
    assert answers == [{"word": "a", "live_call": 1}, {"word": "c", "live_call": 1}]
    assert recorded_words(cassette) == ["a", "b", "c"]
    runs = [json.loads(line)["run_id"] for line in cassette.read_text().splitlines()[1:]]
    assert runs == ["echo", "echo", "echo-2"]  # the new episode is a run of its own
    answers, echo, _ = play(cassette, "none", "a", "b", "c")
    assert echo.calls == 0 and "miss" not in answers


def test_all_never_replays_and_records_anew(cassette: Path) -> None:
    answers, echo, _ = play(cassette, "all", "b", "z")
    assert echo.calls == 2
    assert answers == [{"word": "b", "live_call": 1}, {"word": "z", "live_call": 2}]
    assert recorded_words(cassette) == ["b", "z"]


def test_an_unknown_mode_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="record mode 'rewrite' is not one of none, once"):
        Player(tmp_path / "x.jsonl", mode="rewrite")
