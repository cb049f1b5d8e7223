"""`incident` writes the contract that claims the least about known-good runs: a refund
larger than its order is told by ``bounded_by`` (refund <= order total), which a
legitimate partial refund keeps, not by ``provenance`` (refund = some line total), which
it breaks; the provenance is listed as an alternative, with the reason."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import tracemine
from tracemine.incident import incident


def _runs(path: Path, refunds: list[tuple[list[int], int]], reward: float) -> Path:
    lines = []
    for number, (totals, refund) in enumerate(refunds):
        order = {
            "order_id": f"o{number}",
            "total_cents": sum(totals),
            "lines": [{"sku": f"k{i}", "total_cents": t} for i, t in enumerate(totals)],
        }
        calls: list[tuple[str, dict[str, Any], Any]] = [
            ("get_order", {"order_id": f"o{number}"}, order),
            ("create_refund", {"order_id": f"o{number}", "amount_cents": refund},
             {"refund_id": f"R{number}", "status": "pending"}),
        ]  # fmt: skip
        for seq, (tool, arguments, result) in enumerate(calls):
            lines.append(json.dumps({
                "run_id": f"r{number}" if reward else "incident", "task_id": f"t{number // 2}",
                "trial": number % 2, "reward": reward, "seq": seq, "call_id": f"c{seq}",
                "tool": tool, "arguments": arguments, "status": "ok", "result": result}))  # fmt: skip
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_bound_is_written_over_the_provenance(tmp_path: Path) -> None:
    rng = random.Random(7)
    nominal = []
    for _ in range(24):  # every known-good refund gives back one whole line
        totals = [rng.randrange(100, 3000) for _ in range(rng.randrange(2, 4))]
        nominal.append((totals, rng.choice(totals)))
    db = tmp_path / "good.duckdb"
    tracemine.ingest([_runs(tmp_path / "good.jsonl", nominal, 1.0)], db)
    # a refund over the whole order (700 + 500), yet within the refunds seen before
    failing = _runs(tmp_path / "bad.jsonl", [([700, 500], 2500)], 0.0)
    report = incident(failing, "incident", db, tmp_path / "out")
    (written,) = report.separating
    assert (written.kind, written.paths) == ("bounded_by", ["args.amount_cents"])
    assert written.claim == "a bound, which any value within it keeps"
    provenance = [a for a in report.alternatives if a.kind == "provenance"]
    assert provenance, report.alternatives
    assert provenance[0].why_not == (
        "claims more of known-good runs than the bounded_by written: a set of values or a "
        "shape, which a value not seen before breaks"
    )
    assert all(a.why_not for a in report.alternatives)
