"""A local cluster spends its CPU on the mine: no statistical profile of running tasks,
the dashboard's samples taken seldom, the memory limits watched as before."""

from __future__ import annotations

from typing import Any


def _settings() -> tuple[Any, ...]:
    import dask

    get = dask.config.get
    return (get("distributed.worker.profile.enabled"),
            get("distributed.admin.system-monitor.interval"),
            get("distributed.admin.tick.interval"),
            get("distributed.worker.memory.monitor-interval"))  # fmt: skip


def test_workers_take_no_profile_and_sample_seldom(dask_client: Any) -> None:
    found = set(dask_client.run(_settings).values())
    assert found == {(False, "5s", "500ms", "100ms")}
