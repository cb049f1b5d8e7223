"""The CI gate: recorded traces replayed through the runtime monitor, a report of what
was violated and not evaluated, labels from an oracle, contracts whose verdict flips
between trials, and JUnit XML (:func:`check`; ``tracemine check`` on the command line)."""

from __future__ import annotations

from tracemine.gate.api import LABELS, CheckReport, check, label_run, load_oracle
from tracemine.gate.junit import junit_xml
from tracemine.gate.trials import NoisyContract, TrialsReport

__all__ = [
    "LABELS",
    "CheckReport",
    "NoisyContract",
    "TrialsReport",
    "check",
    "junit_xml",
    "label_run",
    "load_oracle",
]
