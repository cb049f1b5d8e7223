"""Contract files built by hand with the model: every kind of row the review stage
shows (mined, declared, merged, conditional, run-level), with evidence."""

from __future__ import annotations

from tracemine.model.contract import (
    Contract,
    ContractFile,
    Counterexample,
    Evidence,
)


def evidence(tasks: int, violations: int = 0, *, counterexample: bool = False) -> Evidence:
    examples = [Counterexample(run_id="r7", task_id="t7", call_id="c3", seq=2,
                               observed="-1")] if counterexample else []  # fmt: skip
    return Evidence(calls=tasks * 3, tasks=tasks, folds=5, folds_proposed=5,
                    heldout_calls=tasks, heldout_violations=violations, fa_upper=0.05,
                    counterexamples=examples)  # fmt: skip


def sample_contracts() -> ContractFile:
    return ContractFile(contracts=[
        Contract(tool="get_order", side="result", kind="type", paths=["result.total"],
                 params={"type": "integer"}, evidence=evidence(30)),
        Contract(tool="get_order", side="result", kind="range", paths=["result.total"],
                 params={"min": 0, "max": 900}, evidence=evidence(30, 2, counterexample=True)),
        Contract(tool="get_order", side="result", kind="present", paths=["result.order_id"],
                 sources=["mined", "declared"], label="declared+observed", evidence=evidence(30)),
        Contract(tool="get_order", side="result", kind="one_of", paths=["result.status"],
                 params={"values": ["open", "done"]}, sources=["declared"],
                 label="declared-unexercised"),
        Contract(tool="search", side="result", kind="non_empty", paths=["result.hits"],
                 when={"path": "args.q", "op": "present"}, evidence=evidence(12)),
        Contract(tool="search", side="run", kind="call_cap", paths=[], params={"max": 4},
                 evidence=evidence(12)),
    ])  # fmt: skip
