"""Record tool calls into cassettes and replay them: recorded results as test fixtures.

Standard library only, like the monitor: it runs inside agent processes and test suites.

- :class:`Recorder` wraps Python tool functions (``recorder.guard()``) and MCP client
  sessions (``recorder.session(s)``); every call becomes a flat-format trace record, so a
  cassette is also a trace file ``tracemine ingest`` and ``tracemine check`` read.
- :class:`Player` answers from a cassette. A call is keyed by its tool and the hash of its
  canonical arguments (:func:`call_key`); a call the cassette cannot answer raises
  :class:`ReplayMiss` naming the nearest recorded key, never a live call (unless the record
  mode says so). Recorded errors are raised again. Cut-point replay sends chosen tools
  (``live={...}``) or every step from ``live_from_step`` to the live functions.
- The pytest plugin (``tracemine_cassette`` fixture, ``--record-mode``) is
  :mod:`tracemine.replay.pytest_plugin`.

>>> from tracemine.replay import Player, Recorder
>>> with Recorder("cassettes/run.jsonl") as recorder:  # doctest: +SKIP
...     get_order = recorder.guard()(get_order)
...     agent(get_order)
>>> with Player("cassettes/run.jsonl") as player:  # doctest: +SKIP
...     agent(player.guard("get_order")(get_order))   # answered from the cassette
"""

from __future__ import annotations

from tracemine.replay._canonical import call_key, canonical, canonical_text
from tracemine.replay._cassette import Cassette
from tracemine.replay._errors import (
    CassetteError,
    ReplayedProtocolError,
    ReplayedToolError,
    ReplayMiss,
)
from tracemine.replay._player import MODES, Player
from tracemine.replay._recorder import Recorder

for _public in (Cassette, CassetteError, Player, Recorder, ReplayMiss, ReplayedProtocolError,
                ReplayedToolError):  # fmt: skip
    _public.__module__ = __name__  # tracebacks name the public module

__all__ = [
    "MODES",
    "Cassette",
    "CassetteError",
    "Player",
    "Recorder",
    "ReplayMiss",
    "ReplayedProtocolError",
    "ReplayedToolError",
    "call_key",
    "canonical",
    "canonical_text",
]
