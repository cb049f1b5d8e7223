"""tracemine: mine outcome contracts from known-good agent tool-call traces and check them.

The public API. Names load lazily, so ``import tracemine.monitor`` inside an agent
process pulls in neither DuckDB nor polars. Everything not in ``__all__`` is internal.

>>> import tracemine
>>> report = tracemine.ingest(["traces.jsonl"], "traces.duckdb")  # doctest: +SKIP

Some public functions share their name with the stage package that holds them
(``tracemine.ingest``, ``mine``, ``evaluate``, ``simulate``): on this module the
name always means the function. Reach a stage's modules with ``from tracemine.ingest
import store``, not ``import tracemine.ingest.store as store``.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    # errors
    "TracemineError": "tracemine.errors",
    "InputError": "tracemine.errors",
    "UnknownFormatError": "tracemine.errors",
    "TaskKeyError": "tracemine.errors",
    "StoreError": "tracemine.errors",
    "MemoryLimitError": "tracemine.errors",
    "ContractFileError": "tracemine.errors",
    "ShardFailed": "tracemine.errors",
    # model
    "CallRecord": "tracemine.model.trace",
    "RunRecord": "tracemine.model.trace",
    "QuarantineRecord": "tracemine.model.trace",
    "Status": "tracemine.model.trace",
    "Contract": "tracemine.model.contract",
    "ContractFile": "tracemine.model.contract",
    # ingest
    "ingest": "tracemine.ingest",
    "read_traces": "tracemine.ingest",
    "stats": "tracemine.ingest",
    "IngestReport": "tracemine.ingest",
    "FileReport": "tracemine.ingest",
    "StoreStats": "tracemine.ingest",
    "Traces": "tracemine.ingest",
    # the contract file
    "load_contracts": "tracemine.model.contract",
    "save_contracts": "tracemine.model.contract",
    "contract_file_schema": "tracemine.model.contract",
    # review
    "ReviewFile": "tracemine.review",
    "apply_review": "tracemine.review",
    "build_cards": "tracemine.review",
    "cards_html": "tracemine.review",
    "cards_json": "tracemine.review",
    "find_items": "tracemine.review",
    "contracts_frame": "tracemine.review",
    "coverage_chart": "tracemine.review",
    "decide": "tracemine.review",
    "evidence_frame": "tracemine.review",
    "filter_contracts": "tracemine.review",
    "find_contracts": "tracemine.review",
    "is_stale": "tracemine.review",
    "load_review": "tracemine.review",
    "load_reviewed": "tracemine.review",
    "review_path": "tracemine.review",
    "save_review": "tracemine.review",
    "summarise": "tracemine.review",
    "support_chart": "tracemine.review",
    # export
    "ExportReport": "tracemine.export",
    "export_contracts": "tracemine.export",
    # mine
    "mine": "tracemine.mine",
    "mine_sharded": "tracemine.engine",
    "ShardedMine": "tracemine.engine",
    # declared schemas and merge
    "load_spec": "tracemine.openapi",
    "declared_contracts": "tracemine.openapi",
    "merge": "tracemine.openapi",
    "merge_files": "tracemine.openapi",
    "MergeReport": "tracemine.openapi",
    # runtime
    "Monitor": "tracemine.monitor",
    "Receipt": "tracemine.monitor",
    "RunVerdict": "tracemine.monitor",
    "check": "tracemine.gate",
    # record, replay, incidents
    "Recorder": "tracemine.replay",
    "Player": "tracemine.replay",
    "ReplayMiss": "tracemine.replay",
    "incident": "tracemine.incident",
    "IncidentReport": "tracemine.incident",
    # evaluation
    "evaluate": "tracemine.evaluate",
    "EvaluationReport": "tracemine.evaluate",
    # data
    "simulate": "tracemine.simulate",
    "write_traces": "tracemine.simulate",
    "inject": "tracemine.faults",
    "FaultClass": "tracemine.faults",
}

__all__ = sorted([*_EXPORTS, "__version__"])


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tracemine' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return __all__


class _PublicModule(types.ModuleType):
    """Several public functions share their name with the stage that holds them
    (``tracemine.ingest`` the function, ``tracemine.ingest`` the package). Importing the
    package binds its name on this module; the public name must still mean the function,
    whatever was imported first."""

    def __getattribute__(self, name: str) -> Any:
        if name in _EXPORTS:
            return __getattr__(name)
        return super().__getattribute__(name)


sys.modules[__name__].__class__ = _PublicModule
