"""``native``: the contract file the monitor reads, holding only the contracts to enforce.

Every contract is compiled by the monitor on the way out: one it would refuse (an unsafe
pattern, say) is reported and left out, since the monitor refuses a whole file for one
bad contract."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tracemine.export._base import Exported, Options
from tracemine.model.contract import SCHEMA_VERSION, Contract, ContractFile, ContractStatus
from tracemine.monitor import ContractLoadError, Monitor


def monitor_problem(contract: Contract) -> str | None:
    """Why the monitor would refuse ``contract``, or ``None``."""
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "contracts": [contract.model_dump(mode="json", include={"id", "tool", "side", "kind",
                                                                 "paths", "params", "when"})],
    }  # fmt: skip
    document["contracts"][0]["status"] = "accepted"
    try:
        Monitor.from_dict(document)
    except ContractLoadError as exc:
        return str(exc).split(": ", 1)[-1]
    return None


def native_file(contracts: list[Contract], source: ContractFile) -> tuple[ContractFile, Exported]:
    """The enforced subset of ``source`` as a contract file, and what was left out."""
    result = Exported()
    kept = []
    for contract in contracts:
        problem = monitor_problem(contract)
        if problem:
            result.skip(contract, f"the monitor refuses it: {problem}")
        else:
            kept.append(contract)
    ids = {c.id for c in kept}
    # an implication pointing outside the file would only confuse readers
    kept = [
        c.model_copy(update={"implied_by": None}) if c.implied_by and c.implied_by not in ids
        else c
        for c in kept
    ]  # fmt: skip
    # a member of a schema left out is enforced on its own status, as before schemas
    kept = [c.model_copy(update={"folded_into": None})
            if c.folded_into and c.folded_into not in ids else c for c in kept]  # fmt: skip
    proposed = sum(c.status == ContractStatus.PROPOSED for c in kept)
    export: dict[str, Any] = {"format": "native", "contracts": len(kept)}
    if proposed:
        # said in the file too: whoever loads it later did not see the export's output
        export["monitor"] = (
            f"{proposed} of {len(kept)} contracts are proposed: the monitor enforces them "
            "only with include_proposed=True (tracemine check --include-proposed); without "
            "it they are left out and Monitor.load warns"
        )
        result.notes.append(f"{proposed} proposed contracts exported as proposed: "
                            + export["monitor"].split(": ", 1)[1])  # fmt: skip
    provenance = {**source.provenance, "export": export}
    out = ContractFile(generated_at=datetime.now(UTC), provenance=provenance, contracts=kept)
    result.exported = len(kept)
    return out, result


def module_beside_data(
    contracts: list[Contract], source: ContractFile, out: Path, template: str, symbol: str
) -> Exported:
    """A generated module at ``out`` whose contracts are the native file beside it
    (``out`` with ``.json``), so its source holds no value from a trace: ``template`` is
    formatted with the data file's name and whether proposed contracts are enforced, and
    ``symbol`` is what a user imports from the module."""
    native, result = native_file(contracts, source)
    result.notes = [n for n in result.notes if "include_proposed" not in n]
    if not out.name.endswith(".py") or not out.stem.isidentifier():
        result.notes.append(f"{out.name}: name it like a module (tracemine_{symbol.lower()}.py)"
                            f" to import {symbol} from it")  # fmt: skip
    include = any(c.status == ContractStatus.PROPOSED for c in native.contracts)
    data = out.with_suffix(".json")
    result.files[out] = template.format(data=data.name, include_proposed=include)
    result.files[data] = native.model_dump_json(indent=2) + "\n"
    return result


def export(
    contracts: list[Contract], source: ContractFile, out: Path, options: Options
) -> Exported:
    """Write the monitor's contract file to ``out``."""
    native, result = native_file(contracts, source)
    result.files[out] = native.model_dump_json(indent=2) + "\n"
    return result
