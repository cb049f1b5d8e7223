"""Fault taxonomy and injection: the silent tool failures tracemine must catch, injected
into nominal traces with a ground-truth record for each, reproducibly from a seed.

>>> from tracemine.faults import inject, parse_classes
>>> faulty, truth = inject(runs, parse_classes("semantic"), rate=0.3, seed=1)  # doctest: +SKIP
>>> truth[0].fault_class, truth[0].path  # doctest: +SKIP
(<FaultClass.NEGATIVE_QUANTITY: 'negative_quantity'>, 'result.items[0].quantity')
"""

from tracemine.faults.files import InjectReport, ground_truth_path, inject_file
from tracemine.faults.inject import FaultRecord, inject, variants
from tracemine.faults.taxonomy import DESCRIPTIONS, FaultClass, FaultGroup, parse_classes

__all__ = [
    "DESCRIPTIONS",
    "FaultClass",
    "FaultGroup",
    "FaultRecord",
    "InjectReport",
    "ground_truth_path",
    "inject",
    "inject_file",
    "parse_classes",
    "variants",
]
