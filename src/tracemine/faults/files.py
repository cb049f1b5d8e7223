"""Injecting faults into a trace file: read it with the ingest readers, inject, write it
back in the same format with the simulator's writers, and write the ground truth beside."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from pydantic import BaseModel

from tracemine._atomic import write_atomic
from tracemine.errors import InputError
from tracemine.faults.inject import inject
from tracemine.faults.taxonomy import FaultClass
from tracemine.ingest import read_traces
from tracemine.simulate.formats import FORMATS, runs_from_records, write_traces

_SUFFIXES = (".gz", ".jsonl", ".ndjson", ".json")


class InjectReport(BaseModel):
    """What :func:`inject_file` wrote."""

    source: str
    output: str
    ground_truth: str
    format: str
    runs: int
    calls: int
    faulted_runs: int
    faults: int
    by_class: dict[str, int]
    input_quarantined: int  # items the reader could not use; they are not in the output


def ground_truth_path(output: str | Path) -> Path:
    """``faulty.jsonl.gz`` → ``faulty.faults.jsonl``, in the same folder."""
    path = Path(output)
    name = path.name
    while name.endswith(_SUFFIXES):
        name = name[: name.rindex(".")]
    return path.with_name(f"{name}.faults.jsonl")


def inject_file(
    source: str | Path,
    output: str | Path,
    classes: list[FaultClass],
    rate: float = 0.2,
    seed: int = 0,
    format: str | None = None,
    output_format: str | None = None,
) -> InjectReport:
    """Inject faults into the traces in ``source`` and write them to ``output`` (in the
    source's format unless ``output_format`` is given) and the ground truth, one
    :class:`FaultRecord` a line, to :func:`ground_truth_path` of ``output``."""
    src, out = Path(source), Path(output)
    if src.resolve() == out.resolve():
        raise InputError(f"{out}: the output would overwrite the input; choose another path")
    traces = read_traces(src, format)
    target_format = output_format or traces.source_format
    if target_format not in FORMATS:
        known = ", ".join(FORMATS)
        raise InputError(
            f"{src}: cannot write {target_format!r} traces back; "
            f"choose an output format, one of: {known}"
        )
    runs = runs_from_records(traces.runs, traces.calls)
    faulty, records = inject(runs, classes, rate=rate, seed=seed)
    write_traces(faulty, out, target_format)
    truth = ground_truth_path(out)
    write_atomic(
        truth,
        "".join(json.dumps(r.model_dump(mode="json"), ensure_ascii=False) + "\n" for r in records),
    )
    counts = Counter(record.fault_class.value for record in records)
    return InjectReport(
        source=src.as_posix(),
        output=out.as_posix(),
        ground_truth=truth.as_posix(),
        format=target_format,
        runs=len(runs),
        calls=sum(len(run["calls"]) for run in runs),
        faulted_runs=len({record.run_id for record in records}),
        faults=len({record.fault_id for record in records}),
        by_class={c.value: counts[c.value] for c in FaultClass if counts[c.value]},
        input_quarantined=len(traces.quarantined),
    )
