"""Stage: declared constraints. OpenAPI 2.0/3.0/3.1, MCP ``tools/list``, function docs and
JSON Schema are loaded (:func:`load_spec`), mapped to tools (:func:`map_tools`), turned
into contracts (:func:`declared_contracts`) and merged with mined candidates
(:func:`merge`); :func:`merge_files` is ``tracemine merge`` as one call.

>>> spec = load_spec("api.yaml")  # doctest: +SKIP
>>> merged = merge(candidates, declared_contracts(spec), db="traces.duckdb")  # doctest: +SKIP
"""

from tracemine.openapi.declared import declared_contracts
from tracemine.openapi.load import Operation, Spec, load_spec
from tracemine.openapi.mapping import ToolMap, map_tools, read_mapping
from tracemine.openapi.merge import label_counts, merge
from tracemine.openapi.pipeline import MergeReport, merge_files
from tracemine.openapi.refs import SpecError

__all__ = [
    "MergeReport",
    "Operation",
    "Spec",
    "SpecError",
    "ToolMap",
    "declared_contracts",
    "label_counts",
    "load_spec",
    "map_tools",
    "merge",
    "merge_files",
    "read_mapping",
]
