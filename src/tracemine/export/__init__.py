"""Stage: export. Reviewed contracts to the harnesses that run them, one target a module:

    native.py          the contract file the monitor reads (only contracts to enforce)
    jsonschema.py      one JSON Schema 2020-12 per tool result
    mcp.py             each tool's MCP outputSchema, as tools/list declares it
    overlay.py         an OpenAPI Overlay 1.0 adding the contracts to the source spec
    pytest_module.py   a test module replaying recorded traces through the monitor
    promptfoo.py       a promptfoo config: an assertion a contract over a run's call log
    deepeval_metric.py a DeepEval metric checking a test case's tool calls
    inspect_scorer.py  an Inspect AI scorer checking a sample's tool calls and results

Every target reports the contracts it could not express instead of dropping them.

>>> report = export_contracts("candidates.json", "jsonschema", "out/")  # doctest: +SKIP
"""

from tracemine.export._base import ExportReport, Unexpressed, select_contracts
from tracemine.export.api import FORMATS, export_contracts
from tracemine.export.jsonschema import result_schema
from tracemine.export.overlay import apply_overlay, overlay_document

__all__ = [
    "FORMATS",
    "ExportReport",
    "Unexpressed",
    "apply_overlay",
    "export_contracts",
    "overlay_document",
    "result_schema",
    "select_contracts",
]
