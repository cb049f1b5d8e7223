"""The fault classes: the silent failures of tool calls documented in the field, grouped as
completeness (did every call get its own answer, in time, without an error), structural
(is the payload shaped as always) and semantic (is a well-shaped payload right)."""

from __future__ import annotations

from enum import StrEnum

from tracemine.errors import InputError


class FaultGroup(StrEnum):
    COMPLETENESS = "completeness"
    STRUCTURAL = "structural"
    SEMANTIC = "semantic"


class FaultClass(StrEnum):
    """One kind of injected fault. The value is the name used on the command line and in
    ground-truth files."""

    MISSING_RESULT = "missing_result"
    DUPLICATE_CALL_ID = "duplicate_call_id"
    MISMATCHED_CALL_ID = "mismatched_call_id"
    REORDERED_RESULTS = "reordered_results"
    LATE_RESULT = "late_result"
    EXECUTION_ERROR = "execution_error"
    FIELD_OMITTED = "field_omitted"
    FIELD_NULL = "field_null"
    WRONG_TYPE = "wrong_type"
    NEGATIVE_QUANTITY = "negative_quantity"
    EMPTY_MATCH = "empty_match"
    TRUNCATED_LIST = "truncated_list"
    HTML_ERROR_PAGE = "html_error_page"
    UNIT_MISMATCH = "unit_mismatch"
    WRONG_ID = "wrong_id"
    STALE_VALUE = "stale_value"
    AMOUNT_FROM_ID = "amount_from_id"
    UNKNOWN_ENUM = "unknown_enum"

    @property
    def group(self) -> FaultGroup:
        return GROUPS[self]

    @property
    def description(self) -> str:
        return DESCRIPTIONS[self]


_C, _S, _M = FaultGroup.COMPLETENESS, FaultGroup.STRUCTURAL, FaultGroup.SEMANTIC
GROUPS: dict[FaultClass, FaultGroup] = {
    FaultClass.MISSING_RESULT: _C,
    FaultClass.DUPLICATE_CALL_ID: _C,
    FaultClass.MISMATCHED_CALL_ID: _C,
    FaultClass.REORDERED_RESULTS: _C,
    FaultClass.LATE_RESULT: _C,
    FaultClass.EXECUTION_ERROR: _C,
    FaultClass.FIELD_OMITTED: _S,
    FaultClass.FIELD_NULL: _S,
    FaultClass.WRONG_TYPE: _S,
    FaultClass.NEGATIVE_QUANTITY: _M,
    FaultClass.EMPTY_MATCH: _M,
    FaultClass.TRUNCATED_LIST: _M,
    FaultClass.HTML_ERROR_PAGE: _M,
    FaultClass.UNIT_MISMATCH: _M,
    FaultClass.WRONG_ID: _M,
    FaultClass.STALE_VALUE: _M,
    FaultClass.AMOUNT_FROM_ID: _M,
    FaultClass.UNKNOWN_ENUM: _M,
}
DESCRIPTIONS: dict[FaultClass, str] = {
    FaultClass.MISSING_RESULT: "a call whose result never came back",
    FaultClass.DUPLICATE_CALL_ID: "a call issued under the id of an earlier call",
    FaultClass.MISMATCHED_CALL_ID: "a result answered under an id no call has",
    FaultClass.REORDERED_RESULTS: "two results swapped, each under the other call's id",
    FaultClass.LATE_RESULT: "a result that arrived after the run's final answer",
    FaultClass.EXECUTION_ERROR: "a call that failed (error flagged) in a run reported done",
    FaultClass.FIELD_OMITTED: "a field left out of the result",
    FaultClass.FIELD_NULL: "a field that is null where it never was",
    FaultClass.WRONG_TYPE: "a value of another JSON type (number as string, object as text)",
    FaultClass.NEGATIVE_QUANTITY: "a quantity or amount made negative",
    FaultClass.EMPTY_MATCH: "an empty array where matches exist",
    FaultClass.TRUNCATED_LIST: "fewer items than the total the result reports",
    FaultClass.HTML_ERROR_PAGE: "an HTML error page served as the result",
    FaultClass.UNIT_MISMATCH: "an amount in the wrong unit (x100)",
    FaultClass.WRONG_ID: "the result for another id than the one requested",
    FaultClass.STALE_VALUE: "a value carried over from another task",
    FaultClass.AMOUNT_FROM_ID: "an amount read from an identifier's digits",
    FaultClass.UNKNOWN_ENUM: "an enum value never seen before",
}


def parse_classes(spec: str) -> list[FaultClass]:
    """Fault classes from ``all``, group names and class names, comma-separated, in the
    order of :class:`FaultClass` (so the same set always injects alike)."""
    wanted: set[FaultClass] = set()
    for raw in spec.split(","):
        name = raw.strip().lower().replace("-", "_")
        if not name:
            continue
        if name == "all":
            wanted.update(FaultClass)
        elif name in FaultGroup._value2member_map_:
            wanted.update(c for c in FaultClass if c.group == name)
        elif name in FaultClass._value2member_map_:
            wanted.add(FaultClass(name))
        else:
            known = ", ".join(["all", *FaultGroup, *FaultClass])
            raise InputError(f"unknown fault class {raw.strip()!r}; known: {known}")
    if not wanted:
        raise InputError("no fault class given; use 'all', a group or class names")
    return [c for c in FaultClass if c in wanted]
