"""Testing declared contracts against the values a store holds.

Reads the store through its published schema only: ``json_values`` (one row per leaf and
per array/object, array elements generalised to ``[*]``) joined to ``calls``. Result-side
contracts are tested on calls whose status is ``ok`` — a declared response schema says
nothing about error payloads. Values are rendered redacted in counterexamples: numbers
and enum-like strings as they are, other strings by their shape (``AAA-999``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from tracemine.errors import StoreError
from tracemine.model.contract import Contract, Counterexample, Kind
from tracemine.model.paths import PathError, parse

# RE2 (DuckDB) syntax; lenient where the standards are loose in practice
FORMAT_REGEX = {
    "date-time": r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$",
    "date": r"^\d{4}-\d{2}-\d{2}$",
    "time": r"^\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$",
    "uuid": r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$",
    "email": r"^[^@\s]+@[^@\s]+\.[^@\s]+$",
    "uri": r"^[A-Za-z][A-Za-z0-9+.\-]*:\S*$",
    "hostname": r"^[A-Za-z0-9]([A-Za-z0-9\-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9\-]*[A-Za-z0-9])?)*$",  # noqa: E501
    "ipv4": r"^((25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(25[0-5]|2[0-4]\d|1?\d?\d)$",
    "ipv6": r"^[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*$",
    "currency": r"^[A-Z]{3}$",
}
_MAX_STR = 256  # the store truncates longer strings: pattern checks skip them
_NUMERIC = "v.jtype IN ('integer', 'number') AND v.num IS NOT NULL"
_SIZED = "v.jtype IN ('array', 'string', 'object')"
_TEXT = f"v.jtype = 'string' AND v.len <= {_MAX_STR}"


@dataclass(slots=True)
class Observation:
    """What the store says about one contract: values (or objects) tested, calls and
    tasks they came from, violations with a few counterexamples, and for ``one_of`` the
    values seen. ``checked == 0``: no trace reached the path."""

    checked: int = 0
    calls: int = 0
    tasks: int = 0
    violations: int = 0
    counterexamples: list[Counterexample] = field(default_factory=list)
    seen: list[Any] = field(default_factory=list)


class Observer:
    """A read-only view of a store for testing contracts. Use as a context manager."""

    def __init__(self, db: str | Path) -> None:
        path = Path(db)
        if not path.exists():
            raise StoreError(f"{path}: no such database; run `tracemine ingest` first")
        try:
            self.con = duckdb.connect(str(path), read_only=True)
            tables = {row[0] for row in self.con.execute("SHOW TABLES").fetchall()}
        except duckdb.Error as exc:
            raise StoreError(f"{path}: cannot open as a DuckDB database: {exc}") from None
        if not {"calls", "json_values"} <= tables:
            self.con.close()
            raise StoreError(f"{path}: not a tracemine store")
        self.tools = {
            row[0] for row in self.con.execute("SELECT DISTINCT tool FROM calls").fetchall()
        }

    def __enter__(self) -> Observer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.con.close()

    def observe(self, contract: Contract) -> Observation | None:
        """Test one unary contract; None when it cannot be tested here (a derived path,
        a condition, a regex DuckDB cannot run, an unknown format)."""
        if contract.tool not in self.tools:
            return Observation()  # no call of this tool: nothing reached the path
        if contract.when is not None or len(contract.paths) != 1:
            return None
        try:
            path = parse(contract.paths[0])
        except PathError:
            return None
        if path.function is not None:
            return None
        ok = "AND c.status = 'ok'" if contract.side.value == "result" else ""
        base = (
            "FROM json_values v JOIN calls c ON c.call_key = v.call_key "
            "LEFT JOIN runs r ON r.run_id = c.run_id "
            f"WHERE c.tool = $tool AND v.side = $side {ok}"
        )
        params: dict[str, Any] = {"tool": contract.tool, "side": contract.side.value}
        if contract.kind == Kind.PRESENT:
            return self._present(contract, path.parent.plain if path.parent else None, base, params)
        if contract.kind == Kind.UNIQUE:
            return self._unique(path.plain, base, params)
        rule = _rule(contract, params)
        if rule is None:
            return None
        applies, violates = rule
        params["path"] = path.plain
        where = f"{base} AND v.path = $path AND ({applies})"
        try:
            return self._run(where, violates, params, contract.kind == Kind.ONE_OF)
        except duckdb.Error:
            return None  # e.g. a pattern RE2 does not accept

    def _run(self, where: str, violates: str, params: dict[str, Any], seen: bool) -> Observation:
        (row,) = self.con.execute(
            f"SELECT count(*), count(DISTINCT c.call_key), count(DISTINCT r.task_id), "
            f"count(*) FILTER (WHERE {violates}) {where}",
            params,
        ).fetchall()
        obs = Observation(checked=row[0], calls=row[1], tasks=row[2], violations=row[3])
        if obs.violations:
            rows = self.con.execute(
                f"SELECT c.run_id, r.task_id, c.call_id, c.seq, v.jtype, v.num, v.str, v.bool, "
                f"v.len {where} AND ({violates}) ORDER BY c.call_key LIMIT 3",
                params,
            ).fetchall()
            obs.counterexamples = [_example(r[:4], _render(*r[4:], raw=seen)) for r in rows]
        if seen:
            sql = f"SELECT DISTINCT v.jtype, v.num, v.str, v.bool {where} LIMIT 200"
            rows = self.con.execute(sql, _used(sql, params)).fetchall()
            obs.seen = [_value(*r) for r in rows]
        return obs

    def _present(
        self, contract: Contract, parent: str | None, base: str, params: dict[str, Any]
    ) -> Observation | None:
        """Objects at the parent path that lack the key: per call, fewer child rows than
        parent objects (exact also under nested arrays, where element indexes repeat)."""
        if parent is None:
            return None
        params.update(parent=parent, path=parse(contract.paths[0]).plain)
        rows = self.con.execute(
            f"""
            WITH p AS (SELECT v.call_key, any_value(c.run_id) AS run_id,
                              any_value(r.task_id) AS task_id, any_value(c.call_id) AS call_id,
                              any_value(c.seq) AS seq, count(*) AS n
                       {base} AND v.path = $parent AND v.jtype = 'object' GROUP BY v.call_key),
                 k AS (SELECT v.call_key, count(*) AS n
                       {base} AND v.path = $path GROUP BY v.call_key)
            SELECT p.run_id, p.task_id, p.call_id, p.seq, p.n, coalesce(k.n, 0)
            FROM p LEFT JOIN k ON k.call_key = p.call_key ORDER BY p.call_key
            """,
            params,
        ).fetchall()
        bad = [r for r in rows if r[4] > r[5]]
        obs = Observation(
            checked=sum(r[4] for r in rows), calls=len(rows),
            tasks=len({r[1] for r in rows if r[1] is not None}),
            violations=sum(r[4] - r[5] for r in bad),
        )  # fmt: skip
        obs.counterexamples = [
            _example(r[:4], f"absent in {r[4] - r[5]} of {r[4]}") for r in bad[:3]
        ]
        return obs

    def _unique(self, path: str, base: str, params: dict[str, Any]) -> Observation:
        """Calls whose array at ``path`` repeats a scalar value."""
        params["path"] = path
        rows = self.con.execute(
            f"""
            SELECT any_value(c.run_id), any_value(r.task_id), any_value(c.call_id),
                   any_value(c.seq), count(*),
                   count(DISTINCT coalesce(v.str, CAST(v.num AS VARCHAR), CAST(v.bool AS VARCHAR)))
            {base} AND v.path = $path AND v.jtype IN ('string', 'integer', 'number', 'boolean')
            GROUP BY v.call_key ORDER BY v.call_key
            """,
            params,
        ).fetchall()
        bad = [r for r in rows if r[4] > r[5]]
        obs = Observation(
            checked=sum(r[4] for r in rows), calls=len(rows),
            tasks=len({r[1] for r in rows if r[1] is not None}), violations=len(bad),
        )  # fmt: skip
        obs.counterexamples = [
            _example(r[:4], f"{r[4] - r[5]} repeated of {r[4]}") for r in bad[:3]
        ]
        return obs


def _rule(contract: Contract, params: dict[str, Any]) -> tuple[str, str] | None:
    """(rows the contract applies to, rows that violate it) as SQL over ``v``."""
    kind, p = contract.kind, contract.params
    if kind == Kind.NOT_NULL:
        return "TRUE", "v.jtype = 'null'"
    if kind == Kind.TYPE:
        # a null breaks a type that does not list null, as the monitor reads it
        wanted = p.get("type")
        names = [str(n) for n in (wanted if isinstance(wanted, list) else [wanted])]
        allowed = []
        if "integer" in names:
            allowed.append("v.jtype = 'integer' OR (v.jtype = 'number' AND v.num = floor(v.num))")
        if "number" in names:
            allowed.append("v.jtype IN ('integer', 'number')")
        others = [n for n in names if n not in ("integer", "number")]
        if others:
            params["want"] = others
            allowed.append("list_contains($want, v.jtype)")
        return "TRUE", f"NOT ({' OR '.join(f'({a})' for a in allowed)})"
    if kind in (Kind.NON_NEGATIVE, Kind.POSITIVE, Kind.RANGE):
        low = 0 if kind != Kind.RANGE else p.get("min")
        high = p.get("max") if kind == Kind.RANGE else None
        low_excl = kind == Kind.POSITIVE or p.get("min_exclusive") is True
        return _NUMERIC, _outside(
            low, high, low_excl, p.get("max_exclusive") is True, "v.num", params
        )
    if kind in (Kind.NON_EMPTY, Kind.LENGTH):
        low = 1 if kind == Kind.NON_EMPTY else p.get("min")
        return _SIZED, _outside(low, p.get("max"), False, False, "v.len", params)
    if kind in (Kind.ONE_OF, Kind.CONST):
        values: list[Any] = p.get("values", []) if kind == Kind.ONE_OF else [p.get("value")]
        groups = {
            "strs": ([v for v in values if isinstance(v, str)], "v.jtype = 'string'", "v.str"),
            "nums": (
                [float(v) for v in values if _is_number(v)],
                "v.jtype IN ('integer', 'number')", "v.num",
            ),
            "bools": ([v for v in values if isinstance(v, bool)], "v.jtype = 'boolean'", "v.bool"),
        }  # fmt: skip
        member = []
        for name, (listed, jtype, column) in groups.items():
            if listed:  # an empty list parameter has no element type in SQL
                params[name] = listed
                member.append(f"({jtype} AND list_contains(${name}, {column}))")
        return "v.jtype <> 'null'", f"NOT coalesce({' OR '.join(member) or 'FALSE'}, FALSE)"
    if kind == Kind.PATTERN:
        params["regex"] = str(p.get("regex"))
        return _TEXT, "NOT regexp_matches(v.str, $regex)"
    if kind == Kind.FORMAT and p.get("format") in FORMAT_REGEX:
        params["regex"] = FORMAT_REGEX[p["format"]]
        return _TEXT, "NOT regexp_full_match(v.str, $regex)"
    return None


def _outside(
    low: Any, high: Any, low_excl: bool, high_excl: bool, col: str, params: dict[str, Any]
) -> str:
    terms = []
    if isinstance(low, int | float):
        params["low"] = float(low)
        terms.append(f"{col} {'<=' if low_excl else '<'} $low")
    if isinstance(high, int | float):
        params["high"] = float(high)
        terms.append(f"{col} {'>=' if high_excl else '>'} $high")
    return " OR ".join(terms) or "FALSE"


def _example(row: tuple[Any, ...], observed: str) -> Counterexample:
    run_id, task_id, call_id, seq = row
    return Counterexample(
        run_id=run_id, task_id=task_id, call_id=call_id, seq=seq, observed=observed
    )


def _value(jtype: str, num: Any, text: Any, flag: Any) -> Any:
    if jtype in ("integer", "number"):
        return int(num) if num is not None and num == int(num) else num
    return {"string": text, "boolean": flag}.get(jtype)


def _render(jtype: str, num: Any, text: Any, flag: Any, length: Any, *, raw: bool = False) -> str:
    if jtype in ("integer", "number", "boolean"):
        return f"{jtype} {str(_value(jtype, num, text, flag)).lower()}"
    if jtype == "string":
        shown = text[:40] if raw else re.sub(r"[0-9]", "9", re.sub(r"[A-Za-z]", "A", text[:40]))
        return f'string "{shown}"' + ("…" if length and length > 40 else "")
    if jtype in ("array", "object"):
        return f"{jtype} of {length}"
    return jtype


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _used(sql: str, params: dict[str, Any]) -> dict[str, Any]:
    """The parameters ``sql`` names: DuckDB refuses any extra."""
    return {k: v for k, v in params.items() if f"${k}" in sql}
