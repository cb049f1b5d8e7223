"""Answering tool calls from a cassette.

Record modes, as in VCR.py:

    none          replay recorded calls; a call not in the cassette raises ReplayMiss
    once          no cassette yet: call live and record all; a cassette: as ``none``
    new_episodes  replay recorded calls; call the others live and add them to the cassette
    all           never replay: call everything live and record the cassette anew

A miss is never sent live except where the mode says so. Calls with the same key are
answered in the order they were recorded; a key answered as often as it was recorded
misses. Cut-point replay (``live={"tool"}`` or ``live_from_step=N``) calls those tools, or
every call from step N on (0-based), live, and records the whole run (replayed and live
calls, each with its ``origin``) into a new cassette (``record_to``; by default the
cassette's name with ``.live`` before ``.jsonl``), leaving the recorded one as it was.
"""

from __future__ import annotations

import json
import pickle
from collections import deque
from collections.abc import Hashable, Iterable
from pathlib import Path
from types import TracebackType
from typing import Any

from tracemine.errors import InputError
from tracemine.replay._canonical import (
    Ignore,
    canonical_text,
    diff,
    frozen,
    key_of,
    without_ignored,
)
from tracemine.replay._cassette import Cassette, merged_ignore, run_ids
from tracemine.replay._errors import ReplayMiss
from tracemine.replay._recorder import Recorder
from tracemine.replay._step import Step

MODES = ("none", "once", "new_episodes", "all")
_REPLAY_FIELDS = ("status", "result", "result_raw", "error_type", "error_message", "error_code",
                  "duration_ms")  # fmt: skip


def live_path(path: Path) -> Path:
    """Where a cut-point run is recorded by default: ``run.jsonl`` → ``run.live.jsonl``."""
    suffix = path.suffix or ".jsonl"
    return path.with_name(f"{path.name[: len(path.name) - len(path.suffix)]}.live{suffix}")


class Player(Recorder):
    """Answer tool calls from a cassette; see the module docstring for modes and cut points.

    >>> player = Player("cassettes/order.jsonl")  # doctest: +SKIP
    >>> get_order = player.guard("get_order")(get_order)  # doctest: +SKIP
    >>> get_order(order_id="#W1")  # the recorded result, no live call  # doctest: +SKIP
    >>> player.close()  # saves as the mode says; raises a miss the loop swallowed  # doctest: +SKIP
    """

    def __init__(
        self,
        cassette: str | Path | Cassette,
        *,
        mode: str = "none",
        live: Iterable[str] = (),
        live_from_step: int | None = None,
        record_to: str | Path | None = None,
        ignore: Ignore | None = None,
        run_id: str | None = None,
        task_id: str | None = None,
    ) -> None:
        if mode not in MODES:
            raise InputError(f"record mode {mode!r} is not one of {', '.join(MODES)}")
        if isinstance(cassette, Cassette):
            recorded, path, self.existed = cassette, cassette.path, True
        else:
            path = Path(cassette)
            self.existed = path.exists()
            recorded = Cassette.load(path) if self.existed else Cassette(path=path)
        self.cassette, self.mode = recorded, mode
        self.live = frozenset(live)
        self.live_from_step = live_from_step
        self.cut = bool(self.live) or live_from_step is not None
        if record_to is None and self.cut and path is not None:
            record_to = live_path(path)
        self.record_to = Path(record_to) if record_to is not None else None
        taken = run_ids(recorded.records)
        stem = path.stem if path is not None else "run"
        fresh = run_id or next(
            name for n in range(1, len(taken) + 2)
            if (name := stem if n == 1 else f"{stem}-{n}") not in taken
        )  # fmt: skip
        super().__init__(path, ignore=merged_ignore(recorded.ignore, ignore), run_id=fresh,
                         task_id=task_id)  # fmt: skip
        recorded.ignore = self.ignore
        self.misses: list[ReplayMiss] = []
        self._texts: list[str] = []  # canonical texts, for the nearest key of a miss
        # a fresh copy of a result for every answer: unpickling beats json.loads by half
        self._results: list[bytes | None] = []
        self._queues: dict[tuple[str, Hashable], deque[int]] = {}
        self._recorded_count: dict[tuple[str, Hashable], int] = {}
        self._replays = mode != "all" and not (mode == "once" and not self.existed)
        for index, record in enumerate(recorded.records):
            self._results.append(pickle.dumps(record["result"]) if "result" in record else None)
            if self._replays:
                tool = record["tool"]
                slot = (tool, frozen(without_ignored(tool, record["arguments"], self.ignore)))
                self._queues.setdefault(slot, deque()).append(index)
                self._recorded_count[slot] = self._recorded_count.get(slot, 0) + 1

    # -- routing -------------------------------------------------------------------------
    def begin(self, tool: str, arguments: dict[str, Any]) -> Step:
        with self._lock:
            seq, self._seq = self._seq, self._seq + 1
            goes_live = not self._replays or tool in self.live or (
                self.live_from_step is not None and seq >= self.live_from_step)  # fmt: skip
            if goes_live:
                return Step(seq, tool, arguments)
            slot = (tool, frozen(without_ignored(tool, arguments, self.ignore)))
            queue = self._queues.get(slot)
            if queue:
                return Step(seq, tool, arguments, queue.popleft())
            if self.mode == "new_episodes":
                return Step(seq, tool, arguments)
            miss = self._miss(tool, canonical_text(tool, arguments, self.ignore), slot)
            self.misses.append(miss)
        raise miss

    def replayed(self, step: Step) -> tuple[dict[str, Any], Any]:
        index = step.recorded
        assert index is not None
        with self._lock:
            self.replayed_calls += 1
            self._log.append((step, index))
        blob = self._results[index]
        return self.cassette.records[index], (pickle.loads(blob) if blob is not None else None)

    def replay_record(self, step: Step, index: int) -> dict[str, Any]:
        record = self.cassette.records[index]
        fields = {k: record[k] for k in _REPLAY_FIELDS if k in record}
        return self.record_of(step, "replay", step.arguments, fields)

    def _miss(self, tool: str, text: str, slot: tuple[str, Hashable]) -> ReplayMiss:
        key = key_of(tool, text)
        where = self.cassette.path or "the cassette"
        lines = [f"no recorded call answers {tool} (record mode {self.mode!r}, {where})",
                 f"  arguments (canonical): {text}", f"  key: {key}"]  # fmt: skip
        if not self.existed:
            lines.append("  the cassette does not exist yet: record it with mode 'once'")
        recorded = self._recorded_count.get(slot, 0)
        if recorded:
            lines.append(
                f"  this key was recorded {recorded} time(s) and every one has been answered: "
                "the run makes this call more often than the recording"
            )
            return ReplayMiss("\n".join(lines), tool=tool, arguments=text, key=key)
        nearest = self._nearest(tool, text)
        if nearest is None:
            lines.append("  nothing recorded to compare with")
            return ReplayMiss("\n".join(lines), tool=tool, arguments=text, key=key)
        index, differences = nearest
        record = self.cassette.records[index]
        near_key = key_of(record["tool"], self._texts[index])
        line = self.cassette.lines[index] if index < len(self.cassette.lines) else None
        at = f" (line {line})" if line else ""
        lines.append(f"  nearest recorded: {near_key}{at}; arguments that differ:")
        for path, old, new in differences:
            lines.append(f"    {path}: recorded {old or '(absent)'}, this call {new or '(absent)'}")
        return ReplayMiss("\n".join(lines), tool=tool, arguments=text, key=key,
                          nearest=near_key, differences=differences)  # fmt: skip

    def _nearest(self, tool: str, text: str) -> tuple[int, list[Any]] | None:
        """The recorded call closest to this one: same tool first, fewest differing
        leaves, then not yet answered, then earliest."""
        if not self._texts:
            self._texts = [canonical_text(r["tool"], r["arguments"], self.ignore)
                           for r in self.cassette.records]  # fmt: skip
        best: tuple[tuple[int, int, int, int], int, list[Any]] | None = None
        unanswered = {i for queue in self._queues.values() for i in queue}
        for index, record in enumerate(self.cassette.records):
            differences = diff(self._texts[index], text)
            rank = (record["tool"] != tool, len(differences), index not in unanswered, index)
            if best is None or rank < best[0]:
                best = (rank, index, differences)
        if best is None:
            return None
        _, index, differences = best
        tool_of = self.cassette.records[index]["tool"]
        if tool_of != tool:
            differences = [("(tool)", json.dumps(tool_of), json.dumps(tool)), *differences]
        return index, differences

    # -- saving --------------------------------------------------------------------------
    def save(self, path: str | Path | None = None) -> Path | None:
        """Write what the mode says: a cut-point run to ``record_to``; ``once`` without a
        cassette and ``all`` the whole run; ``new_episodes`` the cassette plus the calls
        made live; ``none`` nothing. Returns the file written, if any."""
        if self.cut:
            return super().save(path or self.record_to)
        if self.mode == "all" or (self.mode == "once" and not self.existed):
            return super().save(path)
        fresh = [r for r in self.records if r["origin"] == "live"]
        if self.mode == "new_episodes" and fresh:
            return Cassette(self.path, [*self.cassette.records, *fresh], self.ignore).save(path)
        return None

    def close(self) -> Path | None:
        """Save, then raise the first miss of the run (one the agent loop may have caught
        and carried on from): a miss fails the run even when the loop swallowed it."""
        written = self.save()
        if self.misses:
            first = self.misses[0]
            more = f" (and {len(self.misses) - 1} more misses)" if len(self.misses) > 1 else ""
            raise ReplayMiss(str(first) + more, tool=first.tool, arguments=first.arguments,
                             key=first.key, nearest=first.nearest,
                             differences=first.differences)  # fmt: skip
        return written

    def __enter__(self) -> Player:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc is None:
            self.close()
        else:
            self.save()
