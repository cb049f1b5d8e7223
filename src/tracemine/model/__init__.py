"""Types shared by every stage. Loaded lazily: ``tracemine.model.paths`` is standard
library only and must stay importable without pydantic (the monitor uses it)."""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "CALL_FIELDS": "trace",
    "RUN_FIELDS": "trace",
    "CallRecord": "trace",
    "IdPairing": "trace",
    "QuarantineRecord": "trace",
    "RunRecord": "trace",
    "Status": "trace",
    "TaskIdSource": "trace",
    "Contract": "contract",
    "ContractFile": "contract",
    "ContractStatus": "contract",
    "Counterexample": "contract",
    "Decision": "contract",
    "Evidence": "contract",
    "Kind": "contract",
    "MergeLabel": "contract",
    "Predicate": "contract",
    "Recovery": "contract",
    "Side": "contract",
    "Source": "contract",
    "contract_id": "contract",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
