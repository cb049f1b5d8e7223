"""The completeness gate and the run-level contracts applied when a run ends.

A run is ``complete`` only when the evidence is: every call answered exactly once under its
own id, no duplicate or unknown ids, every execution error followed by a successful call of
the same tool (a retry) or one the caller said to expect (:class:`ExpectedError`: "order
not found" is the right answer to a question about an order that does not exist), and every
tool an ``expected_tools`` contract requires called with success. Nothing here depends on
the order results arrived in.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from tracemine.monitor._load import Spec
from tracemine.monitor._receipt import Gap, RunVerdict, Unevaluated, Violation
from tracemine.monitor._run import ERROR_STATUSES, CallEntry, Run, RunCheck, _matches
from tracemine.monitor._values import redact


class ExpectedError:
    """An error a run may end a call with and still be complete, written ``TOOL=REGEX``:
    a call of ``TOOL`` (``*`` for any tool) that ended in error with a message in which
    ``REGEX`` is found (case-insensitive). ``TOOL`` alone expects any error of that tool.

    >>> ExpectedError.parse("get_order=not found")  # doctest: +SKIP
    """

    __slots__ = ("pattern", "text", "tool")

    def __init__(self, text: str, tool: str, pattern: re.Pattern[str] | None) -> None:
        self.text, self.tool, self.pattern = text, tool, pattern

    @classmethod
    def parse(cls, text: str) -> ExpectedError:
        """``TOOL=REGEX`` or ``TOOL``; ValueError saying what is wrong."""
        tool, _, regex = str(text).partition("=")
        tool = tool.strip()
        if not tool:
            raise ValueError(f"expected error {text!r}: give TOOL=REGEX (TOOL may be *), "
                             "as in get_order=not found")  # fmt: skip
        try:
            pattern = re.compile(regex, re.IGNORECASE) if regex else None
        except re.error as exc:
            raise ValueError(f"expected error {text!r}: {regex!r} is not a regular "
                             f"expression ({exc})") from None  # fmt: skip
        return cls(str(text), tool, pattern)

    def matches(self, entry: CallEntry) -> bool:
        if self.tool != "*" and self.tool != entry.tool:
            return False
        return self.pattern is None or self.pattern.search(_error_text(entry.result)) is not None


def _error_text(result: Any) -> str:
    """The message an error result carries: the text itself, the usual fields of an error
    payload (``error``, ``message``, ``detail``, ``title``; MCP's text content blocks), or
    else the whole result as JSON; bounded."""
    parts: list[str] = []

    def take(value: Any, depth: int = 0) -> None:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, dict) and depth < 3:
            for name in ("error", "message", "detail", "title", "errors", "text", "content"):
                if name in value:
                    take(value[name], depth + 1)
        elif isinstance(value, list) and depth < 3:
            for item in value[:20]:
                take(item, depth + 1)

    take(result)
    if not parts:
        try:
            parts.append(json.dumps(result, default=str)[:10_000])
        except (TypeError, ValueError, RecursionError):
            parts.append(repr(type(result)))
    return " ".join(parts)[:10_000]


def gate(run: Run, expected: Sequence[ExpectedError] = ()) -> tuple[list[Gap], list[Gap]]:
    """Gaps that make the run incomplete, and every execution error (resolved or not)."""
    gaps: list[Gap] = []
    errors: list[Gap] = []
    for entry in run.calls:
        if entry.answers == 0:
            message = f"call {entry.call_id} ({entry.tool}) was never answered"
            gaps.append(Gap("unanswered", message, entry.call_id, entry.tool))
        elif entry.answers > 1:
            message = f"call {entry.call_id} ({entry.tool}) was answered {entry.answers} times"
            gaps.append(Gap("answered_twice", message, entry.call_id, entry.tool))
        if entry.answers and entry.status in ERROR_STATUSES:
            retried = any(
                later.tool == entry.tool and later.succeeded
                for later in run.calls[entry.position + 1 :]
            )
            message = f"call {entry.call_id} ({entry.tool}) ended with {entry.status}"
            allowed = None if retried else next((e for e in expected if e.matches(entry)), None)
            said = ", retried" if retried else ""
            if allowed is not None:
                said = f", as expected ({allowed.text})"
            errors.append(Gap("execution_error", message + said, entry.call_id, entry.tool))
            if not retried and allowed is None:
                gaps.append(Gap("execution_error", message + " and was not retried with success",
                                entry.call_id, entry.tool))  # fmt: skip
    for cid in dict.fromkeys(run.duplicate_ids):
        gaps.append(Gap("duplicate_id", f"call id {cid} was used by more than one call", cid))
    for cid, status in run.unknown_ids:
        gaps.append(Gap("unknown_id", f"a result ({status or 'no status'}) came back for "
                        f"unknown call id {cid}", cid))  # fmt: skip
    return gaps, errors


def expected_tools(spec: Spec, run: Run) -> tuple[list[Gap], list[Violation], str | None]:
    """Required tools not called (gaps), forbidden tools called (violations), or the
    reason the contract does not apply / cannot be judged."""
    family = spec.params.get("family")
    if family is not None and run.family != family:
        return [], [], (None if run.family is not None else "the run has no family")
    gaps = []
    for tool in spec.params.get("required", []):
        if not any(e.tool == tool and e.succeeded for e in run.calls):
            message = f"{tool} was never called successfully (contract {spec.id})"
            gaps.append(Gap("required_tool", message, tool=tool))
    violations = []
    for tool in spec.params.get("forbidden", []):
        called = next((e for e in run.calls if e.tool == tool), None)
        if called is not None:
            violations.append(Violation(spec.id, spec.kind, tool, "(run)", f"no {tool} call",
                                        "called", called.call_id))  # fmt: skip
    return gaps, violations, None


def finalize(run: Run, checks: Iterable[RunCheck], specs: Iterable[Spec],
             expected: Sequence[ExpectedError] = ()) -> RunVerdict:  # fmt: skip
    """Apply the gate, the ``expected_tools`` specs and the compiled run checks."""
    gaps, errors = gate(run, expected)
    violations: list[Violation] = []
    unevaluated: list[Unevaluated] = []
    for spec in specs:
        more_gaps, more_violations, reason = expected_tools(spec, run)
        gaps += more_gaps
        violations += more_violations
        if reason:
            unevaluated.append(Unevaluated(spec.id, spec.kind, reason))
    for check in checks:
        spec = check.spec
        try:
            if check.on_run is not None:
                finding = check.on_run(run)
                if finding:
                    violations.append(_violation(spec, finding, None))
                continue
            assert check.on_call is not None
            for entry in run.calls:
                if _matches(spec.tool, entry.tool):
                    finding = check.on_call(run, entry)
                    if finding:
                        violations.append(_violation(spec, finding, entry.call_id))
        except Exception as exc:  # a contract that breaks is reported, never raised
            unevaluated.append(Unevaluated(spec.id, spec.kind, _failure(exc)))
    return RunVerdict(
        run_id=run.run_id, verdict="incomplete" if gaps else "complete", calls=len(run.calls),
        gaps=tuple(gaps), errors=tuple(errors), violations=tuple(violations),
        not_evaluated=tuple(unevaluated),
    )  # fmt: skip


def _violation(spec: Spec, finding: tuple[str, str, str], call_id: str | None) -> Violation:
    path, expected, observed = finding
    return Violation(spec.id, spec.kind, spec.tool, path, expected, redact(observed), call_id)


def _failure(exc: Any) -> str:
    return f"evaluation failed ({type(exc).__name__})"
