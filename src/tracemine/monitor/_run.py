"""One agent run as the monitor sees it, the run-level contracts, and the completeness gate.

An agent loop records each call as the model issues it and each result as it arrives::

    run = monitor.start_run("r1", declared=True)
    run.record_call("c1", "get_order", {"order_id": "#W1"})   # when the model asks
    receipt = monitor.check("get_order", args, result, call_id="c1", run=run)  # the result
    verdict = monitor.finalize(run)                            # before reporting "done"

``check(..., run=run)`` records the result itself; with ``declared=True`` a result whose id
was never declared with :meth:`Run.record_call` counts as an unknown id. Results may
arrive in any order: only ``requires_prior``, ``provenance`` and ``bounded_by`` look at the
order of calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from tracemine.model.paths import MISSING, evaluate, parse
from tracemine.model.result import is_error_payload, result_value
from tracemine.monitor._load import Spec
from tracemine.monitor._values import key, preview

ERROR_STATUSES = frozenset(("tool_error", "protocol_error", "timeout", "cancelled", "denied"))
Finding = tuple[str, str, str]  # path, expected, observed


class CallEntry:
    """One call of a run: what was asked, what came back, how often it was answered."""

    __slots__ = ("answers", "arguments", "call_id", "position", "result", "status", "tool")

    def __init__(self, call_id: str, tool: str, arguments: Any, position: int) -> None:
        self.call_id, self.tool, self.arguments, self.position = call_id, tool, arguments, position
        self.result: Any = None
        self.status: str | None = None
        self.answers = 0

    @property
    def succeeded(self) -> bool:
        return self.answers > 0 and self.status not in ERROR_STATUSES


class Run:
    """A recorder for one run. Cheap, standard library only; not thread-safe beyond the
    atomicity of list appends, so record from the thread that drives the loop."""

    def __init__(
        self, run_id: str | None = None, *, family: str | None = None, declared: bool = False
    ) -> None:
        self.run_id, self.family, self.declared = run_id, family, declared
        self.calls: list[CallEntry] = []
        self.duplicate_ids: list[str] = []
        self.unknown_ids: list[tuple[str, str | None]] = []
        self._by_id: dict[str, list[CallEntry]] = {}

    def record_call(self, call_id: str | None, tool: str, arguments: Any = None) -> str:
        """Note a call the model issued; returns its id (one is made up when it has none)."""
        cid = str(call_id) if call_id is not None else f"#{len(self.calls)}"
        entry = CallEntry(cid, str(tool), arguments, len(self.calls))
        known = self._by_id.setdefault(cid, [])
        if known:
            self.duplicate_ids.append(cid)
        known.append(entry)
        self.calls.append(entry)
        return cid

    def record_result(self, call_id: str | None, result: Any, status: str | None = "ok") -> None:
        """Note a result that came back under ``call_id`` (``status`` as in trace records),
        read as :meth:`Monitor.check` reads it: content text parsed, an error payload
        said to be ``ok`` a ``tool_error``."""
        self._answer(call_id, *seen(result, status))

    def _answer(self, call_id: Any, result: Any, status: str | None) -> CallEntry | None:
        entries = self._by_id.get(str(call_id)) if call_id is not None else None
        if not entries:
            self.unknown_ids.append((str(call_id), status))
            return None
        entry = next((e for e in entries if e.answers == 0), entries[0])
        if entry.answers == 0:
            entry.result, entry.status = result, status
        entry.answers += 1
        return entry

    def observe(self, call_id: Any, tool: str, arguments: Any, result: Any, status: Any) -> Any:
        """What ``Monitor.check(..., run=run)`` calls: the entry for this result."""
        known = call_id is not None and str(call_id) in self._by_id
        if not known and not self.declared:
            self.record_call(call_id, tool, arguments)
            call_id = self.calls[-1].call_id
        entry = self._answer(call_id, result, status)
        if entry is None:  # an unknown id: judge it against everything recorded so far
            entry = CallEntry(str(call_id), tool, arguments, len(self.calls))
            entry.result, entry.status, entry.answers = result, status, 1
        return entry

    @classmethod
    def from_calls(cls, calls: Iterable[dict[str, Any]], run_id: str | None = None) -> Run:
        """A run rebuilt from normalized call records (``tracemine.read_traces``)."""
        run = cls(run_id, declared=True)
        ordered = sorted(calls, key=_seq)
        for call in ordered:
            cid = run.record_call(call.get("call_id"), call.get("tool", "?"), call.get("arguments"))
            if call.get("status") != "missing":
                answered = call.get("result_call_id") or cid
                run.record_result(answered, call.get("result"), call.get("status"))
        return run


def seen(result: Any, status: Any) -> tuple[Any, Any]:
    """A result as contracts read it (:func:`~tracemine.model.result.result_value`) and
    the status it implies (an error payload said to be ``ok`` is a ``tool_error``)."""
    if result.__class__ is str:
        result = result_value(result)
    if status == "ok" and result.__class__ is dict and is_error_payload(result):
        status = "tool_error"
    return result, status


def _seq(call: dict[str, Any]) -> int:
    seq = call.get("seq")
    return seq if isinstance(seq, int) else 0


class RunCheck:
    """A compiled run-level contract: ``on_call`` judges one call against those before it,
    ``on_run`` the finished run. Both return a finding or ``None``."""

    __slots__ = ("on_call", "on_run", "spec")

    def __init__(
        self,
        spec: Spec,
        on_call: Callable[[Run, CallEntry], Finding | None] | None = None,
        on_run: Callable[[Run], Finding | None] | None = None,
    ) -> None:
        self.spec, self.on_call, self.on_run = spec, on_call, on_run


def _matches(pattern: str, tool: str) -> bool:
    return pattern in ("*", "") or pattern == tool


def _values(text: str, entry: CallEntry) -> list[Any]:
    return [v for v in evaluate(parse(text), entry.arguments, entry.result) if v is not MISSING]


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value


def compile_run_contract(spec: Spec) -> RunCheck:
    """Compile ``requires_prior``, ``provenance``, ``bounded_by`` and ``call_cap``
    (``expected_tools`` and ``completeness`` are applied by :func:`gate`)."""
    params = spec.params
    if spec.kind == "requires_prior":
        prior_tool, same = params["tool"], params.get("same") or []

        def requires_prior(run: Run, entry: CallEntry) -> Finding | None:
            priors = [e for e in run.calls[: entry.position] if e.tool == prior_tool]
            priors = [e for e in priors if e.succeeded]
            mine = _values(same[0], entry) if same else []
            if not mine:
                found = bool(priors)
                return None if found else ("(run)", f"an earlier {prior_tool} call", "none")
            want = key(mine[0])
            if any(want in {key(v) for v in _values(same[1], p)} for p in priors):
                return None
            return (same[0], f"an earlier {prior_tool} call with the same {same[1]}",
                    preview(mine[0]))  # fmt: skip

        return RunCheck(spec, on_call=requires_prior)
    if spec.kind == "provenance":
        arg, from_tool, from_path = spec.paths[0].text, params["from_tool"], params["from_path"]

        def provenance(run: Run, entry: CallEntry) -> Finding | None:
            mine = _values(arg, entry)
            if not mine:
                return None
            priors = [e for e in run.calls[: entry.position] if e.tool == from_tool]
            sources = {key(v) for p in priors if p.succeeded for v in _values(from_path, p)}
            for value in mine:
                if key(value) not in sources:
                    seen = "" if sources else f" (no earlier {from_tool} result)"
                    return arg, f"a value from an earlier {from_tool} {from_path}", (
                        preview(value) + seen)  # fmt: skip
            return None

        return RunCheck(spec, on_call=provenance)
    if spec.kind == "bounded_by":
        arg, from_tool, from_path = spec.paths[0].text, params["from_tool"], params["from_path"]
        source_path = parse(from_path)
        expected = f"at most an earlier {from_tool} {from_path}"

        def bounded_by(run: Run, entry: CallEntry) -> Finding | None:
            mine = _values(arg, entry)
            if not mine:
                return None
            # some earlier source bounds the value: the largest one bounds them all
            ceiling = None
            for prior in run.calls[: entry.position]:
                if prior.tool == from_tool and prior.succeeded:
                    for v in evaluate(source_path, prior.arguments, prior.result):
                        if _number(v) and (ceiling is None or v > ceiling):
                            ceiling = v
            for value in mine:
                if not _number(value):
                    return arg, f"a number {expected}", preview(value)
                if ceiling is None:
                    return arg, expected, f"{preview(value)} (no earlier {from_tool} result)"
                if value > ceiling:
                    return arg, expected, f"{preview(value)} > {preview(ceiling)}"
            return None

        return RunCheck(spec, on_call=bounded_by)
    if spec.kind == "call_cap":
        cap = params["max"]

        def count(run: Run, upto: int) -> Finding | None:
            n = sum(1 for e in run.calls[:upto] if _matches(spec.tool, e.tool))
            return None if n <= cap else ("(run)", f"at most {cap} {spec.tool} calls", str(n))

        return RunCheck(
            spec,
            on_call=lambda run, entry: count(run, entry.position + 1),
            on_run=lambda run: count(run, len(run.calls)),
        )
    return RunCheck(spec)
