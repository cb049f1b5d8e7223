"""``tracemine.model.result``: what a result is (text read as JSON when it is JSON, a note
trailer cut) and when it is an error, the same for ingest and the monitor."""

from __future__ import annotations

import json

import pytest

from tracemine.ingest.readers.base import parse_result_text
from tracemine.model.result import ErrorRule, result_value, strip_note
from tracemine.simulate import DOMAINS, WIDE_DOMAINS, simulate

from helpers import heavy_imports

NOTE = "[tracemine] This get_order result may be wrong: result.items: expected non-empty, got []."


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("918.43", 918.43),
        (" -3", -3),
        ('{"a": 1}', {"a": 1}),
        ("\n[1, 2]", [1, 2]),
        ("not json", "not json"),
        ("{not json", "{not json"),
        ("12 apples", "12 apples"),
        ('"quoted"', '"quoted"'),  # a JSON string stays the text it was
        ("null", None),  # json.dumps of a tool that returned None
        (" true\n", True),
        ("false", False),
        ("null and void", "null and void"),
        ("nullable", "nullable"),
        ("", ""),
    ],
)
def test_text_is_read_as_ingest_reads_it(text: str, value: object) -> None:
    assert result_value(text) == value == parse_result_text(text)


def test_nesting_too_deep_to_parse_stays_text() -> None:
    text = "[" * 100_000
    assert result_value(text) == text == parse_result_text(text)


@pytest.mark.parametrize(
    "content",
    ['{"items": [], "total": 12.5}', "918.43", "order not found", "line one\nline two\n"],
)
def test_a_note_trailer_is_cut_whichever_way_it_was_appended(content: str) -> None:
    want = result_value(content)
    ways = [content + "\n\n" + NOTE, content + "\r\n\r\n" + NOTE,
            content + "\n\n" + NOTE + "\n\n" + NOTE]  # fmt: skip
    if not content.endswith("\n"):  # else one "\n" before the note is all it says
        ways.append(content + "\n" + NOTE)
    for annotated in ways:
        assert result_value(annotated) == want, annotated
        assert parse_result_text(annotated) == want
    assert strip_note(content + "\n\n" + NOTE) == content


def test_only_a_line_that_starts_with_the_mark_is_a_trailer() -> None:
    inside = "the log says: [tracemine] started"
    assert strip_note(inside) == inside
    assert strip_note(NOTE) == ""
    assert result_value('{"a": "x\\n[tracemine] y"}') == {"a": "x\n[tracemine] y"}


def test_values_already_parsed_are_given_back_as_they_are() -> None:
    value = {"items": [1]}
    assert result_value(value) is value
    assert result_value(None) is None


ERRORS = [
    {"error": {"code": "not_found", "message": "no order #W1"}},
    {"error": "order not found"},
    {"errors": [{"message": "bad id"}], "message": "validation failed"},
    {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    {"status": 404, "title": "Not Found", "detail": "no order #W1", "type": "about:blank"},
    {"code": 500, "status": "error", "message": "upstream down"},
    {"status_code": "503", "message": "try later"},
    {"detail": "Not Found"},
    {"detail": [{"loc": ["body", "id"], "msg": "field required", "type": "missing"}]},
]
RESULTS = [
    {"error": None, "items": []},
    {"error": 0, "message": "ok"},
    {"status": "delivered", "message": "on its way"},
    {"status": 200, "message": "done"},
    {"detail": "The order ships on Monday."},
    {"message": "Not found anywhere", "order_id": "#W1"},
    {"errors": []},
    {},
    [{"error": "x"}],
    "Error: order not found",
]


@pytest.mark.parametrize("payload", ERRORS)
def test_error_payloads_are_marked(payload: dict[str, object]) -> None:
    assert ErrorRule().mark(payload) == "error_payload"


@pytest.mark.parametrize("payload", RESULTS)
def test_results_are_not(payload: object) -> None:
    assert ErrorRule().mark(payload) is None


def test_a_pattern_marks_text_results_only() -> None:
    rule = ErrorRule(r"^Error:")
    assert rule.mark("Error: order not found") == "error_pattern"
    assert rule.mark("No error here") is None
    assert rule.mark({"text": "Error: x"}) is None


@pytest.mark.parametrize("suite", [*DOMAINS, *WIDE_DOMAINS])
def test_no_nominal_result_of_the_simulator_is_marked(suite: str) -> None:
    rule = ErrorRule()
    marked = {"ok": 0, "tool_error": 0}
    errors = 0
    for run in simulate(suite, tasks=60, seed=5, trials=2):
        for call in run["calls"]:
            errors += call["status"] == "tool_error"
            if rule.mark(call["result"]) or rule.mark(result_value(json.dumps(call["result"]))):
                marked[call["status"]] += 1
    # a suite whose tools fail sometimes has its error payloads marked (realwide's never fail)
    assert marked["ok"] == 0 and (marked["tool_error"] > 0 or errors == 0)


def test_the_module_is_standard_library_only() -> None:
    assert heavy_imports("tracemine.model.result", "orjson") == []
