"""Stage 1: trace files in, DuckDB store out."""

from tracemine.ingest.pipeline import FileReport, IngestReport, Traces, ingest, read_traces
from tracemine.ingest.stats import StoreStats, stats

__all__ = ["FileReport", "IngestReport", "StoreStats", "Traces", "ingest", "read_traces", "stats"]
