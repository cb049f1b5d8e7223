"""How tasks are dealt to folds: balanced by calls while they are few, by a hash of the
task once every fold gets ``STABLE_FOLD_TASKS`` of them, so that new tasks leave the old
ones where they were."""

from __future__ import annotations

import os
import subprocess
import sys

from tracemine.mine.propose.context import (
    STABLE_FOLD_TASKS,
    assign_folds,
    folds_dealt,
    hashed_fold,
)

FOLDS = 5


def _tasks(n: int, start: int = 0) -> dict[str, int]:
    return {f"task-{i:05d}": 1 + (i * 7919) % 13 for i in range(start, start + n)}


def test_few_tasks_are_balanced_by_calls() -> None:
    tasks = _tasks(STABLE_FOLD_TASKS * FOLDS - 1)
    assert folds_dealt(len(tasks), FOLDS) == "balanced"
    folds = assign_folds(tasks, FOLDS, seed=0)
    load = [sum(c for t, c in tasks.items() if folds[t] == k) for k in range(FOLDS)]
    assert max(load) - min(load) <= max(tasks.values())


def test_many_tasks_keep_their_fold_when_tasks_are_added() -> None:
    old = _tasks(STABLE_FOLD_TASKS * FOLDS)
    grown = {**old, **_tasks(STABLE_FOLD_TASKS, start=len(old))}
    assert folds_dealt(len(old), FOLDS) == "hash"
    before, after = assign_folds(old, FOLDS, seed=3), assign_folds(grown, FOLDS, seed=3)
    assert all(after[t] == fold for t, fold in before.items())
    # balancing would have moved old tasks: the hash is what keeps them
    assert folds_dealt(len(old) - 1, FOLDS) == "balanced"
    # another seed deals them otherwise
    other = assign_folds(old, FOLDS, seed=4)
    assert sum(other[t] != fold for t, fold in before.items()) > len(old) // 2


def test_hashed_folds_share_the_tasks_about_evenly() -> None:
    """A fold's share strays from 1/K by about sqrt((K-1)/n) of it: within 3 of those."""
    tasks = _tasks(STABLE_FOLD_TASKS * FOLDS)
    for seed in range(5):
        folds = assign_folds(tasks, FOLDS, seed)
        sizes = [sum(1 for f in folds.values() if f == k) for k in range(FOLDS)]
        expected = len(tasks) / FOLDS
        spread = ((FOLDS - 1) / len(tasks)) ** 0.5
        assert all(abs(n / expected - 1) <= 3 * spread for n in sizes), sizes


def test_a_tasks_hashed_fold_is_the_same_in_every_process() -> None:
    """Not Python's salted ``hash``: another interpreter, with another hash seed, deals
    the same folds."""
    names = [f"run/{i}" for i in range(50)]
    here = [hashed_fold(n, FOLDS, 11) for n in names]
    code = (
        "from tracemine.mine.propose.context import hashed_fold\n"
        f"print([hashed_fold(n, {FOLDS}, 11) for n in {names!r}])"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True)  # fmt: skip
    assert out.stdout.strip() == str(here)
