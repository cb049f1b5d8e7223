"""One value past what Python prints (a 5000-digit integer: ``str()`` raises past 4300
digits) must never silence the contracts beside it: each contract is judged on its own."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tracemine.model.contract import Contract
from tracemine.monitor import Monitor

HUGE = 10**5000


def _contracts() -> list[Contract]:
    def make(kind: str, path: str, **params: object) -> Contract:
        side = "args" if path.startswith("args") else "result"
        return Contract(tool="t", side=side, kind=kind, paths=[path], params=params,
                        status="accepted")  # fmt: skip

    return [
        make("range", "result.a", min=0, max=10),
        make("one_of", "result.s", values=["x", "y"]),
        make("range", "result.q", min=0, max=10),
        make("type", "result.b", type="string"),
        make("range", "args.n", min=0, max=10),
    ]


@pytest.mark.parametrize(
    ("args", "result", "failing"),
    [
        # the huge value breaks its own contract, and q = -5 breaks another
        ({"n": 1}, {"a": HUGE, "s": "x", "q": -5, "b": "z"}, {"result.a", "result.q"}),
        ({"n": 1}, {"a": 1, "s": HUGE, "q": -5, "b": "z"}, {"result.s", "result.q"}),
        ({"n": 1}, {"a": 1, "s": "x", "q": -5, "b": HUGE}, {"result.b", "result.q"}),
        ({"n": -HUGE}, {"a": 1, "s": "x", "q": -5, "b": "z"}, {"args.n", "result.q"}),
        # where no contract reads it, the huge value changes nothing
        ({"n": 1, "id": HUGE}, {"a": 1, "s": "x", "q": -5, "b": "z", "c": HUGE}, {"result.q"}),
    ],
)
def test_a_huge_integer_never_silences_the_other_contracts(
    make_monitor: Callable[..., Monitor], args: dict, result: dict, failing: set[str]
) -> None:
    monitor = make_monitor(*_contracts())
    for run in (None, monitor.start_run()):
        receipt = monitor.check("t", args, result, call_id="c1", run=run)
        assert {v.path for v in receipt.violations} == failing, receipt
        assert not any(u.contract_id == "*" for u in receipt.not_evaluated), receipt
        assert all(len(v.observed) <= 120 for v in receipt.violations)
