"""What every domain shares: the run recorder, the clock and value helpers.

Everything random goes through one ``random.Random`` per task and one per trial, seeded
from strings (``Random`` hashes a string seed with SHA-512, so it does not depend on
``PYTHONHASHSEED``). No wall clock: time is a synthetic clock that starts at a fixed epoch.
"""

from __future__ import annotations

import copy
import random
import string
from datetime import UTC, datetime, timedelta
from typing import Any

EPOCH = datetime(2024, 5, 1, 8, 0, tzinfo=UTC)
_ALNUM = string.ascii_letters + string.digits
_UPPER_ALNUM = string.ascii_uppercase + string.digits


def iso(moment: datetime) -> str:
    """ISO 8601 in UTC with milliseconds and a ``Z`` suffix."""
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )


def digits(rng: random.Random, count: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(count))


def token(rng: random.Random, count: int, alphabet: str = _ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(count))


def upper_token(rng: random.Random, count: int) -> str:
    return token(rng, count, _UPPER_ALNUM)


def hex_token(rng: random.Random, count: int) -> str:
    return token(rng, count, "0123456789abcdef")


def task_rng(seed: int, domain: str, index: int) -> random.Random:
    """The task's world (orders, documents, fares): shared by every trial of the task."""
    return random.Random(f"tracemine/{seed}/{domain}/{index}")


def trial_rng(seed: int, domain: str, index: int, trial: int) -> random.Random:
    """How one trial behaves (ordering, parallelism, retries, transient errors)."""
    return random.Random(f"tracemine/{seed}/{domain}/{index}/trial/{trial}")


class Recorder:
    """Records the calls of one run on a synthetic clock.

    Calls are plain dicts named like :class:`~tracemine.model.CallRecord` fields, so the
    writers and the fault injector handle simulated and ingested runs alike.
    """

    def __init__(self, rng: random.Random, start: datetime) -> None:
        self.rng = rng
        self.now = start
        self.started_at = start
        self.calls: list[dict[str, Any]] = []
        self.turn = 0

    def _new_call_id(self) -> str:
        # OpenAI-style ids; drawn from the trial's rng so they are reproducible
        return "call_" + token(self.rng, 24)

    def _think(self) -> None:
        self.now += timedelta(milliseconds=self.rng.randint(300, 2500))

    def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        result: Any,
        error: tuple[str, str] | None = None,
    ) -> Any:
        """One call in its own assistant turn; returns ``result`` for chaining."""
        self.batch([(tool, arguments, result, error)])
        return result

    def batch(self, items: list[tuple[str, dict[str, Any], Any, tuple[str, str] | None]]) -> None:
        """Calls the model issued together in one turn (parallel when more than one)."""
        self._think()
        start = self.now
        latest = start
        parallel = len(items) > 1
        for index, (tool, arguments, result, error) in enumerate(items):
            began = start + timedelta(milliseconds=index * self.rng.randint(1, 5))
            ended = began + timedelta(milliseconds=self.rng.randint(15, 450))
            latest = max(latest, ended)
            call: dict[str, Any] = {
                "seq": len(self.calls),
                "turn": self.turn,
                "parallel_index": index if parallel else None,
                "call_id": self._new_call_id(),
                "tool": tool,
                # copies: the task's world objects are shared by calls and trials, and a
                # consumer editing one call's payload must not edit another's
                "arguments": copy.deepcopy(arguments),
                "status": "ok",
                "result": copy.deepcopy(result),
                "error_type": None,
                "error_message": None,
                "started_at": iso(began),
                "ended_at": iso(ended),
            }
            if error is not None:
                call["status"] = "tool_error"
                call["error_type"], call["error_message"] = error
                call["result"] = {"error": {"code": error[0], "message": error[1]}}
            self.calls.append(call)
        self.now = latest
        self.turn += 1

    def finish(self) -> str:
        self._think()
        return iso(self.now)


def new_run(
    domain: str,
    index: int,
    trial: int,
    family: str,
    instruction: str,
    recorder: Recorder,
    final_text: str,
    reward: float,
) -> dict[str, Any]:
    """A run in the shape the writers take (see :mod:`tracemine.simulate`)."""
    task_id = f"{domain}-{index:04d}"
    ended_at = recorder.finish()
    return {
        "run_id": f"{task_id}.r{trial}",
        "task_id": task_id,
        "trial": trial,
        "family": f"{domain}.{family}",
        "reward": reward,
        "run_outcome": "success" if reward >= 1.0 else "failure",
        "instruction": instruction,
        "final_text": final_text,
        "started_at": iso(recorder.started_at),
        "ended_at": ended_at,
        "calls": recorder.calls,
    }


def run_start(index: int, trial: int) -> datetime:
    return EPOCH + timedelta(minutes=7 * index, hours=trial * 5)


def maybe_transient(rng: random.Random, chance: float) -> tuple[str, str] | None:
    """A legitimate transient failure that a well-behaved agent retries."""
    if rng.random() >= chance:
        return None
    return rng.choice(
        [
            ("upstream_timeout", "upstream service did not answer within 5s"),
            ("rate_limited", "too many requests; retry after 1s"),
        ]
    )


def with_retry(
    rec: Recorder, tool: str, arguments: dict[str, Any], result: Any, chance: float = 0.06
) -> Any:
    """Call, and when a transient error comes back, call again with the same arguments."""
    error = maybe_transient(rec.rng, chance)
    if error is not None:
        rec.call(tool, dict(arguments), None, error)
    return rec.call(tool, arguments, result)


def weighted(rng: random.Random, choices: list[tuple[Any, float]]) -> Any:
    values = [value for value, _ in choices]
    weights = [weight for _, weight in choices]
    return rng.choices(values, weights=weights, k=1)[0]
