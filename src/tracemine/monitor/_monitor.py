"""The :class:`Monitor`: contracts compiled per tool on load, checked per call, advisory."""

from __future__ import annotations

import dataclasses
import logging
import sys
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path as FilePath
from typing import Any

from tracemine.model.paths import select
from tracemine.model.result import is_error_payload, result_value
from tracemine.monitor import _gate
from tracemine.monitor._codegen import generate
from tracemine.monitor._compile import Compiled, Fail, NotEvaluated, compile_call_contract
from tracemine.monitor._load import (
    RUN_LEVEL,
    WHOLE,
    ContractLoadError,
    Spec,
    parse_document,
    read_reviewed,
)
from tracemine.monitor._receipt import Receipt, RunVerdict, Unevaluated, Violation
from tracemine.monitor._run import CallEntry, Run, RunCheck, compile_run_contract
from tracemine.monitor._values import NOTHING, TooLarge, json_type, locate, preview, redact
from tracemine.monitor.hooks import guard

_OK_STATUSES = (None, "ok", "unknown")
_SLOW = object()
_UNKNOWN_NAMES = 100  # tools without contracts counted by name; past this, in one sum
_log = logging.getLogger("tracemine.monitor")
# a library's records go where the application's logging sends them, and nowhere (not to
# stderr by logging's last resort) when it configures none: ``check`` and ``evaluate``
# replay thousands of calls through monitors of their own and say coverage themselves
_log.addHandler(logging.NullHandler())


class ProposedContractsIgnored(UserWarning):
    """A contract file holds proposed contracts that the monitor does not enforce, and the
    caller did not say whether it should: pass ``include_proposed=True`` to enforce them, or
    ``include_proposed=False`` to say that only accepted contracts are meant."""


class _Plan:
    """What one tool's calls are checked against."""

    __slots__ = ("calls", "fast", "hot", "runs", "size")

    def __init__(self) -> None:
        # (test, when, needs_result, compiled): unpacked in the loop without attribute loads
        self.calls: list[tuple[Any, Any, bool, Compiled]] = []
        self.runs: list[RunCheck] = []
        self.size = 0
        self.fast: Callable[[Any, Any], Any] | None = None
        self.hot: Callable[[Any, Any], Any] | None = None  # fast, when no run-level contract


def _follow_schemas(specs: list[Spec]) -> list[Spec]:
    """Each contract folded into a schema of the file, with the schema's status: the
    schema is reviewed as one item, and its members are how it is checked."""
    statuses = {s.id: s.status for s in specs if s.kind in WHOLE}
    out = []
    for spec in specs:
        status = statuses.get(spec.folded_into or "")
        if status is not None and spec.status not in ("rejected", "muted"):
            spec = dataclasses.replace(spec, status=status)
        out.append(spec)
    return out


def _one_per_deviation(violations: list[Violation], by_id: dict[str, Spec]) -> list[Violation]:
    """``violations`` without those of a schema's members under a path where another
    member of the same schema failed: a string where an object was expected is one
    deviation, not one more for every key the object should have held."""
    failed: dict[str, list[str]] = {}
    for violation in violations:
        spec = by_id.get(violation.contract_id)
        if spec is not None and spec.folded_into and spec.paths:
            failed.setdefault(spec.folded_into, []).append(spec.paths[0].plain)
    if not failed:
        return violations
    out = []
    for violation in violations:
        spec = by_id.get(violation.contract_id)
        if spec is not None and spec.folded_into and spec.paths:
            path = spec.paths[0].plain
            if any(_under(path, other) for other in failed[spec.folded_into]):
                continue
        out.append(violation)
    return out


def _under(path: str, parent: str) -> bool:
    return len(path) > len(parent) and path.startswith(parent) and path[len(parent)] in ".[{"


class Monitor:
    """Checks tool results against a contract file, advisory: it never raises into the
    agent loop and never changes a result; it returns a :class:`Receipt`.

    Only contracts with status ``accepted`` are enforced unless ``include_proposed``;
    a contract ``implied_by`` another enforced one is skipped (it could only repeat it).
    A contract ``folded_into`` a schema follows the schema's status (unless it is rejected
    or muted itself): the schema's paths are checked by its members, one alarm per
    deviation naming the path, and the schema itself compiles to nothing.
    Proposed contracts left out are counted in ``ignored_proposed`` and said in
    ``notices``; when ``include_proposed`` is not given, they are also said once as a
    :class:`ProposedContractsIgnored` warning, since a file of proposed contracts only
    would otherwise check nothing without a word.
    On load each contract becomes a closure, and each tool's contracts one generated
    function that runs them inline; the closures explain what the generated code found.

    >>> monitor = Monitor.load("contracts.json")  # doctest: +SKIP
    >>> receipt = monitor.check("get_order", {"order_id": "#W1"}, {"items": []})  # doctest: +SKIP
    >>> receipt.ok, receipt.coverage, receipt.note()  # doctest: +SKIP
    """

    def __init__(
        self,
        specs: Iterable[Spec],
        *,
        include_proposed: bool | None = None,
        origin: str = "",
        reviewed: str | None = None,
        expected_errors: Iterable[str] = (),
    ) -> None:
        self.expected_errors = tuple(_gate.ExpectedError.parse(e) for e in expected_errors)
        """Errors a run may end a call with and still be complete (``TOOL=REGEX``, see
        :class:`~tracemine.monitor._gate.ExpectedError`); ValueError names a bad one."""
        specs = _follow_schemas(list(specs))
        statuses = ("accepted", "proposed") if include_proposed else ("accepted",)
        enforced = [s for s in specs if s.status in statuses]
        self.ignored_proposed = (
            0 if include_proposed else sum(s.status == "proposed" for s in specs)
        )
        self._notices: tuple[str, ...] = (reviewed,) if reviewed else ()
        self._origin = origin
        self.unknown_tools: dict[str, int] = {}
        """Calls checked of tools the file has no contracts for, by tool: their receipts
        say ``coverage='unknown'``, ``ok=True``; said once per tool (a log warning on
        ``tracemine.monitor``) and in :attr:`notices`."""
        if self.ignored_proposed:
            proposed = _proposed_notice(self.ignored_proposed, len(specs), origin)
            self._notices += (proposed,)
            if include_proposed is None:
                warnings.warn(proposed, ProposedContractsIgnored,
                              stacklevel=_caller_level())  # fmt: skip
        ids = {s.id for s in enforced}
        self.contracts = [s for s in enforced if not (s.implied_by and s.implied_by in ids)]
        self._by_id = {s.id: s for s in self.contracts}
        self._plans: dict[str, _Plan] = {}
        self._run_checks: list[RunCheck] = []
        self._expected_tools: list[Spec] = []
        for spec in self.contracts:
            try:
                self._add(spec)
            except (ContractLoadError, TypeError, ValueError, OverflowError, RecursionError) as exc:
                where = f"contract {spec.id} ({spec.tool}.{spec.kind})"
                raise ContractLoadError(f"{where}: {exc}") from None
        for plan in self._plans.values():
            if plan.calls:
                try:
                    plan.fast = generate([item[3] for item in plan.calls])
                except Exception:  # a shape the generator does not inline: closures do it
                    plan.fast = None
                plan.hot = None if plan.runs else plan.fast

    @property
    def notices(self) -> tuple[str, ...]:
        """What the monitor leaves unchecked, in words: proposed contracts not enforced,
        and the calls of tools it has no contracts for (counted as they come)."""
        if not self.unknown_tools:
            return self._notices
        calls = sum(self.unknown_tools.values())
        named = sorted(self.unknown_tools, key=lambda t: (-self.unknown_tools[t], t))
        shown = ", ".join(f"{t} ({self.unknown_tools[t]})" for t in named[:5])
        more = f" and {len(named) - 5} more" if len(named) > 5 else ""
        where = f"{self._origin}: " if self._origin else ""
        return (*self._notices,
                f"{where}{calls} calls of tools with no contracts were not checked "
                f"(coverage 'unknown'): {shown}{more}")  # fmt: skip

    def _unknown(self, tool: str) -> None:
        count = self.unknown_tools.get(tool)
        if count is not None:
            self.unknown_tools[tool] = count + 1
            return
        if len(self.unknown_tools) >= _UNKNOWN_NAMES:  # names from a loop: bounded
            tool = "(other tools)"
            self.unknown_tools[tool] = self.unknown_tools.get(tool, 0) + 1
            return
        self.unknown_tools[tool] = 1
        where = f" in {self._origin}" if self._origin else ""
        _log.warning("tool %s has no contracts%s: its calls are not checked "
                     "(coverage 'unknown'); said once", tool, where)  # fmt: skip

    def _add(self, spec: Spec) -> None:
        if spec.kind == "expected_tools":
            self._expected_tools.append(spec)
            return
        if spec.kind == "completeness":  # the gate always runs; nothing to compile
            return
        if spec.kind in WHOLE:  # checked by the contracts folded into it
            return
        plan = self._plans.setdefault(spec.tool, _Plan())
        plan.size += 1
        if spec.kind in RUN_LEVEL:
            check = compile_run_contract(spec)
            plan.runs.append(check)
            self._run_checks.append(check)
        else:
            compiled = compile_call_contract(spec)
            plan.calls.append((compiled.test, compiled.when, compiled.needs_result, compiled))

    @classmethod
    def load(
        cls,
        path: str | FilePath,
        *,
        include_proposed: bool | None = None,
        review: str | FilePath | None = None,
        expected_errors: Iterable[str] = (),
    ) -> Monitor:
        """Read and compile a contract file; :class:`ContractLoadError` names what is wrong
        (unknown ``schema_version``, a malformed contract, an unsafe pattern).

        The review decisions beside the file (``x.review.yaml`` for ``x.json``), or in
        ``review``, are applied first, as ``tracemine export`` applies them; where the
        mining stack that reads them is not installed, the load is refused with a line
        saying what to run (:func:`~tracemine.monitor._load.read_reviewed`).

        ``include_proposed``: enforce proposed contracts as well as accepted ones. Left
        unset, proposed contracts are not enforced and a :class:`ProposedContractsIgnored`
        warning says how many were left out.

        ``expected_errors``: errors a run may end a call with and still be complete,
        ``TOOL=REGEX`` (``*`` for any tool; the regex searched case-insensitively in the
        error's message), as ``tracemine check --allow-error`` takes them."""
        document, applied = read_reviewed(path, review)
        monitor = cls(
            parse_document(document, origin=str(path)),
            include_proposed=include_proposed,
            origin=str(path),
            reviewed=applied,
            expected_errors=expected_errors,
        )
        return monitor

    @classmethod
    def from_dict(
        cls,
        data: Any,
        *,
        include_proposed: bool | None = None,
        origin: str = "",
        reviewed: str | None = None,
        expected_errors: Iterable[str] = (),
    ) -> Monitor:
        """Like :meth:`load`, from an already parsed document (no review file is read);
        ``origin`` (the file it came from) names it in errors and warnings, ``reviewed``
        says which decisions were applied to it, in :attr:`notices`."""
        specs = parse_document(data, origin or "contract file")
        return cls(specs, include_proposed=include_proposed, origin=origin, reviewed=reviewed,
                   expected_errors=expected_errors)  # fmt: skip

    @property
    def tools(self) -> list[str]:
        """Tools that have enforced contracts."""
        return sorted(self._plans)

    def start_run(
        self, run_id: str | None = None, *, family: str | None = None, declared: bool = False
    ) -> Run:
        """A recorder for one run; pass it to :meth:`check` and then to :meth:`finalize`."""
        return Run(run_id, family=family, declared=declared)

    def check(
        self,
        tool: str,
        arguments: Any,
        result: Any,
        *,
        call_id: str | None = None,
        run: Run | None = None,
        status: str | None = "ok",
    ) -> Receipt:
        """Check one call's result. Never raises; the result is only read.

        ``result`` is the tool's answer as the model gets it (the tool message's content
        text) or already parsed: text is read as ingest reads it
        (:func:`tracemine.model.result.result_value`: a note trailer cut, JSON parsed).
        ``status`` is the call's status as in trace records (``ok``, ``tool_error`` …): a
        failed call's result is an error payload, so contracts reading the result are then
        reported as not evaluated; a result said to be ``ok`` that is an error payload
        (:class:`~tracemine.model.result.ErrorRule`) is a ``tool_error`` too. With
        ``run``, the call is recorded and the run-level contracts of this tool (prior
        calls, provenance, bounds, caps) are judged as well.

        >>> monitor.check("get_order", {"order_id": "#W1"}, result, call_id="c1")  # doctest: +SKIP
        """
        try:
            if result.__class__ is str:  # content text: the value ingest would have stored
                result = result_value(result)
            if status == "ok" and result.__class__ is dict and (
                "error" in result or "errors" in result or "detail" in result
                or "message" in result or "title" in result  # may_be_error, inline
            ) and is_error_payload(result):  # fmt: skip
                status = "tool_error"
            # the hot path, inline: a known tool, no run to record into, nothing failed
            plan = self._plans.get(tool) if tool.__class__ is str else None
            if plan is not None and run is None and status == "ok" and plan.hot is not None:
                try:
                    found = plan.hot(arguments, result)
                except Exception:  # _check goes contract by contract and says which broke
                    found = _SLOW
                if found is None:
                    cid = call_id if call_id is None or call_id.__class__ is str else _str(call_id)
                    return Receipt(tool, cid, (), "full", (), plan.size)
            return self._check(tool, arguments, result, call_id, run, status)
        except Exception as exc:  # advisory: whatever happens, the agent loop goes on
            reason = f"monitor error ({type(exc).__name__})"
            return Receipt(_str(tool) or "", _str(call_id), coverage="partial",
                           not_evaluated=(Unevaluated("*", "*", reason),))  # fmt: skip

    def _check(
        self, tool: Any, args: Any, result: Any, call_id: Any, run: Run | None, status: Any
    ) -> Receipt:
        entry = None
        if isinstance(run, Run):
            entry = run.observe(call_id, _str(tool) or "", args, result, status)
        plan = self._plans.get(tool) if isinstance(tool, str) else None
        if plan is None:
            name = _str(tool) or ""
            self._unknown(name)
            return Receipt(name, _str(call_id))
        violations: list[Violation] | None = None
        skipped: list[Unevaluated] | None = None
        found: Any = _SLOW
        if plan.fast is not None and status in _OK_STATUSES:
            try:
                found = plan.fast(args, result)
            except Exception:  # the closures below say which contract, and why
                found = _SLOW
            if found is None and not plan.runs:
                cid = call_id if call_id.__class__ is str else _str(call_id)
                return Receipt(tool, cid, (), "full", (), plan.size)
        if found is _SLOW:
            found = _evaluate(plan, args, result, status)
        for index, item in found or ():
            compiled = plan.calls[index][3]
            if isinstance(item, Fail):
                try:
                    violation = _violation(compiled, item, args, result, call_id)
                except Exception as exc:  # the contract failed; only saying how did not work
                    violation = _bare_violation(compiled, item, call_id, exc)
                violations = [*violations, violation] if violations else [violation]
            else:
                reason = _failure(item)
                skipped = _skip(skipped, compiled.spec, reason)
        if violations and len(violations) > 1:
            violations = _one_per_deviation(violations, self._by_id)
        for check in plan.runs:
            violations, skipped = _run_check(check, run, entry, call_id, violations, skipped)
        if not violations:
            if skipped is None:
                return Receipt(tool, call_id if call_id.__class__ is str else _str(call_id),
                               (), "full", (), plan.size)  # fmt: skip
            return Receipt(tool, _str(call_id), (), "partial", tuple(skipped), plan.size)
        specs = [self._by_id.get(v.contract_id) for v in violations]
        tools = tuple(dict.fromkeys(t for s in specs if s for t in s.recovery_tools))
        hints = tuple(dict.fromkeys(s.hint for s in specs if s and s.hint))
        return Receipt(tool, _str(call_id), tuple(violations), "partial" if skipped else "full",
                       tuple(skipped or ()), plan.size, tools, hints)  # fmt: skip

    def finalize(self, run: Run | Iterable[dict[str, Any]]) -> RunVerdict:
        """The run-level verdict: the completeness gate plus the run-level contracts.
        ``run`` is a :class:`Run` or the run's normalized call records. Never raises.

        >>> monitor.finalize(run).verdict  # doctest: +SKIP
        'complete'
        """
        try:
            if not isinstance(run, Run):
                run = Run.from_calls(run)
            return _gate.finalize(run, self._run_checks, self._expected_tools,
                                  self.expected_errors)  # fmt: skip
        except Exception as exc:
            reason = f"monitor error ({type(exc).__name__})"
            run_id = run.run_id if isinstance(run, Run) else None
            return RunVerdict(run_id, "incomplete",
                              not_evaluated=(Unevaluated("*", "*", reason),))  # fmt: skip

    def guard(self, tool: str | None = None, **options: Any) -> Callable[..., Any]:
        """Decorator for a Python tool function; see :func:`tracemine.monitor.hooks.guard`."""
        return guard(self, tool, **options)


def _proposed_notice(ignored: int, total: int, origin: str) -> str:
    where = f"{origin}: " if origin else ""
    return (
        f"{where}{ignored} of {total} contracts are proposed and not enforced (the monitor "
        "enforces accepted contracts); to enforce them pass include_proposed=True "
        "(--include-proposed for tracemine check and tracemine mcp wrap), or accept them "
        "with tracemine review accept"
    )


def _caller_level() -> int:
    """The ``stacklevel`` of the first frame outside the monitor, so that a warning points
    at the caller's line whichever constructor it came through."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith("tracemine.monitor"):
        frame, level = frame.f_back, level + 1  # type: ignore[assignment]
    return level


def _str(value: Any) -> str | None:
    """Text for a receipt of what the caller passed; an object whose ``__str__`` raises
    is named by its type, so the receipt still comes back."""
    if value is None:
        return None
    try:
        return str(value)[:200]
    except Exception:
        return f"<{type(value).__name__}>"


def _evaluate(plan: _Plan, args: Any, result: Any, status: Any) -> list[tuple[int, Any]]:
    """The reference path, contract by contract (failed calls, or the fast path broke)."""
    found: list[tuple[int, Any]] = []
    failed = status not in _OK_STATUSES
    for index, (test, when, needs_result, _) in enumerate(plan.calls):
        if failed and needs_result:
            found.append((index, NotEvaluated(f"the call ended with {status}")))
            continue
        try:
            if when is not None and not when(args, result):
                continue  # does not apply to this call: evaluated, holds
            fail = test(args, result)
            if fail is not None:
                found.append((index, fail))
        except Exception as exc:  # NotEvaluated, or a contract breaking on odd input
            found.append((index, exc))
    return found


def _failure(exc: BaseException) -> str:
    if isinstance(exc, NotEvaluated | TooLarge):  # they say why themselves
        return str(exc)
    return f"evaluation failed ({type(exc).__name__})"


def _skip(skipped: list[Unevaluated] | None, spec: Spec, reason: str) -> list[Unevaluated]:
    item = Unevaluated(spec.id, spec.kind, reason)
    return [*skipped, item] if skipped else [item]


def _violation(compiled: Compiled, fail: Fail, args: Any, result: Any, call_id: Any) -> Violation:
    spec, path = compiled.spec, fail.path
    where = path.text if fail.index is None else locate(path, args, result, fail.index)
    if fail.text:
        observed = redact(fail.text)[:120]
    elif fail.observed is NOTHING:
        parent = path.parent
        above = select(parent, args, result) if parent is not None else []
        name = parent.text if parent else path.root
        observed = f"unreachable ({name} is {_a(json_type(above[0])) if above else 'absent'})"
    else:
        observed = preview(fail.observed)
        if spec.kind == "type":
            observed += f" ({json_type(fail.observed)})"
    return Violation(spec.id, spec.kind, spec.tool, where, compiled.expected, observed,
                     _str(call_id))  # fmt: skip


def _bare_violation(compiled: Compiled, fail: Fail, call_id: Any, exc: Exception) -> Violation:
    """A violation whose value or place could not be rendered: still reported, with the
    path as written, so that one odd value never hides that its contract failed."""
    spec = compiled.spec
    observed = f"<a {type(fail.observed).__name__} that could not be shown: {type(exc).__name__}>"
    return Violation(spec.id, spec.kind, spec.tool, fail.path.text, compiled.expected, observed,
                     _str(call_id))  # fmt: skip


def _a(type_name: str) -> str:
    if type_name == "null":
        return "null"
    return ("an " if type_name[0] in "aeiou" else "a ") + type_name


def _run_check(
    check: RunCheck,
    run: Run | None,
    entry: CallEntry | None,
    call_id: Any,
    violations: list[Violation] | None,
    skipped: list[Unevaluated] | None,
) -> tuple[list[Violation] | None, list[Unevaluated] | None]:
    spec = check.spec
    if run is None or entry is None or check.on_call is None:
        return violations, _skip(skipped, spec, "run-level: pass run= to check it per call")
    try:
        finding = check.on_call(run, entry)
    except Exception as exc:
        return violations, _skip(skipped, spec, _failure(exc))
    if finding is None:
        return violations, skipped
    path, expected, observed = finding
    violation = Violation(spec.id, spec.kind, spec.tool, path, expected, redact(observed),
                          _str(call_id))  # fmt: skip
    return [*(violations or []), violation], skipped
