"""What the readers of message lists share (``openai_chat``, ``openai_responses``,
``anthropic``): unwrapping conversations, pairing calls with results inside a run, and a
base class for formats whose unit is a conversation or a single message. Not a reader.

Pairing follows one policy for the three formats:

- a call whose id was already used in the run is stored with the anomaly
  ``duplicate_call_id``; a result for that id answers the oldest call still open;
- a result for an id whose calls are all answered is a *second* result: it is quarantined
  (the first result stays on the call, which is not changed), so nothing is dropped;
- a result for an id no call in the run used is an orphan: it is quarantined;
- a call left open when its run ends is stored with status ``missing``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from tracemine.ingest.readers._common import run_fields
from tracemine.ingest.readers.base import (
    BadRecord,
    Reader,
    Sink,
    as_str,
    dumps,
    duration_ms,
    parse_arguments,
    parse_result_text,
    parse_time,
    text_of_parts,
)

#: run fields copied onto each call, so in-memory readers see them without a join
_CALL_RUN_FIELDS = ("task_id", "task_id_source", "trial", "session_id", "run_outcome")


def unwrap_conversation(unit: Any) -> tuple[list[Any], dict[str, Any], str] | None:
    """``(messages, wrapper, pointer prefix)`` of a conversation-shaped unit, else None.

    Accepts a bare message list, ``{"messages": [...]}`` and result-file records that keep
    the messages under ``traj`` (``{"task_id", "trial", "reward", "traj"}``).
    """
    if isinstance(unit, list):
        return unit, {}, ""
    if isinstance(unit, dict):
        for key in ("messages", "traj"):
            if isinstance(unit.get(key), list):
                wrapper = {k: v for k, v in unit.items() if k not in ("messages", "traj")}
                return unit[key], wrapper, f"/{key}"
    return None


def run_id_of(wrapper: dict[str, Any]) -> str | None:
    """The run id a wrapper names, if any."""
    for key in ("run_id", "conversation_id", "id"):
        value = wrapper.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and value != "":
            return str(value)
    return None


def set_result(
    record: dict[str, Any],
    content: Any,
    *,
    result_call_id: str | None,
    pairing: str,
    status: str = "ok",
    ended_at: datetime | None = None,
) -> None:
    """Fill the result side of ``record`` from what the source gave as the result.

    Text is kept in ``result_text`` and parsed when it is JSON; a list of content parts is
    kept whole in ``result_raw`` and its text becomes the result (the parts themselves
    when there is no text, e.g. an image only).
    """
    record.update(status=status, result_call_id=result_call_id, id_pairing=pairing)
    if ended_at is not None:
        record["ended_at"] = ended_at
        record["duration_ms"] = duration_ms(record["started_at"], ended_at)
    if isinstance(content, str):
        record["result_text"] = content
        record["result"] = parse_result_text(content)
    elif isinstance(content, list):
        record["result_raw"] = dumps(content)
        text = text_of_parts(content)
        record["result_text"] = text
        record["result"] = parse_result_text(text) if text is not None else content
    else:
        record["result"] = content


class RunCalls:
    """The calls of one run: numbering, duplicate ids, and the calls still open."""

    __slots__ = (
        "_answered", "_ids", "_open", "_ready", "_rejected", "fields", "in_turn",
        "last_turn_id", "next_seq", "run_id", "turn_calls", "turns",
    )  # fmt: skip

    def __init__(self, run_id: str, fields: dict[str, Any] | None = None) -> None:
        self.run_id = run_id
        self.fields = {k: (fields or {}).get(k) for k in _CALL_RUN_FIELDS}
        if self.fields["task_id_source"] is None:
            self.fields["task_id_source"] = "none"
        self.next_seq = 0
        #: assistant messages seen so far: the next one's ``turn``
        self.turns = 0
        #: id of the last assistant message and how many calls it made: sources that
        #: split one message over several records repeat its id
        self.last_turn_id: str | None = None
        self.turn_calls = 0
        #: for item lists: whether the last item read was the model's
        self.in_turn = False
        self._open: list[dict[str, Any]] = []
        self._ready: list[dict[str, Any]] = []
        self._ids: set[str] = set()
        self._answered: set[str] = set()
        self._rejected: set[str] = set()

    def add(self, record: dict[str, Any]) -> None:
        """Number a new call and hold it open until its result comes."""
        record.update(self.fields, run_id=self.run_id, seq=self.next_seq, status="missing")
        self.next_seq += 1
        record["anomalies"] = list(record["anomalies"] or [])
        call_id = record["call_id"]
        if call_id is not None:
            if call_id in self._ids:
                record["anomalies"] = [*record["anomalies"], "duplicate_call_id"]
            self._ids.add(call_id)
        self._open.append(record)

    def reject(self, call_id: str | None) -> None:
        """Remember the id of a call that was quarantined, to say so of its result."""
        if call_id is not None:
            self._rejected.add(call_id)

    def answer(self, call_id: str | None) -> dict[str, Any] | None:
        """The oldest open call with this id (an id-less call for ``None``), now closed."""
        for position, record in enumerate(self._open):
            if record["call_id"] == call_id:
                del self._open[position]
                self._ready.append(record)
                if call_id is not None:
                    self._answered.add(call_id)
                return record
        return None

    def answer_oldest(self) -> dict[str, Any] | None:
        """The oldest open call, whatever its id: for results that name no call."""
        if not self._open:
            return None
        record = self._open.pop(0)
        self._ready.append(record)
        return record

    def unmatched_reason(self, call_id: str | None, kind: str) -> str:
        """Why a result for ``call_id`` matched no open call (for its quarantine entry)."""
        if call_id is None:
            return f"{kind} names no call id and no call is waiting for a result"
        if call_id in self._rejected and call_id not in self._ids:
            return f"{kind} for call id {call_id!r}, whose call was quarantined"
        if call_id in self._answered:
            return f"second {kind} for call id {call_id!r}; the first one is kept on the call"
        return f"{kind} for call id {call_id!r}, which no call in this run used"

    def flush(self, out: Sink, *, final: bool) -> None:
        """Emit answered calls (and, when ``final``, the open ones as missing), in order."""
        if final:
            self._ready.extend(self._open)
            self._open = []
        for record in sorted(self._ready, key=lambda r: r["seq"]):
            out.call(record)
        self._ready = []


class ConversationReader(Reader):
    """Base of the readers whose unit is a whole conversation (a message list, or an
    object holding one under ``messages`` / ``traj``) or a single message.

    Single messages make one run per file, unless they name their run (``run_id``,
    ``conversation_id``, ``session_id``); their calls stay open across units and the
    ones still open at the end of the file are stored as missing.
    """

    #: keys naming the run of a unit that holds a single message
    stream_id_keys: ClassVar[tuple[str, ...]] = ("run_id", "conversation_id", "session_id")

    def __init__(self, source_file: str) -> None:
        super().__init__(source_file)
        self.streams: dict[str, RunCalls] = {}

    @classmethod
    def splittable(cls, unit: Any) -> bool:
        return unwrap_conversation(unit) is not None  # whole conversations, not messages

    def feed(self, unit: Any, line: int, out: Sink) -> None:
        conversation = unwrap_conversation(unit)
        if conversation is None:
            single = self.single_message(unit)
            if single is None:
                raise BadRecord(
                    "expected a message list, an object with 'messages' or 'traj', or one message"
                )
            self._feed_single(unit, *single, line, out)
            return
        messages, wrapper, prefix = conversation
        fields = run_fields(wrapper)
        run_id = run_id_of(wrapper) or self.default_run_id(line)
        out.run(self.new_run(run_id=run_id, **fields))
        calls = RunCalls(run_id, fields)
        for index, message in enumerate(messages):
            pointer = f"{prefix}/{index}"
            if not isinstance(message, dict):
                out.quarantine(line, pointer, "message is not an object", message)
                continue
            self.message(calls, message, line, pointer, _time_of(message), out)
        calls.flush(out, final=True)

    def finish(self, out: Sink) -> None:
        for calls in self.streams.values():
            calls.flush(out, final=True)
        self.streams.clear()

    def open_call(
        self,
        calls: RunCalls,
        tool: Any,
        call_id: str | None,
        raw_arguments: Any,
        *,
        line: int,
        pointer: str,
        out: Sink,
        unnamed: tuple[str, Any],
        **fields: Any,
    ) -> None:
        """Add a call to ``calls`` to await its result; a call without a tool name is
        quarantined instead (``unnamed``: the reason and the item to show) and its id
        rejected, so that its result is not taken for another call's."""
        if not isinstance(tool, str) or not tool:
            calls.reject(call_id)
            out.quarantine(line, pointer, *unnamed)
            return
        raw, arguments, error = parse_arguments(raw_arguments)
        calls.add(
            self.new_call(
                source_line=line,
                source_pointer=pointer,
                call_id=call_id,
                tool=tool,
                arguments_raw=raw,
                arguments=arguments,
                arguments_error=error,
                **fields,
            )
        )

    def single_message(self, unit: Any) -> tuple[dict[str, Any], str | None] | None:
        """The message a unit holds on its own and its pointer in the unit (None: the unit
        is the message), or None when the unit is no message."""
        if isinstance(unit, dict) and isinstance(unit.get("role"), str):
            return unit, None
        return None

    def message(
        self,
        calls: RunCalls,
        message: dict[str, Any],
        line: int,
        pointer: str | None,
        at: datetime | None,
        out: Sink,
    ) -> None:
        """Read one message of the run ``calls``; ``at`` is its time, when the source has it."""
        raise NotImplementedError

    def _feed_single(
        self, unit: Any, message: dict[str, Any], pointer: str | None, line: int, out: Sink
    ) -> None:
        key = next((k for k in self.stream_id_keys if unit.get(k) not in (None, "")), None)
        run_id = as_str(unit[key]) if key else self.source_file.rsplit("/", 1)[-1]
        assert run_id is not None
        calls = self.streams.get(run_id)
        if calls is None:
            session = run_id if key is not None and key.startswith("session") else None
            calls = self.streams[run_id] = RunCalls(run_id, {"session_id": session})
            out.run(self.new_run(run_id=run_id, session_id=session, metadata={}))
        self.message(calls, message, line, pointer, _time_of(unit) or _time_of(message), out)
        calls.flush(out, final=False)


def _time_of(value: dict[str, Any]) -> datetime | None:
    return parse_time(value.get("timestamp", value.get("created_at")))
