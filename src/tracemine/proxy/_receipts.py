"""What the proxy attaches to a checked ``tools/call`` result, and how the reader finds
it again.

The receipt goes in the result's ``_meta`` under :data:`RECEIPT_KEY` (``_meta`` is the
protocol's place for data about a message, MCP 2025-06-18 onwards): content and
``structuredContent`` stay byte for byte the server's. With ``--note``, a violated
contract's note is also appended as one last text content block, starting with
:data:`~tracemine.model.result.NOTE_MARK`, so a model that reads only the content sees it;
every reader of results drops that block again.
"""

from __future__ import annotations

from typing import Any

from tracemine.model.result import NOTE_MARK
from tracemine.monitor import Receipt

RECEIPT_KEY = "tracemine/receipt"


def receipt_meta(receipt: Receipt) -> dict[str, Any]:
    """The receipt as the JSON object put in ``_meta``: ``ok``, ``coverage``, how many
    contracts were checked, each violation's contract id, kind, path, expected and
    observed, and the note (``""`` when nothing looked wrong)."""
    return {
        "ok": receipt.ok,
        "coverage": receipt.coverage,
        "contracts": receipt.contracts,
        "violations": [
            {
                "contract_id": v.contract_id,
                "kind": v.kind,
                "path": v.path,
                "expected": v.expected,
                "observed": v.observed,
            }
            for v in receipt.violations
        ],
        "note": receipt.note(),
    }


def annotated(response: dict[str, Any], meta: dict[str, Any], note: bool) -> dict[str, Any]:
    """A copy of a ``tools/call`` response with the receipt in ``result._meta`` (and, with
    ``note``, the note as a last text block when there is one); ``response`` is not changed."""
    result = dict(response["result"])
    result["_meta"] = {**(result.get("_meta") or {}), RECEIPT_KEY: meta}
    content = result.get("content")
    if note and meta["note"] and isinstance(content, list):
        result["content"] = [*content, {"type": "text", "text": meta["note"]}]
    return {**response, "result": result}


def is_note_block(block: Any) -> bool:
    """A text content block the proxy added with ``--note``."""
    return (
        isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
        and block["text"].startswith(NOTE_MARK)
    )
