"""``--task-key``: where a run's task id comes from when the format carries none.

task_id                 a field of the run record or its metadata (dotted path)
metadata.task.name      a nested metadata key; keys containing dots are tried whole first
regex:^(?P<task>.+)-t\\d+$   a regular expression over the run id: the group named
                        ``task``, else the first group, else the whole match
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from typing import Any

from tracemine.errors import TaskKeyError

_RUN_FIELDS = ("task_id", "session_id", "run_id", "family", "trial", "run_outcome")


@dataclass(frozen=True)
class TaskKey:
    spec: str
    field: str | None = None
    pattern: re.Pattern[str] | None = None

    @classmethod
    def parse(cls, spec: str) -> TaskKey:
        text = spec.strip()
        if not text:
            raise TaskKeyError("--task-key is empty; give a field name or regex:PATTERN")
        if text.startswith("regex:"):
            try:
                pattern = re.compile(text[len("regex:") :])
            except re.error as exc:
                raise TaskKeyError(
                    f"--task-key {spec!r}: invalid regular expression: {exc}"
                ) from None
            return cls(spec=text, pattern=pattern)
        if text.startswith("field:"):
            text = text[len("field:") :]
        return cls(spec=spec, field=text)

    def task_id(self, run: dict[str, Any]) -> str | None:
        """The task id of ``run`` under this key, or None where the key finds nothing."""
        if self.pattern is not None:
            match = self.pattern.search(str(run.get("run_id", "")))
            if match is None:
                return None
            if "task" in self.pattern.groupindex:
                return match.group("task")
            return match.group(1) if self.pattern.groups else match.group(0)
        assert self.field is not None
        if self.field in _RUN_FIELDS and run.get(self.field) is not None:
            return _text(run[self.field])
        return _text(lookup(run.get("metadata") or {}, self.field))


def lookup(data: Any, dotted: str) -> Any:
    """``data[dotted]`` if that key exists whole, else walk the dotted parts."""
    if isinstance(data, dict) and dotted in data:
        return data[dotted]
    head, _, rest = dotted.partition(".")
    if not rest or not isinstance(data, dict) or head not in data:
        return None
    return lookup(data[head], rest)


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, dict | list):
        return None
    return str(value)


# columns of the store's ``runs`` table that a task key reads, in the order run_record takes
RUN_COLUMNS = "run_id, task_id, task_id_source, session_id, family, trial, run_outcome, metadata"


def run_record(row: tuple[Any, ...]) -> dict[str, Any]:
    """A row of :data:`RUN_COLUMNS` as the run dict :meth:`TaskKey.task_id` reads."""
    run_id, task_id, source, session, family, trial, outcome, metadata = row
    return {
        "run_id": run_id, "task_id": task_id, "task_id_source": source, "session_id": session,
        "family": family, "trial": trial, "run_outcome": outcome,
        "metadata": json.loads(metadata) if isinstance(metadata, str) else metadata or {},
    }  # fmt: skip


def store_runs(con: Any, where: str = "TRUE", params: Any = ()) -> list[dict[str, Any]]:
    """The runs of the store on ``con`` passing ``where`` (over ``runs r``), as run dicts."""
    rows = con.execute(f"SELECT {RUN_COLUMNS} FROM runs r WHERE {where}", params).fetchall()
    return [run_record(row) for row in rows]


# a run id that ends in a repetition counter: "<task>-trial3", "<task>.r2", "<task>_attempt-1"
_WORDS = "trial|attempt|try|run|rep|sample|seed|iter|t|r"
_COUNTERS = (
    re.compile(rf"^.+?(?P<counter>[-_.:/#](?:{_WORDS})[-_]?)\d+$"),
    re.compile(r"^.+(?P<counter>[-_.:/#])\d+$"),
)
_KEYS_LOOKED_AT = 60  # metadata keys, from the first runs: enough for any real export
_RUNS_LOOKED_AT = 200


@dataclass(frozen=True)
class Suggestion:
    """A ``--task-key`` that finds task ids in these runs: ``tasks`` distinct ones in
    ``covered`` of ``runs`` runs."""

    spec: str
    tasks: int
    covered: int
    runs: int

    def __str__(self) -> str:
        each = self.covered / self.tasks
        grouping = "each run its own task" if self.tasks == self.covered else (
            f"about {each:.3g} runs a task"
        )  # fmt: skip
        missed = f", none in {self.runs - self.covered} runs" if self.covered < self.runs else ""
        return f"--task-key {shlex.quote(self.spec)} gives {self.tasks} tasks ({grouping}{missed})"


def suggest(runs: list[dict[str, Any]], at_least: int = 2, most: int = 3) -> list[Suggestion]:
    """The ``--task-key`` values that would give these runs task ids, best first: keys
    that group runs into at least ``at_least`` tasks (a metadata key naming a task, then a
    repetition counter at the end of the run id, then other keys), and, last, a key under
    which each run is its own task. Each is tried with :class:`TaskKey` itself, so the
    counts are what mining would see.

    >>> suggest([{"run_id": f"t{i}-trial{j}"} for i in range(3) for j in range(2)])[0].spec
    'regex:^(?P<task>.+)-trial\\\\d+$'
    """
    candidates = [(0 if "task" in key.lower() else 2, key) for key in _metadata_keys(runs)]
    candidates += [(1, pattern) for pattern in _counter_patterns(runs)]
    candidates += [(2, "session_id"), (3, "run_id")]
    found: dict[tuple[int, int], tuple[int, Suggestion]] = {}
    for rank, spec in candidates:
        try:
            key = TaskKey.parse(spec)
        except TaskKeyError:  # a metadata key no --task-key can name ("", " ", "regex:(")
            continue
        ids = [key.task_id(run) for run in runs]
        covered = sum(i is not None for i in ids)
        tasks = len(set(ids) - {None})
        if tasks < at_least:
            continue
        grouping = tasks < covered
        if not grouping:
            rank = 3  # every run alone: right only if no task was run twice
        suggestion = Suggestion(spec, tasks, covered, len(runs))
        # two keys that split the runs alike: the better ranked one says it
        seen = found.get((tasks, covered))
        if seen is None or rank < seen[0]:
            found[(tasks, covered)] = (rank, suggestion)
    ordered = sorted(found.values(), key=lambda item: (item[0], -item[1].covered, -item[1].tasks))
    return [suggestion for _, suggestion in ordered[:most]]


def _counter_patterns(runs: list[dict[str, Any]]) -> list[str]:
    """``regex:`` keys that cut the counter the run ids end in, as the ids spell it."""
    patterns: dict[str, None] = {}
    for shape in _COUNTERS:
        for run in runs[:_RUNS_LOOKED_AT]:
            match = shape.match(str(run.get("run_id", "")))
            if match:
                counter = match.group("counter").replace(".", "\\.")
                patterns.setdefault(f"regex:^(?P<task>.+){counter}\\d+$")
    return list(patterns)[:_KEYS_LOOKED_AT]


def _metadata_keys(runs: list[dict[str, Any]]) -> list[str]:
    """Dotted keys of scalar metadata values in the first runs."""
    keys: dict[str, None] = {}

    def walk(data: dict[str, Any], prefix: str) -> None:
        for name, value in data.items():
            if isinstance(value, dict):
                walk(value, f"{prefix}{name}.")
            elif isinstance(value, str | int) and not isinstance(value, bool):
                keys.setdefault(f"{prefix}{name}")

    for run in runs[:_RUNS_LOOKED_AT]:
        metadata = run.get("metadata")
        if isinstance(metadata, dict):
            walk(metadata, "")
    return list(keys)[:_KEYS_LOOKED_AT]
