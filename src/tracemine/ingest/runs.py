"""A file's runs on their way into the store: merged in memory, set aside in a staging
table past :data:`RUNS_IN_MEMORY`, renamed where they would merge with another file's,
and written by the ingest's last transaction (:class:`FileRuns`, the part of
:class:`~tracemine.ingest.writer.FileWriter` that holds runs and quarantined items)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import orjson

from tracemine.ingest import store
from tracemine.ingest.readers.base import Reader, excerpt
from tracemine.ingest.report import FileReport
from tracemine.ingest.taskkey import TaskKey
from tracemine.model.trace import RunRecord

RUNS_IN_MEMORY = 20_000
_STAGE = "tracemine_runs_stage"
_STAGE_COLUMNS = tuple(name for name in store.RUN_COLUMNS if name != "ingest_id")


class FileRuns:
    """The runs and quarantined items of one file being read; the writer that reads it
    sets the connection, reader, task key, ingest id, report and JSON writer."""

    con: Any
    reader: Reader
    key: TaskKey | None
    validate: bool
    ingest_id: int
    report: FileReport
    dumps: Callable[[Any], str]

    def __init__(self) -> None:
        self.quarantine: dict[str, list[Any]] = {name: [] for name in store.QUARANTINE_COLUMNS}
        self.runs: dict[str, dict[str, Any]] = {}
        self.staged = 0  # runs set aside in the staging table

    def _quarantine(
        self, line: int | None, pointer: str | None, level: str, reason: str, raw: str
    ) -> None:
        q = self.quarantine
        q["ingest_id"].append(self.ingest_id)
        q["source_file"].append(self.reader.source_file)
        q["source_line"].append(line)
        q["source_pointer"].append(pointer)
        q["level"].append(level)
        q["reason"].append(reason)
        q["excerpt"].append(raw)

    def _merge_run(self, run: dict[str, Any]) -> None:
        known = self.runs.get(run["run_id"])
        if known is None:
            self.runs[run["run_id"]] = dict(run)
            return
        for name, value in run.items():
            if name == "metadata" and value:
                merged = dict(known.get("metadata") or {})
                for meta_key, meta_value in value.items():
                    merged.setdefault(meta_key, meta_value)
                known["metadata"] = merged
            elif known.get(name) is None and value is not None:
                known[name] = value

    def _metadata_json(self, run: dict[str, Any]) -> str:
        """A run's metadata as JSON; metadata no JSON writer takes (nested past
        ``--max-depth``) is stored as ``{}`` and quarantined as an item, with why."""
        try:
            return self.dumps(run.get("metadata") or {})
        except ValueError as exc:
            reason = f"run {run['run_id']!r}: metadata could not be stored ({exc}); stored as {{}}"
            self._quarantine(None, "/metadata", "item", reason, excerpt(run.get("metadata")))
            self.report.items_quarantined += 1
            run["metadata"] = {}
            return "{}"

    def spill_when_full(self) -> None:
        """Set the runs held in memory aside once there are :data:`RUNS_IN_MEMORY`."""
        if len(self.runs) >= RUNS_IN_MEMORY:
            self._spill_runs()

    # -- runs ---------------------------------------------------------------------------
    # Runs are merged in memory (a run's lines may each say something about it) up to
    # RUNS_IN_MEMORY of them; past that they are set aside in a staging table and merged
    # back, run by run and in the order they were read, when the file ends. A file of a
    # million short runs then costs no more memory than one of a thousand.

    def _spill_runs(self) -> None:
        if not self.runs:
            return
        if not self.staged:  # the runs table's columns, and the order runs were read in
            self.con.execute(
                f"CREATE OR REPLACE TEMP TABLE {_STAGE} AS "
                "SELECT * EXCLUDE (ingest_id), 0::BIGINT AS ord FROM runs LIMIT 0"
            )
        cols: dict[str, list[Any]] = {name: [] for name in (*_STAGE_COLUMNS, "ord")}
        for run in self.runs.values():
            for name in _STAGE_COLUMNS:
                value = run.get(name)
                cols[name].append(self._metadata_json(run) if name == "metadata" else value)
            cols["ord"].append(self.staged)
            self.staged += 1
        store.append(self.con, _STAGE, cols)
        self.runs = {}

    def _staged_runs(self) -> Iterator[dict[str, Any]]:
        """The staged runs, each merged from its records in reading order."""
        names = ", ".join(_STAGE_COLUMNS)
        last = ""
        while True:
            rows = self.con.execute(
                f"SELECT {names} FROM {_STAGE} WHERE run_id IN (SELECT DISTINCT run_id "
                f"FROM {_STAGE} WHERE run_id > ? ORDER BY run_id LIMIT {RUNS_IN_MEMORY}) "
                "ORDER BY run_id, ord",
                [last],
            ).fetchall()
            if not rows:
                return
            self.runs = {}
            for row in rows:
                run = dict(zip(_STAGE_COLUMNS, row, strict=True))
                run["metadata"] = orjson.loads(run["metadata"])
                self._merge_run(run)
            last = rows[-1][0]
            yield from self.runs.values()
            self.runs = {}

    def keep_runs_apart(self, digest: str) -> int:
        """Give this file's runs ids of their own where they would merge by accident with
        another file's (:func:`tracemine.ingest.store.colliding_runs_sql`): such a run is
        stored as ``<id>@<source file>``, the id it had in the file kept in its metadata.
        Returns how many were renamed."""
        source_file = self.reader.source_file
        found = store.fetch_one(self.con, "SELECT count(*) FROM runs WHERE source_file <> ?",
                                [source_file])  # fmt: skip
        if not found or not found[0]:
            return 0  # a store of this file alone (the usual first ingest): nothing to do
        import pyarrow as pa

        ids = list(self.runs)
        if self.staged:
            staged = self.con.execute(f"SELECT DISTINCT run_id FROM {_STAGE}").fetchall()
            ids += [row[0] for row in staged]
        self.con.register("_tracemine_file_runs", pa.table({"run_id": pa.array(ids, pa.string())}))
        try:
            name = source_file.rsplit("/", 1)[-1]
            rows = self.con.execute(
                store.colliding_runs_sql("_tracemine_file_runs"), [source_file, name, digest]
            ).fetchall()
        finally:
            self.con.unregister("_tracemine_file_runs")
        renamed = [(row[0], f"{row[0]}@{source_file}") for row in rows]
        if not renamed:
            return 0
        old_ids, new_ids = [old for old, _ in renamed], [new for _, new in renamed]
        self.con.execute(
            "UPDATE calls SET run_id = m.new FROM (SELECT unnest($2) AS old, unnest($3) AS new) m "
            "WHERE calls.ingest_id = $1 AND calls.run_id = m.old",
            [self.ingest_id, old_ids, new_ids],
        )
        for old, new in renamed:
            run = self.runs.pop(old, None)
            if run is not None:
                run["run_id"] = new
                run["metadata"] = {**(run.get("metadata") or {}), "run_id_in_file": old}
                self.runs[new] = run
        if self.staged:
            self.con.execute(
                f"UPDATE {_STAGE} SET run_id = m.new, metadata = json_merge_patch(metadata, "
                "json_object('run_id_in_file', m.old)) FROM (SELECT unnest($1) AS old, "
                f"unnest($2) AS new) m WHERE {_STAGE}.run_id = m.old",
                [old_ids, new_ids],
            )
        return len(renamed)

    def write_runs(self) -> None:
        if self.staged:
            self._spill_runs()
            staged = self._staged_runs()
            while batch := list(itertools.islice(staged, RUNS_IN_MEMORY)):
                self._write_run_batch(batch)
            self.con.execute(f"DROP TABLE {_STAGE}")
        elif self.runs:
            self._write_run_batch(self.runs.values())
        if self.quarantine["reason"]:  # metadata that could not be stored, with why
            store.append(self.con, "quarantine", self.quarantine)
            self.quarantine = {name: [] for name in store.QUARANTINE_COLUMNS}

    def _write_run_batch(self, runs: Iterable[dict[str, Any]]) -> None:
        cols: dict[str, list[Any]] = {name: [] for name in store.RUN_COLUMNS}
        for run in runs:
            if self.key is not None:
                derived = self.key.task_id(run)
                if derived is not None:
                    run["task_id"], run["task_id_source"] = derived, "configured"
            if run.get("task_id") is None:
                run["task_id_source"] = "none"
                self.report.runs_without_task += 1
            elif run.get("task_id_source") in (None, "none"):
                run["task_id_source"] = "explicit"
            if self.validate:
                RunRecord.model_validate(run)
            for name in store.RUN_COLUMNS:
                if name == "ingest_id":
                    cols[name].append(self.ingest_id)
                elif name == "metadata":
                    cols[name].append(self._metadata_json(run))
                else:
                    cols[name].append(run.get(name))
            self.report.runs += 1
        store.upsert_runs(self.con, cols)
