"""A call on its way through a recorder, and what an MCP session wrapper needs of one.

:class:`~tracemine.replay.Recorder` (and :class:`~tracemine.replay.Player`) number each
call as a :class:`Step`; the session wrapper of :mod:`tracemine.replay._session` hands its
calls to a :class:`Deck`, which a Recorder is, without knowing the Recorder itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(slots=True)
class Step:
    """One call on its way: its position, and the record answering it (``None``: live)."""

    seq: int
    tool: str
    arguments: dict[str, Any]
    recorded: int | None = None


class Deck(Protocol):
    """What answers a wrapped session's calls: a Recorder, or a Player replaying first."""

    def begin(self, tool: str, arguments: dict[str, Any]) -> Step:
        """Number the call and decide who answers it."""
        ...

    def replayed(self, step: Step) -> tuple[dict[str, Any], Any]:
        """The record answering a replayed ``step`` and a fresh copy of its result."""
        ...

    def keep_live(
        self,
        step: Step,
        started: float,
        result: Any = None,
        error: BaseException | None = None,
        status: str = "ok",
        raw: str | None = None,
    ) -> None:
        """Keep the record of a call the live tool answered."""
        ...
