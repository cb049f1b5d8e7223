"""``--task-key`` suggestions: what the runs carry, tried with the task key itself."""

from __future__ import annotations

from tracemine.ingest.taskkey import TaskKey, suggest


def _runs(tasks: int, trials: int, **metadata: object) -> list[dict[str, object]]:
    return [
        {"run_id": f"sess{task * trials + trial:04d}",
         "metadata": {"agent": {"case": f"case-{task}"}, "service.name": "bot", **metadata}}
        for task in range(tasks) for trial in range(trials)
    ]  # fmt: skip


def test_a_nested_metadata_key_that_groups_runs_is_suggested_with_its_count() -> None:
    (first, alone) = suggest(_runs(8, 2), at_least=5)
    assert (first.spec, first.tasks, first.covered, first.runs) == ("agent.case", 8, 16, 16)
    assert str(first) == "--task-key agent.case gives 8 tasks (about 2 runs a task)"
    assert alone.tasks == 16 and "each run its own task" in str(alone)
    run = _runs(1, 1)[0]
    assert TaskKey.parse(first.spec).task_id(run) == "case-0"


def test_a_key_naming_a_task_comes_before_other_groupings() -> None:
    runs = _runs(8, 2)
    for i, run in enumerate(runs):
        run["metadata"]["eval.task_name"] = f"t{i // 4}"  # type: ignore[index]
    assert suggest(runs, at_least=2)[0].spec == "eval.task_name"


def test_too_few_tasks_or_partial_coverage_are_said() -> None:
    runs = _runs(3, 2)
    assert [s.spec for s in suggest(runs, at_least=5)] == ["run_id"]  # 6 runs, each alone
    runs[0]["metadata"]["ticket"] = "T-1"  # type: ignore[index]
    runs[1]["metadata"]["ticket"] = "T-2"  # type: ignore[index]
    partial = [s for s in suggest(runs, at_least=2, most=5) if s.spec == "ticket"]
    assert partial and str(partial[0]).endswith("(each run its own task, none in 4 runs)")
