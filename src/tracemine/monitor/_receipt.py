"""What the monitor hands back: a :class:`Receipt` per checked call, a :class:`RunVerdict`
per finished run. Plain data with ``to_dict()`` for logs, and ``note()`` — a short text an
agent loop can append to the tool message so the model sees what looked wrong.

A note begins with :data:`~tracemine.model.result.NOTE_MARK` (``[tracemine] ``) and is
always a trailer: :meth:`Receipt.annotate` puts it after a blank line, and every reader of
results (ingest, ``check``, the monitor itself) cuts it off again, so a conversation
exported with its notes is read as the same evidence as one without."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from tracemine.model.result import NOTE_MARK

_NOTE_VIOLATIONS = 3
# the contract kinds judged on the run so far rather than on one call's values alone
_RUN_KINDS = frozenset(("requires_prior", "provenance", "bounded_by", "call_cap", "expected_tools"))
_SIDES = ("arguments", "result", "run")


@dataclass(frozen=True, slots=True)
class Violation:
    """A contract that did not hold. ``observed`` is truncated and redacted."""

    contract_id: str
    kind: str
    tool: str
    path: str
    expected: str
    observed: str
    call_id: str | None = None

    def describe(self) -> str:
        return f"{self.path}: expected {self.expected}, got {self.observed}"

    @property
    def side(self) -> str:
        """What was found wrong: the call's ``arguments``, its ``result``, or how the call
        fits the ``run`` so far (a run-level contract)."""
        if self.kind in _RUN_KINDS:
            return "run"
        return "arguments" if self.path.startswith("args") else "result"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Unevaluated:
    """A contract the monitor could not judge on this call, and why."""

    contract_id: str
    kind: str
    reason: str


_HEADS = {
    "result": "This {tool} result may be wrong",
    "arguments": "The arguments of this {tool} call may be wrong",
    "run": "This {tool} call may not fit the earlier calls of the run",
}
_MIXED = "This {tool} call may be wrong"


@dataclass(slots=True)  # not frozen: a frozen __init__ costs a microsecond per check
class Receipt:
    """The outcome of checking one tool result.

    ``coverage`` is ``full`` (every contract of the tool was evaluated, or did not apply by
    its ``when``), ``partial`` (see ``not_evaluated``) or ``unknown`` (no contracts for the
    tool). The result itself is never part of the receipt and never changed.

    >>> receipt = monitor.check("get_order", {"order_id": "#W1"}, content)  # doctest: +SKIP
    >>> tool_message["content"] = receipt.annotate(content)  # doctest: +SKIP
    """

    tool: str
    call_id: str | None = None
    violations: tuple[Violation, ...] = ()
    coverage: str = "unknown"
    not_evaluated: tuple[Unevaluated, ...] = ()
    contracts: int = 0
    recovery_tools: tuple[str, ...] = ()
    hints: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """No contract was violated (coverage may still be partial or unknown)."""
        return not self.violations

    def note(self) -> str:
        """A line for the model, starting with ``[tracemine] `` (no blank line before it),
        or ``""`` when nothing looked wrong; it names what looked wrong: the arguments,
        the result, or the call within its run. To put it in a tool message use
        :meth:`annotate`."""
        if not self.violations:
            return ""
        shown = self.violations[:_NOTE_VIOLATIONS]
        sides = [side for side in _SIDES if any(v.side == side for v in shown)]
        if len(sides) == 1:
            found = "; ".join(v.describe() for v in shown)
        else:  # each finding says its side
            found = "; ".join(f"{v.side} {v.describe()}" for v in shown)
        more = len(self.violations) - _NOTE_VIOLATIONS
        head = (_HEADS[sides[0]] if len(sides) == 1 else _MIXED).format(tool=self.tool)
        lines = [f"{NOTE_MARK}{head}: {found}" + (f"; and {more} more." if more > 0 else ".")]
        if self.recovery_tools:
            lines.append("Consider calling: " + ", ".join(self.recovery_tools) + ".")
        lines.extend(hint for hint in self.hints[:2])
        lines.append("Verify before relying on it or reporting the task as done.")
        return " ".join(lines)

    def annotate(self, content: str) -> str:
        """The tool message content with the note after it: ``content`` itself when there
        is nothing to say, else ``content``, a blank line and :meth:`note`. The note is a
        trailer every reader of results cuts off, so the result stays the evidence.

        >>> tool_message["content"] = receipt.annotate(json.dumps(result))  # doctest: +SKIP
        """
        note = self.note()
        return f"{content}\n\n{note}" if note else content

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Gap:
    """Something the completeness gate found missing or doubtful in a run.

    ``code`` is one of ``unanswered``, ``answered_twice``, ``duplicate_id``, ``unknown_id``,
    ``execution_error``, ``required_tool``."""

    code: str
    message: str
    call_id: str | None = None
    tool: str | None = None


@dataclass(frozen=True, slots=True)
class RunVerdict:
    """The run-level outcome: ``complete`` only when every call was answered exactly once
    under its own id, no unknown or duplicate ids turned up, every execution error was
    followed by a successful call of the same tool, and every required tool was called.
    ``gaps`` name what is missing; ``errors`` lists every execution error, resolved or not;
    ``violations`` are the run-level contracts (prior calls, provenance, bounds, caps) that failed.

    >>> verdict = monitor.finalize(run)  # doctest: +SKIP
    >>> verdict.verdict, [g.message for g in verdict.gaps]  # doctest: +SKIP
    ('incomplete', ['call c2 (create_refund) was never answered'])
    """

    run_id: str | None
    verdict: str
    calls: int = 0
    gaps: tuple[Gap, ...] = ()
    errors: tuple[Gap, ...] = ()
    violations: tuple[Violation, ...] = ()
    not_evaluated: tuple[Unevaluated, ...] = field(default=())

    @property
    def complete(self) -> bool:
        return self.verdict == "complete"

    @property
    def ok(self) -> bool:
        """Complete and no run-level contract violated."""
        return self.complete and not self.violations

    def note(self) -> str:
        """A short text for the model before it declares the task done; ``""`` if ok."""
        if self.ok:
            return ""
        parts = [g.message for g in self.gaps[:_NOTE_VIOLATIONS]]
        parts += [v.describe() for v in self.violations[:_NOTE_VIOLATIONS]]
        head = "is incomplete" if not self.complete else "broke run-level contracts"
        return f"{NOTE_MARK}This run {head}: " + "; ".join(parts) + "."

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
