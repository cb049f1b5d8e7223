"""Reading a contract file with the standard library: the version, the structure of every
contract, the parameters its kind needs and one id per contract. Anything wrong refuses
the whole file with a :class:`ContractLoadError` naming the contract and the field, so a
monitor never runs on a file it half understood."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path as FilePath
from typing import Any

from tracemine.errors import ContractFileError
from tracemine.model.paths import Path, PathError, element_steps, parse

SCHEMA_VERSION = "2"
READABLE_VERSIONS = ("1", "2")
"""Version 2 added the ``schema`` kind and ``folded_into``; a version 1 file reads as is."""
UNARY = frozenset(
    ("present", "not_null", "type", "non_negative", "positive", "range", "one_of", "non_empty",
     "length", "format", "pattern", "unique", "const")
)  # fmt: skip
RELATIONAL = frozenset(("equals", "le", "lt", "sum_equals", "member", "subset"))
VOCABULARY = frozenset(("shares_token", "ratio", "page_full", "product"))
"""Relations of a call's values read one value each (or one a list element): a word in
common, a ratio, a page, a product."""
RUN_LEVEL = frozenset(
    ("completeness", "requires_prior", "provenance", "bounded_by", "call_cap", "expected_tools")
)
WHOLE = frozenset(("schema",))
"""Kinds about one side of a call as a whole: checked through the contracts folded into
them, each of which names the path and what was expected."""
STATUSES = frozenset(("proposed", "accepted", "rejected", "muted"))
JSON_TYPES = frozenset(("integer", "number", "string", "boolean", "array", "object", "null"))
OPS = frozenset(("==", "!=", "in", "not_in", "<", "<=", ">", ">=", "present", "absent"))


class ContractLoadError(ContractFileError):
    """The contract file cannot be used: unreadable, of an unknown ``schema_version``, or a
    contract in it is malformed. The message names the file, the contract and the field."""


@dataclass(frozen=True, slots=True)
class Spec:
    """One contract as the monitor needs it (the file's other fields are for review)."""

    id: str
    tool: str
    side: str
    kind: str
    paths: tuple[Path, ...]
    params: dict[str, Any]
    when: dict[str, Any] | None
    status: str
    implied_by: str | None
    folded_into: str | None
    recovery_tools: tuple[str, ...]
    hint: str


def read_document(path: str | FilePath) -> Any:
    """The parsed JSON of the contract file at ``path``; :class:`ContractLoadError` if it
    cannot be read or is not JSON (what it holds is :func:`parse_document`'s to judge)."""
    try:
        text = FilePath(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ContractLoadError(f"{path}: cannot read contract file: {exc}") from None
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ContractLoadError(f"{path}: not JSON: {exc}") from None


REVIEW_SUFFIX = ".review.yaml"
"""The review file of ``x.json`` is ``x.review.yaml`` beside it (:mod:`tracemine.review`)."""


def review_beside(path: str | FilePath) -> FilePath:
    """Where the review decisions about the contract file at ``path`` are kept."""
    path = FilePath(path)
    return path.with_name(path.stem + REVIEW_SUFFIX)


def read_reviewed(
    path: str | FilePath, review: str | FilePath | None = None
) -> tuple[Any, str | None]:
    """The contract file at ``path`` with the decisions of its review file applied (the
    one beside it, ``x.review.yaml``, unless ``review`` names another), as ``export``
    applies them; and a line saying what was applied (``None``: no review file).

    The decisions are YAML and are applied by :mod:`tracemine.review`, which needs the
    mining stack (``tracemine[mine]``). Without it, a review file beside the contracts
    refuses the load with a :class:`ContractLoadError` saying what to run: a monitor
    that enforced the file as if nobody had reviewed it would check what a person
    rejected and skip what they accepted."""
    where = FilePath(review) if review is not None else review_beside(path)
    if review is None and not where.is_file():
        return read_document(path), None
    try:
        from tracemine.review.apply import reviewed_document
    except ImportError:
        raise ContractLoadError(
            f"{path}: the review decisions in {where} need tracemine[mine] to apply; run "
            f"`tracemine export --contracts {path} --format native --out FILE` where it is "
            "installed and load FILE"
        ) from None
    return reviewed_document(path, where)


def read_contracts(path: str | FilePath) -> list[Spec]:
    """Every contract in the file at ``path``; :class:`ContractLoadError` if unusable."""
    return parse_document(read_document(path), origin=str(path))


def parse_document(data: Any, origin: str = "contract file") -> list[Spec]:
    """Validate a parsed contract document (``ContractFile.model_dump(mode="json")``)."""
    if not isinstance(data, dict):
        raise ContractLoadError(f"{origin}: expected a JSON object, got {_type(data)}")
    if "schema_version" not in data:
        raise ContractLoadError(f"{origin}: no schema_version; is this a tracemine contract file?")
    version = data["schema_version"]
    if str(version) not in READABLE_VERSIONS:
        raise ContractLoadError(
            f"{origin}: schema_version {version!r} is not supported "
            f"(this monitor reads versions {', '.join(READABLE_VERSIONS)})"
        )
    contracts = data.get("contracts")
    if not isinstance(contracts, list):
        raise ContractLoadError(f"{origin}: 'contracts' must be a list, got {_type(contracts)}")
    specs = [_spec(item, f"{origin}: contracts[{i}]") for i, item in enumerate(contracts)]
    first: dict[str, int] = {}
    for index, spec in enumerate(specs):
        if spec.id in first:
            # receipts, implied_by and review decisions name contracts by id: one id
            # standing for two contracts would hide which of them fired
            raise ContractLoadError(
                f"{origin}: contract id {spec.id} is repeated: "
                f"contracts[{first[spec.id]}] and contracts[{index}]"
            )
        first[spec.id] = index
    return specs


def _spec(item: Any, where: str) -> Spec:
    try:
        return _read_spec(item, where)
    except (TypeError, ValueError, OverflowError, RecursionError) as exc:
        # a value of a shape no check above foresaw: still one line naming the contract
        raise ContractLoadError(f"{where}: unusable contract ({exc})") from None


def _read_spec(item: Any, where: str) -> Spec:
    if not isinstance(item, dict):
        raise ContractLoadError(f"{where}: expected an object, got {_type(item)}")
    cid, tool, kind = item.get("id"), item.get("tool"), item.get("kind")
    if not isinstance(cid, str) or not cid:
        raise ContractLoadError(f"{where}: 'id' must be a non-empty string")
    where = f"{where} ({cid})"
    if not isinstance(tool, str) or not tool:
        raise ContractLoadError(f"{where}: 'tool' must be a non-empty string")
    if not isinstance(kind, str) or kind not in UNARY | RELATIONAL | VOCABULARY | RUN_LEVEL | WHOLE:
        raise ContractLoadError(f"{where}: unknown kind {kind!r}")
    side = item.get("side")
    if side not in ("args", "result", "run"):
        raise ContractLoadError(f"{where}: 'side' must be args, result or run, got {side!r}")
    status = item.get("status", "proposed")
    if not isinstance(status, str) or status not in STATUSES:
        raise ContractLoadError(f"{where}: unknown status {status!r}")
    raw_paths = item.get("paths", [])
    if not isinstance(raw_paths, list) or not all(isinstance(p, str) for p in raw_paths):
        raise ContractLoadError(f"{where}: 'paths' must be a list of strings")
    paths = tuple(_path(p, where) for p in raw_paths)
    params = item.get("params") or {}
    if not isinstance(params, dict):
        raise ContractLoadError(f"{where}: 'params' must be an object")
    _check_params(kind, params, paths, where)
    when = item.get("when")
    if when is not None:
        if not isinstance(when, dict) or not isinstance(when.get("path"), str):
            raise ContractLoadError(f"{where}: 'when' must be an object with a path")
        _path(when["path"], where)
        if when.get("op") not in OPS:
            raise ContractLoadError(f"{where}: 'when.op' must be one of {sorted(OPS)}")
        if when["op"] in ("in", "not_in") and not isinstance(when.get("value"), list):
            raise ContractLoadError(f"{where}: 'when.value' must be a list for {when['op']}")
    recovery = item.get("recovery") or {}
    tools = recovery.get("tools", []) if isinstance(recovery, dict) else None
    if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
        raise ContractLoadError(f"{where}: 'recovery' must be an object with a list of tools")
    implied_by, folded_into = item.get("implied_by"), item.get("folded_into")
    if folded_into is not None and not isinstance(folded_into, str):
        raise ContractLoadError(f"{where}: 'folded_into' must be a contract id (a string)")
    return Spec(
        id=cid, tool=tool, side=side, kind=kind, paths=paths, params=params, when=when,
        status=status, implied_by=implied_by if isinstance(implied_by, str) else None,
        folded_into=folded_into, recovery_tools=tuple(tools), hint=str(recovery.get("hint") or ""),
    )  # fmt: skip


def _path(text: str, where: str) -> Path:
    try:
        return parse(text)
    except PathError as exc:
        raise ContractLoadError(f"{where}: {exc}") from None


def _num(value: Any) -> bool:
    """A finite number a double can hold: a bound past 1.8e308 can bound nothing."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer too large for a double
        return False


def _check_params(kind: str, params: dict[str, Any], paths: tuple[Path, ...], where: str) -> None:
    def need(ok: bool, message: str) -> None:
        if not ok:
            raise ContractLoadError(f"{where}: {kind} {message}")

    if kind in UNARY:
        need(len(paths) >= 1, "needs at least one path")
    if kind in RELATIONAL:
        need(len(paths) == 2, "needs exactly two paths [left, right]")
    if kind in ("shares_token", "ratio"):
        need(len(paths) == 2 and not any(p.has_wildcard for p in paths),
             "needs exactly two paths [left, right], neither under a wildcard")  # fmt: skip
    if kind == "ratio":
        ratio: Any = params.get("ratio")
        tolerance: Any = params.get("tolerance")
        need(_num(ratio) and ratio != 0, "needs params.ratio as a number other than 0")
        need(_num(tolerance) and tolerance >= 0, "needs params.tolerance >= 0")
    if kind == "page_full":
        need(
            len(paths) == 3 and not any(p.has_wildcard for p in paths),
            "needs exactly three paths [len(list), count, limit], none under a wildcard",
        )
        offsets = [params[k] for k in ("start", "page") if params.get(k) is not None]
        need(len(offsets) <= 1 and all(isinstance(o, str) for o in offsets),
             "takes at most one of params.start and params.page, as a path")  # fmt: skip
        for text in offsets:
            _path(text, where)
    if kind == "product":
        need(len(paths) == 3, "needs exactly three paths [x, a, b] (x == a × b)")
        need(_num(params.get("tolerance")) and params["tolerance"] >= 0,
             "needs params.tolerance >= 0")  # fmt: skip
        need(
            all(not p.has_wildcard for p in paths) or element_steps(paths) is not None,
            "reads one value a path, or three keys of one list's elements "
            "(result.items[*].total, result.items[*].price, result.items[*].quantity)",
        )
    if kind == "schema":
        need(len(paths) == 1 and not paths[0].steps and paths[0].function is None,
             "needs exactly one path, the side's root (args or result)")  # fmt: skip
        need(isinstance(params.get("schema"), dict), "needs params.schema as an object")
    if kind == "type":
        types = params.get("type")
        need(types in JSON_TYPES if not isinstance(types, list) else
             bool(types) and len(set(types)) == len(types) and
             all(isinstance(t, str) and t in JSON_TYPES for t in types),
             f"needs params.type, one of {sorted(JSON_TYPES)} or a list of them")  # fmt: skip
    elif kind in ("range", "length"):
        bounds = [params[k] for k in ("min", "max") if params.get(k) is not None]
        need(bool(bounds) and all(map(_num, bounds)), "needs params.min and/or max as numbers")
    elif kind == "one_of":
        need(isinstance(params.get("values"), list), "needs params.values as a list")
    elif kind == "format":
        need(isinstance(params.get("format"), str), "needs params.format as a string")
    elif kind == "pattern":
        need(isinstance(params.get("regex"), str), "needs params.regex as a string")
    elif kind == "const":
        need("value" in params, "needs params.value")
    elif kind == "sum_equals":
        tolerance = params.get("tolerance", 0)
        need(_num(tolerance) and tolerance >= 0, "needs params.tolerance >= 0")
    elif kind == "requires_prior":
        need(isinstance(params.get("tool"), str), "needs params.tool as a string")
        same = params.get("same")
        if same is not None:
            pair = isinstance(same, list) and len(same) == 2
            need(pair and all(isinstance(p, str) for p in same),
                 "params.same must be two paths [this call, prior call]")  # fmt: skip
            for text in same:
                _path(text, where)
    elif kind in ("provenance", "bounded_by"):
        need(isinstance(params.get("from_tool"), str), "needs params.from_tool as a string")
        need(isinstance(params.get("from_path"), str), "needs params.from_path as a string")
        _path(params["from_path"], where)
        need(len(paths) == 1, "needs exactly one path (the argument)")
    elif kind == "call_cap":
        cap = params.get("max")
        need(isinstance(cap, int) and not isinstance(cap, bool) and cap >= 0,
             "needs params.max as an integer >= 0")  # fmt: skip
    elif kind == "expected_tools":
        for name in ("required", "forbidden"):
            value = params.get(name, [])
            need(isinstance(value, list) and all(isinstance(t, str) for t in value),
                 f"params.{name} must be a list of tool names")  # fmt: skip


def _type(value: Any) -> str:
    return "null" if value is None else type(value).__name__
