"""``--task-key``: where a run's task id comes from when the format carries none.

task_id                 a field of the run record or its metadata (dotted path)
metadata.task.name      a nested metadata key; keys containing dots are tried whole first
regex:^(?P<task>.+)-t\\d+$   a regular expression over the run id: the group named
                        ``task``, else the first group, else the whole match
"""

from __future__ import annotations

import re
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
