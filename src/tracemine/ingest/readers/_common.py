"""Pieces two or more readers share (not a reader itself)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from tracemine.ingest.readers.base import (
    Reader,
    Sink,
    as_float,
    as_small_int,
    as_str,
    dumps,
    duration_ms,
)

_OUTCOME_KEYS = ("run_outcome", "outcome", "success", "passed", "label", "status")
_FAMILY_KEYS = ("family", "task_type", "task_family", "category", "domain")


def run_fields(wrapper: dict[str, Any]) -> dict[str, Any]:
    """Grouping fields found on a run's wrapper object (result files, call logs)."""
    raw_metadata = wrapper.get("metadata")
    metadata: dict[str, Any] = raw_metadata if isinstance(raw_metadata, dict) else {}
    merged: dict[str, Any] = {**metadata}
    for name, value in wrapper.items():
        if name != "metadata" and not isinstance(value, dict | list):
            merged[name] = value
    reward = as_float(merged.get("reward"))
    outcome = next((merged[k] for k in _OUTCOME_KEYS if merged.get(k) is not None), None)
    if outcome is None and reward is not None:
        outcome = as_str(merged.get("reward"))
    task_id = as_str(
        merged.get("task_id") if merged.get("task_id") is not None else merged.get("task")
    )
    return {
        "task_id": task_id,
        "task_id_source": "explicit" if task_id is not None else "none",
        "trial": as_small_int(merged.get("trial")),
        "session_id": as_str(merged.get("session_id")),
        "run_outcome": as_str(outcome),
        "reward": reward,
        "family": as_str(
            next((merged[k] for k in _FAMILY_KEYS if merged.get(k) is not None), None)
        ),
        "metadata": merged,
    }


class SeenIds:
    """Remembers (run, call id) pairs to flag duplicates, in bounded memory per entry."""

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: set[int] = set()

    def is_duplicate(self, run_id: str, call_id: str | None) -> bool:
        if call_id is None:
            return False
        marker = hash((run_id, call_id))
        if marker in self._seen:
            return True
        self._seen.add(marker)
        return False


# what the platform readers (LangSmith, Langfuse, Braintrust, Weave) look for in the
# metadata a run or a call carries
TASK_KEYS = ("task_id", "task.id", "tracemine.task_id")
THREAD_KEYS = ("session_id", "thread_id", "conversation_id")
RUN_KEYS = {
    name: (f"tracemine.{name}", name) for name in ("trial", "family", "reward", "run_outcome")
}
RUN_METADATA_CHARS = 20_000
"""A run's metadata past this is a blob that says nothing a run needs: only its sources stay."""


def first(found: dict[str, Any], keys: Iterable[str]) -> Any:
    """The first of ``keys`` that ``found`` holds a value for."""
    return next((found[k] for k in keys if found.get(k) is not None), None)


def platform_call(
    reader: Reader,
    *,
    line: int,
    pointer: str | None,
    own_id: str | None,
    node_id: str,
    status: str,
    started_at: datetime | None,
    ended_at: datetime | None,
    **fields: Any,
) -> dict[str, Any]:
    """A call of a platform's trace: its id is the tool call's own where the platform kept
    one (an exact pairing), else the id of the run, span or observation that holds it; a
    call no result came back to has no result id. Its run is decided at the end of the
    file (:meth:`TraceTree.emit`)."""
    call_id = own_id or node_id
    answered = status != "missing"
    return reader.new_call(
        source_line=line,
        source_pointer=pointer or None,
        run_id="",
        call_id=call_id,
        result_call_id=call_id if answered else None,
        id_pairing="exact" if own_id and answered else "inferred",
        status=status,
        started_at=started_at,
        ended_at=ended_at,
        duration_ms=duration_ms(started_at, ended_at),
        anomalies=[],
        **fields,
    )  # fmt: skip


def trace_run(
    reader: Reader,
    trace: str,
    metadata: dict[str, Any],
    *,
    id_source: str,
    task: tuple[str | None, str],
    session: str | None,
    extra: dict[str, Any] | None = None,
    reward: float | None = None,
    own_keys: Iterable[str] = (),
) -> dict[str, Any]:
    """The run record of a platform's trace from the metadata its members carry (merged,
    the root's first): trial, family, reward and outcome from ``RUN_KEYS``, the task as
    ``task`` (``(id, where it came from)``), its scalar metadata kept but for
    ``own_keys`` (a call's own, not its run's), then ``extra``. ``reward`` stands when
    the metadata names none."""
    task_id, task_from = task
    said = first(metadata, RUN_KEYS["reward"])
    skip = frozenset(own_keys)
    facts = {k: v for k, v in metadata.items()
             if isinstance(v, str | int | float | bool) and k not in skip}  # fmt: skip
    run_metadata: dict[str, Any] = {"run_id_source": id_source, **facts}
    if task_id is not None:
        run_metadata["task_id_from"] = task_from
    run_metadata.update(extra or {})
    if len(dumps(run_metadata)) > RUN_METADATA_CHARS:
        run_metadata = {"run_id_source": id_source, "task_id_from": task_from}
    return reader.new_run(
        run_id=trace,
        task_id=task_id,
        session_id=session,
        trial=as_small_int(first(metadata, RUN_KEYS["trial"])),
        family=as_str(first(metadata, RUN_KEYS["family"])),
        reward=as_float(said) if said is not None else reward,
        run_outcome=as_str(first(metadata, RUN_KEYS["run_outcome"])),
        metadata=run_metadata,
    )


class TraceTree:
    """The members of a platform's traces (runs, spans, observations, calls) by id: each
    one's parent, trace, the metadata it carries and one more fact of its own (a session,
    a reference example). A call's run is its trace, else the root of its parent chain.

    ``orphans_are_roots``: a member whose parent is not in the file is a root (Langfuse);
    otherwise the missing parent's id names the trace (LangSmith, Weave)."""

    __slots__ = ("members", "orphans_are_roots")

    def __init__(self, *, orphans_are_roots: bool = False) -> None:
        self.members: dict[str, tuple[str | None, str | None, dict[str, Any], Any]] = {}
        self.orphans_are_roots = orphans_are_roots

    def __contains__(self, member_id: object) -> bool:
        return member_id in self.members

    def add(
        self, member_id: str, parent: str | None, trace: str | None, metadata: dict[str, Any],
        fact: Any = None,
    ) -> None:  # fmt: skip
        self.members[member_id] = (parent, trace, metadata, fact)

    def _is_root(self, parent: str | None) -> bool:
        return parent is None or (self.orphans_are_roots and parent not in self.members)

    def root(self, member_id: str | None) -> str | None:
        """The root of a member, through its parents (bounded: a cycle stops)."""
        seen: set[str] = set()
        while member_id is not None and member_id not in seen:
            seen.add(member_id)
            parent = self.members.get(member_id, (None,))[0]
            if self._is_root(parent):
                return member_id
            member_id = parent
        return member_id

    def traces(self) -> dict[str, list[str]]:
        """Each trace's members, its roots first."""
        traces: dict[str, list[str]] = {}
        for member_id, (parent, trace, _, _) in self.members.items():
            found = traces.setdefault(trace or self.root(member_id) or member_id, [])
            if self._is_root(parent):
                found.insert(0, member_id)
            else:
                found.append(member_id)
        return traces

    def merged(
        self, members: Iterable[str], into: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], Any]:
        """The members' metadata merged (the first one's kept) over ``into``, and the
        first fact of their own that one of them has."""
        metadata = dict(into or {})
        fact = None
        for member in members:
            _, _, found, own = self.members[member]
            for key, value in found.items():
                metadata.setdefault(key, value)
            fact = fact or own
        return metadata, fact

    def emit(
        self,
        calls: list[dict[str, Any]],
        out: Sink,
        record_of: Callable[[str, list[str]], dict[str, Any]],
    ) -> None:
        """Each call in its run, then each run once (``record_of(trace, members)``), and
        forget the file. A call carries, until here, ``_trace``, ``_parent`` (where its
        root is looked for), ``_metadata`` (its own, for its task) and ``_thread``."""
        traces = self.traces()
        records: dict[str, dict[str, Any]] = {}
        for call in calls:
            parent = call.pop("_parent")
            trace = call.pop("_trace") or self.root(parent) or call["call_id"]
            own, thread = call.pop("_metadata"), call.pop("_thread")
            record = records.get(trace)
            if record is None:
                record = records[trace] = record_of(trace, traces.get(trace, []))
            task_id = as_str(first(own, TASK_KEYS)) or record["task_id"]
            call.update(run_id=trace, task_id=task_id, session_id=thread or record["session_id"])
            out.call(call)
        for record in records.values():
            out.run(record)
        calls.clear()
        self.members.clear()
