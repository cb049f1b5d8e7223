"""``stats``: what a store holds — tools, calls, tasks, statuses, quarantine."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from tracemine.ingest import store
from tracemine.model.result import PATTERN_RULE, PAYLOAD_RULE


class ToolStats(BaseModel):
    tool: str
    calls: int
    runs: int
    tasks: int
    statuses: dict[str, int]


class StoreStats(BaseModel):
    db: str
    files: int
    runs: int
    calls: int
    tasks: int
    runs_without_task: int
    statuses: dict[str, int]
    tools: list[ToolStats]
    quarantined: int
    quarantine_reasons: dict[str, int]
    errors_marked: dict[str, int] = Field(
        default_factory=dict,
        description="tool errors the source called ok, marked at ingest, by rule (error_type)",
    )


def stats(db: str | Path) -> StoreStats:
    """Summarise the store at ``db`` (opened read-only)."""
    con = store.connect(db, read_only=True)
    try:

        def scalar(sql: str) -> int:
            row = store.fetch_one(con, sql)
            return int(row[0]) if row and row[0] is not None else 0

        statuses = dict(
            con.execute("SELECT status, count(*) FROM calls GROUP BY 1 ORDER BY 2 DESC").fetchall()
        )
        tool_rows = con.execute(
            """
            SELECT c.tool, count(*), count(DISTINCT c.run_id), count(DISTINCT r.task_id)
            FROM calls c LEFT JOIN runs r USING (run_id)
            GROUP BY c.tool ORDER BY 2 DESC, 1
            """
        ).fetchall()
        per_status = con.execute(
            "SELECT tool, status, count(*) FROM calls GROUP BY 1, 2 ORDER BY 1, 3 DESC"
        ).fetchall()
        by_tool: dict[str, dict[str, int]] = {}
        for tool, status, count in per_status:
            by_tool.setdefault(tool, {})[status] = int(count)
        reasons = con.execute(
            """
            SELECT regexp_replace(reason, ':.*', '') AS why, count(*) FROM quarantine
            GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 20
            """
        ).fetchall()
        marked = con.execute(
            "SELECT error_type, count(*) FROM calls WHERE status = 'tool_error' "
            "AND error_type IN (?, ?) GROUP BY 1 ORDER BY 2 DESC, 1",
            [PAYLOAD_RULE, PATTERN_RULE],
        ).fetchall()
        return StoreStats(
            db=str(db),
            files=scalar("SELECT count(*) FROM ingests"),
            runs=scalar("SELECT count(*) FROM runs"),
            calls=scalar("SELECT count(*) FROM calls"),
            tasks=scalar("SELECT count(DISTINCT task_id) FROM runs"),
            runs_without_task=scalar("SELECT count(*) FROM runs WHERE task_id IS NULL"),
            statuses={str(k): int(v) for k, v in statuses.items()},
            tools=[
                ToolStats(
                    tool=t, calls=int(n), runs=int(r), tasks=int(k), statuses=by_tool.get(t, {})
                )
                for t, n, r, k in tool_rows
            ],
            quarantined=scalar("SELECT count(*) FROM quarantine"),
            quarantine_reasons={str(k): int(v) for k, v in reasons},
            errors_marked={str(k): int(v) for k, v in marked},
        )
    finally:
        con.close()
