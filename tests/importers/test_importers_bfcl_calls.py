"""BFCL call strings are parsed as literals, never evaluated, and a call that cannot run
is recorded as a tool error (no package needed)."""

from __future__ import annotations

import pytest

from tracemine.importers.bfcl import _call, parse_call


def test_parse_call_reads_positional_and_keyword_literals() -> None:
    assert parse_call("sort('final_report.pdf')") == ("sort", ["final_report.pdf"], {})
    assert parse_call("mv(source='a.pdf',destination='temp')") == (
        "mv", [], {"source": "a.pdf", "destination": "temp"}
    )  # fmt: skip
    assert parse_call(" add(a=-1.5, b=[1, 2], c={'k': None}) ") == (
        "add", [], {"a": -1.5, "b": [1, 2], "c": {"k": None}}
    )  # fmt: skip


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('true')",  # not a call of a bare name
        "cd(folder=os.getcwd())",  # an argument that is not a literal
        "cd(**{'folder': 'x'})",
        "cd(folder=",
        "cd",
    ],
)
def test_parse_call_refuses_anything_but_literal_calls(text: str) -> None:
    with pytest.raises(ValueError):
        parse_call(text)


def test_a_call_that_cannot_run_is_a_tool_error_in_the_trace() -> None:
    def cd(folder: str) -> dict:
        return {"current_working_directory": folder}

    methods = {"cd": ("GorillaFileSystem", cd)}
    ok = _call(0, 0, "cd('docs')", methods)
    assert ok["arguments"] == {"folder": "docs"} and ok["status"] == "ok"
    assert ok["result"] == {"current_working_directory": "docs"}
    unparsed = _call(1, 0, "cd(folder=os.getcwd())", methods)
    assert unparsed["status"] == "tool_error" and unparsed["error_type"] == "ParseError"
    assert unparsed["arguments_error"] == "argument 'os.getcwd()' is not a literal"
    missing = _call(2, 1, "rm(file='x')", methods)
    assert missing["error_type"] == "ToolNotFoundError" and missing["arguments"] == {"file": "x"}
    wrong = _call(3, 1, "cd(path='x')", methods)
    assert wrong["status"] == "tool_error" and wrong["error_type"] == "TypeError"
