"""Incidents become regression tests: the fewest contracts that separate one failing run
from the known-good ones, written as a contract fragment and a pytest module
(:func:`incident`; ``tracemine incident`` on the command line)."""

from __future__ import annotations

from tracemine.incident.api import incident
from tracemine.incident.report import IncidentReport, Separating

__all__ = ["IncidentReport", "Separating", "incident"]
