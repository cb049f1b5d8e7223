"""BFCL multi-turn: replay each entry's ground-truth call strings, turn by turn, against the
leaderboard's executable backend classes, and write them as flat JSONL traces plus the
classes' function docs (with their response schemas) as a declared-schema file.

For each entry of the multi-turn data file, fresh instances of its ``involved_classes``
(``GorillaFileSystem``, ``TwitterAPI``, ``MathAPI``, ``TicketAPI``, ``TradingBot``,
``TravelAPI``, ``VehicleControlAPI``, ``MessageAPI``) are loaded with the entry's
``initial_config``, exactly as the leaderboard's checker loads them, and keep their state
across the entry's turns. Call strings such as ``mv(source='a.pdf', destination='temp')``
are parsed with :mod:`ast` (literals only, never evaluated); positional arguments are
named from the method's signature. A call that raises is a ``tool_error``, and so is a
result the tool flags as ``{"error": ...}``.

One run per entry: run id ``bfcl/<entry id>``, task id ``<entry id>``, family the involved
classes joined with ``+``, server the class that served the call, turn the turn index.
The function docs go to ``bfcl.functions.json`` as ``[{"name", "description",
"parameters", "response"}]``, the shape ``tracemine merge`` reads.
"""

from __future__ import annotations

import ast
import copy
import importlib
import inspect
import json
import time
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

from tracemine.errors import InputError
from tracemine.importers._common import (
    ImportReport,
    frozen_clock,
    hash_seed_fixed,
    jsonable,
    require,
    run_in_worker,
    summarize,
    trace_path,
    write_json,
    write_runs,
)

SUITE = "bfcl"
CATEGORY = "base"
INSTALL_HINT = (
    "install it without its heavy dependencies, which replaying does not need: "
    "pip install 'tracemine[bfcl]' && pip install --no-deps bfcl-eval"
)
_BACKEND = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
# the file system stamps files with the wall clock; any fixed instant will do
_FROZEN_NOW = datetime(2024, 5, 15, 10, 0, 0)


def import_bfcl(
    out: str | Path, *, limit: int | None = None, compress: bool = False
) -> ImportReport:
    """Replay the ground truth of BFCL's multi-turn base entries (the first ``limit``)
    and write ``bfcl.jsonl`` (``.gz`` with ``compress``) and ``bfcl.functions.json``
    into ``out``. Runs in a child process with ``PYTHONHASHSEED=0`` unless this one
    already has it."""
    require("bfcl_eval", INSTALL_HINT)
    require("mpmath", "the BFCL math tools need it: pip install 'tracemine[bfcl]'")
    out = Path(out)
    if not hash_seed_fixed():
        args = [*(["--limit", str(limit)] if limit is not None else [])]
        return run_in_worker(SUITE, out, [*args, *(["--gzip"] if compress else [])])
    started = time.perf_counter()
    entries = load_entries(CATEGORY)[:limit]
    runs = replay(entries)
    classes = sorted({name for entry in entries for name in entry["involved_classes"]})
    files = [
        write_runs(runs, trace_path(out, SUITE, compress)),
        write_json(function_docs(classes), out / f"{SUITE}.functions.json"),
    ]
    return summarize(SUITE, files, runs, time.perf_counter() - started)


def load_entries(category: str) -> list[dict[str, Any]]:
    """The entries of one multi-turn category with their ``ground_truth`` turns."""
    data = resources.files("bfcl_eval") / "data"
    name = f"_multi_turn_{category}.json"
    # the file names carry the leaderboard's version (BFCL_v3_…, BFCL_v4_…)
    questions = sorted(p.name for p in data.iterdir() if p.name.endswith(name))
    if not questions:
        raise InputError(f"the installed bfcl-eval has no multi-turn category {category!r}")
    entries = _read_jsonl(data / questions[-1])
    answers = {item["id"]: item for item in _read_jsonl(data / "possible_answer" / questions[-1])}
    for entry in entries:
        entry["ground_truth"] = answers[entry["id"]]["ground_truth"]
    return entries


def replay(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One run per entry, its calls in the order of the ground truth."""
    from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING

    for module in sorted(set(CLASS_FILE_PATH_MAPPING.values())):
        if module.startswith(_BACKEND) and _needs_only_core(module):
            importlib.import_module(module)
    with frozen_clock(_BACKEND, _FROZEN_NOW):
        return [_replay_entry(entry, CLASS_FILE_PATH_MAPPING) for entry in entries]


def function_docs(classes: list[str]) -> list[dict[str, Any]]:
    """The function docs of ``classes``, as the leaderboard ships them."""
    from bfcl_eval.constants.executable_backend_config import MULTI_TURN_FUNC_DOC_FILE_MAPPING

    folder = resources.files("bfcl_eval") / "data" / "multi_turn_func_doc"
    docs: list[dict[str, Any]] = []
    for name in classes:
        docs.extend(_read_jsonl(folder / MULTI_TURN_FUNC_DOC_FILE_MAPPING[name]))
    return docs


def _replay_entry(entry: dict[str, Any], modules: dict[str, str]) -> dict[str, Any]:
    from bfcl_eval.constants.executable_backend_config import STATELESS_CLASSES

    methods: dict[str, tuple[str, Any]] = {}
    for class_name in entry["involved_classes"]:
        instance = getattr(importlib.import_module(modules[class_name]), class_name)()
        if class_name not in STATELESS_CLASSES:
            config = copy.deepcopy(entry["initial_config"].get(class_name, {}))
            instance._load_scenario(config, long_context=False)
        for name, method in inspect.getmembers(instance, predicate=inspect.ismethod):
            if not name.startswith("_"):
                methods[name] = (class_name, method)
    calls: list[dict[str, Any]] = []
    for turn, texts in enumerate(entry["ground_truth"]):
        for text in texts:
            calls.append(_call(len(calls), turn, text, methods))
    return {
        "run_id": f"{SUITE}/{entry['id']}",
        "task_id": entry["id"],
        "trial": None,
        "family": "+".join(sorted(entry["involved_classes"])),
        "reward": None,
        "run_outcome": None,
        "calls": calls,
    }


def _call(seq: int, turn: int, text: str, methods: dict[str, tuple[str, Any]]) -> dict[str, Any]:
    call: dict[str, Any] = {"seq": seq, "turn": turn, "call_id": f"call_{seq}",
                            "arguments_raw": text, "status": "ok", "error_type": None,
                            "error_message": None}  # fmt: skip
    try:
        name, args, kwargs = parse_call(text)
    except ValueError as exc:
        call.update(tool=text.split("(", 1)[0].strip() or "unknown", arguments=None,
                    arguments_error=str(exc), status="tool_error", error_type="ParseError",
                    error_message=str(exc), result=None)  # fmt: skip
        return call
    server, method = methods.get(name, (None, None))
    call.update(tool=name, server=server)
    if method is None:
        message = f"no involved class has a method {name!r}"
        call.update(arguments=kwargs, status="tool_error", error_type="ToolNotFoundError",
                    error_message=message, result=None)  # fmt: skip
        return call
    try:
        bound = inspect.signature(method).bind(*args, **kwargs)
        call["arguments"] = jsonable(dict(bound.arguments))
        result = method(*args, **kwargs)
    except Exception as exc:  # the tool's own failure is part of the trace
        call.setdefault("arguments", jsonable(kwargs))
        call.update(status="tool_error", error_type=type(exc).__name__,
                    error_message=str(exc), result=None)  # fmt: skip
        return call
    call["result"] = jsonable(result)
    error = call["result"].get("error") if isinstance(call["result"], dict) else None
    if isinstance(error, str):
        # the backends answer a refused operation with {"error": "..."} instead of raising
        call.update(status="tool_error", error_message=error)
    return call


def parse_call(text: str) -> tuple[str, list[Any], dict[str, Any]]:
    """``name(arg, key=value)`` → name, positional and keyword literals; never evaluated.
    Raises ``ValueError`` for anything but a call of a bare name with literal arguments."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ValueError(f"not a call: {exc.msg}") from None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError("not a call of a function by name")
    if any(kw.arg is None for kw in node.keywords):
        raise ValueError("**kwargs in a call")
    args = [_literal(arg) for arg in node.args]
    kwargs = {str(kw.arg): _literal(kw.value) for kw in node.keywords}
    return node.func.id, args, kwargs


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        # the message names the argument's text: the error's own names a memory address
        raise ValueError(f"argument {ast.unparse(node)!r} is not a literal") from None


def _needs_only_core(module: str) -> bool:
    # the memory and web-search backends import faiss, sentence-transformers and serpapi;
    # the multi-turn categories never use them, so they are not imported
    return not module.rsplit(".", 1)[-1].startswith(("memory", "web_search"))


def _read_jsonl(path: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
