"""Record a scripted agent loop, replay it: no live call, the same final state; a miss
names the nearest recorded key; cut-point replay calls exactly the chosen tools live."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from replay_shop import Shop, agent, wrap

from tracemine.replay import (
    Player,
    Recorder,
    ReplayedProtocolError,
    ReplayedToolError,
    ReplayMiss,
)


def record(path: Path) -> list[str]:
    with Recorder(path, task_id="refund-all") as recorder:
        transcript = agent(wrap(recorder, Shop()))
    return transcript


def test_round_trip_replays_with_no_live_call(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    recorded = record(cassette)
    shop = Shop()
    with Player(cassette) as player:
        replayed = agent(wrap(player, shop))
    assert replayed == recorded
    assert shop.calls == [] and player.live_calls == 0
    assert player.replayed_calls == 7
    assert "refused: refund of 10000 exceeds the order total" in replayed


def test_tool_errors_come_back_as_the_same_error(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    record(cassette)
    lines = [json.loads(line) for line in cassette.read_text().splitlines()[1:]]
    errors = [(r["tool"], r["status"], r["error_type"]) for r in lines if r["status"] != "ok"]
    assert errors == [
        ("create_refund", "tool_error", "ValueError"),
        ("get_order", "tool_error", "KeyError"),
    ]
    player = Player(cassette)
    tools = wrap(player, Shop())
    tools["search_orders"](status="delivered", limit=5)
    with pytest.raises(KeyError):
        tools["get_order"](order_id="#W9")


def test_an_error_type_that_cannot_be_rebuilt_keeps_its_name(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    cassette.write_text(
        '{"tracemine_cassette": 1}\n'
        '{"run_id": "r", "tool": "pay", "arguments": {}, "status": "tool_error", '
        '"error_type": "vendor.sdk.PaymentDeclined", "error_message": "card declined"}\n'
    )
    pay = Player(cassette).guard("pay")(lambda: None)
    with pytest.raises(ReplayedToolError, match=r"vendor\.sdk\.PaymentDeclined: card declined"):
        pay()


def test_canonical_arguments_and_ignored_ones_find_the_recording(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    with Recorder(cassette, ignore={"search": ["request_id"]}) as recorder:
        search = recorder.guard("search")(lambda query, page, request_id: {"hits": [query]})
        search(query="cafe\u0301", page=1, request_id="a")
    assert json.loads(cassette.read_text().splitlines()[0])["ignore"] == {"search": ["request_id"]}
    player = Player(cassette)  # the ignore list comes from the cassette's header
    search = player.guard("search")(lambda **_: pytest.fail("called live"))
    assert search(page=1.0, request_id="b", query="caf\u00e9") == {"hits": ["cafe\u0301"]}


def test_same_key_calls_are_answered_in_recorded_order(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    counter = iter(range(10))
    with Recorder(cassette) as recorder:
        tick = recorder.guard("tick")(lambda: next(counter))
        assert [tick(), tick(), tick()] == [0, 1, 2]
    player = Player(cassette)
    tick = player.guard("tick")(lambda: pytest.fail("called live"))
    assert [tick(), tick(), tick()] == [0, 1, 2]
    with pytest.raises(ReplayMiss, match=r"recorded 3 time\(s\) and every one has been answered"):
        tick()


def test_a_miss_names_the_nearest_key_and_the_arguments_that_differ(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    record(cassette)
    shop = Shop()
    player = Player(cassette)
    tools = wrap(player, shop)
    with pytest.raises(ReplayMiss) as caught:
        tools["search_orders"](status="pending", limit=5)
    miss = caught.value
    assert miss.tool == "search_orders"
    assert miss.arguments == '{"limit":5,"status":"pending"}'
    assert miss.nearest is not None and miss.nearest.startswith("search_orders#")
    assert miss.differences == [("status", '"delivered"', '"pending"')]
    assert miss.nearest in str(miss) and 'status: recorded "delivered", this call "pending"' in str(
        miss
    )
    assert shop.calls == []  # a miss is never a live call
    with pytest.raises(ReplayMiss, match="search_orders"):
        player.close()  # even a miss the loop swallowed fails the run


@pytest.mark.parametrize(
    ("cut", "live_tools"),
    [
        ({"live": {"create_refund"}}, ["create_refund"] * 3),
        ({"live_from_step": 5}, ["create_refund", "get_order"]),
    ],
)
def test_cut_point_calls_exactly_the_chosen_tools_live(
    tmp_path: Path, cut: dict[str, object], live_tools: list[str]
) -> None:
    cassette = tmp_path / "run.jsonl"
    recorded = record(cassette)
    before = cassette.read_text()
    shop = Shop()
    with Player(cassette, **cut) as player:  # type: ignore[arg-type]
        assert agent(wrap(player, shop)) == recorded
    assert shop.calls == live_tools
    assert cassette.read_text() == before  # the recording is left as it was
    new = [json.loads(line) for line in (tmp_path / "run.live.jsonl").read_text().splitlines()[1:]]
    assert [r["origin"] for r in new].count("live") == len(live_tools)
    assert [r["tool"] for r in new if r["origin"] == "live"] == live_tools
    assert len(new) == 7  # the whole run, to compare with the recorded one


def test_async_tools_record_and_replay(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    calls: list[int] = []

    async def lookup(n: int) -> dict[str, int]:
        calls.append(n)
        if n < 0:
            raise ValueError("negative")
        return {"square": n * n}

    async def run(deck: Recorder) -> list[object]:
        tool = deck.guard("lookup")(lookup)
        out: list[object] = [await tool(n=3)]
        try:
            await tool(n=-1)
        except ValueError as exc:
            out.append(str(exc))
        return out

    with Recorder(cassette) as recorder:
        recorded = asyncio.run(run(recorder))
    with Player(cassette) as player:
        assert asyncio.run(run(player)) == recorded == [{"square": 9}, "negative"]
    assert calls == [3, -1]  # the live function ran only while recording


def test_a_call_recorded_without_a_result_replays_as_an_error(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    cassette.write_text(
        '{"tracemine_cassette": 1}\n'
        '{"run_id": "r", "tool": "slow", "arguments": {}, "status": "missing"}\n'
    )
    slow = Player(cassette).guard("slow")(lambda: None)
    with pytest.raises(ReplayedProtocolError, match="never got a result"):
        slow()


def test_an_argument_with_no_json_form_is_kept_as_its_repr(tmp_path: Path) -> None:
    loop: list[object] = []
    loop.append(loop)
    with Recorder(tmp_path / "run.jsonl") as recorder:
        assert recorder.guard("echo")(lambda items: len(items))(items=loop) == 1
    (record,) = recorder.records
    assert record["arguments"] == {"unserializable_arguments": repr({"items": loop})}
    assert Player(tmp_path / "run.jsonl").cassette.records[0]["tool"] == "echo"
