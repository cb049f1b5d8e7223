"""``export``: reviewed contracts to the harnesses that run them."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from tracemine._atomic import remove_stale_temporaries, write_atomic
from tracemine.errors import InputError
from tracemine.export import (
    deepeval_metric,
    inspect_scorer,
    jsonschema,
    mcp,
    native,
    overlay,
    promptfoo,
    pytest_module,
)
from tracemine.export._base import Exported, ExportReport, Options, select_contracts
from tracemine.model.contract import ContractFile, load_contracts
from tracemine.review import ReviewFile, apply_review, is_stale, load_review, review_path

FORMATS: dict[str, ModuleType] = {
    "native": native,
    "jsonschema": jsonschema,
    "openapi-overlay": overlay,
    "pytest": pytest_module,
    "mcp": mcp,
    "deepeval": deepeval_metric,
    "promptfoo": promptfoo,
    "inspect": inspect_scorer,
}
"""Export targets by name; each module has ``export(contracts, source, out, options)``."""


def export_contracts(
    contracts: str | Path | ContractFile,
    format: str,
    out: str | Path,
    *,
    review: str | Path | ReviewFile | None = None,
    include_proposed: bool = False,
    spec: str | Path | None = None,
    mapping: str | Path | dict[str, Any] | None = None,
    traces: Sequence[str | Path] = (),
    write: bool = True,
) -> ExportReport:
    """Export the accepted contracts (and proposed ones with ``include_proposed``) to
    ``format``: ``native`` (the monitor's contract file), ``jsonschema`` (a directory of
    one schema per tool result), ``openapi-overlay`` (needs ``spec``; tools map to
    operationIds unless ``mapping`` says otherwise), ``pytest`` (a test module replaying
    ``traces``), ``mcp`` (each tool's ``outputSchema``, for ``tools/list``), ``deepeval``
    (a DeepEval metric module checking a test case's ``tools_called``), ``promptfoo`` (a
    promptfoo config: an assertion a contract over a run's call log, and a test a run of
    ``traces``) or ``inspect`` (an Inspect AI scorer module checking a sample's tool
    calls). Decisions come from ``review``, or from the review file beside a contracts
    path when there is one. The report lists every contract the target could
    not express, with the reason.

    >>> report = export_contracts("candidates.json", "jsonschema", "schemas/")  # doctest: +SKIP
    >>> [(u.id, u.reason) for u in report.unexpressed]  # doctest: +SKIP
    """
    target = FORMATS.get(format)
    if target is None:
        raise InputError(f"unknown export format {format!r}; choose from {', '.join(FORMATS)}")
    notes: list[str] = []
    if isinstance(contracts, ContractFile):
        source = contracts
    else:
        source = load_contracts(contracts)
        if review is None and review_path(contracts).exists():
            review = review_path(contracts)
    if review is not None:
        decisions = (
            review if isinstance(review, ReviewFile) else load_review(review, missing_ok=False)
        )
        source = apply_review(source, decisions)
        origin = "" if isinstance(review, ReviewFile) else f" from {review}"
        notes.append(f"applied {source.provenance['review']['applied']} review decisions{origin}")
    chosen = select_contracts(source, include_proposed)
    stale = [c.id for c in chosen if is_stale(c)]
    if stale:
        listed = ", ".join(stale[:5]) + (" …" if len(stale) > 5 else "")
        notes.append(f"{len(stale)} exported contracts were decided on evidence that has "
                     f"changed since: {listed}")  # fmt: skip
    if not chosen:
        notes.append("no contract is accepted; review them first or give --include-proposed")
    options = Options(
        spec=Path(spec) if spec is not None else None,
        mapping=Path(mapping) if isinstance(mapping, str | Path) else mapping,
        traces=[Path(t) for t in traces],
    )
    out_path = Path(out)
    run: Callable[..., Exported] = target.export
    exported = run(chosen, source, out_path, options)
    if write:
        # an export is the one writer of its output: a temporary file beside it from before
        # this write is a killed export's, and would otherwise stay there for good
        started = time.time()
        for path, text in exported.files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            remove_stale_temporaries(path, started)
            write_atomic(path, text)
    return ExportReport(
        format=format, out=str(out_path), files=[str(p) for p in exported.files],
        selected=len(chosen), exported=exported.exported, unexpressed=exported.unexpressed,
        notes=[*notes, *exported.notes],
    )  # fmt: skip
