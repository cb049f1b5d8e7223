"""The Dask engine: the one module that imports Dask (``pip install 'tracemine[dask]'``).

:func:`cluster` starts a ``LocalCluster`` of ``workers`` processes, one thread each, or
joins the scheduler at an address; :class:`DaskEngine` runs the worker functions of
:mod:`tracemine.engine.worker` there, a task per shard, and :class:`DaskShards` is the
:class:`tracemine.mine.profile.shards.Shards` the miner maps its steps over. What is shipped to
the workers is a shard's description, a store's path, the step (by name: tracemine must
be installed on the workers, at the client's version) and the step's small parameters;
results are summaries (profiles per fold, counts, a few rows per tool). No connection is
pickled: every task opens its store and closes it.

A task whose worker dies is run again on another; a shard whose task fails twice (its
worker died twice, or it raised twice) fails the job with :class:`ShardFailed`, which
names the shard. In a cluster started here a task is retried once after its worker died
(``distributed.scheduler.allowed-failures = 1``), and samples for the dashboard less often
(:data:`QUIET`); a cluster joined keeps its own settings. Dask reruns a task, but not what
the client sends or fetches: a worker that dies while a pass's shared arguments are
scattered to it fails the scatter, and one that held the only copy of them takes the
pass's unfinished tasks with it (Dask cancels them: scattered data cannot be computed
again). Either starts the pass again for the shards not done (:data:`LOST_TRIES`).
"""

from __future__ import annotations

import importlib.util
import logging
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from tracemine.engine import worker
from tracemine.engine.address import CONNECT_TIMEOUT, Tls, check_address, probe, security
from tracemine.errors import InputError, ShardFailed, TracemineError
from tracemine.mine.profile.shards import Setup

T = TypeVar("T")
Progress = Callable[[str, int, int], None]
"""Called with (what the pass does, shards done, shards in all)."""
RETRIES = 1
START_TRIES = 3
QUIET = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.gil.enabled": False,
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.admin.tick.interval": "500ms",
}
"""What a local cluster leaves out or does less often: the statistical profile of running
tasks and the dashboard's samples of CPU, memory and the event loop, which every process
of the cluster takes tens of times a second (about 0.06 CPU-s a second for two workers,
5 % of a mine's CPU at 1M calls). The memory limits are watched as often as before."""
"""A local cluster whose worker dies while it starts is started again, this many times in all."""
LOST_TRIES = 3
"""A pass the cluster loses part of (a worker died while the shared arguments were sent to
it, or with the only copy of them, or before a result was fetched) is started again for
the shards not done, this many tries in all, :data:`LOST_PAUSE` seconds times the try
apart: time for the scheduler to drop the dead worker and its nanny to start another."""
LOST_PAUSE = 0.5


def require() -> Any:
    """The ``distributed`` module, or the one line saying what to install."""
    try:
        import distributed
        import fsspec  # noqa: F401  (shards are read through it)
    except ImportError:
        raise InputError(
            "mining across workers needs Dask: pip install 'tracemine[dask]'"
        ) from None
    return distributed


@dataclass
class Cluster:
    """A Dask client, and its cluster's dashboard when it has one."""

    client: Any
    dashboard: str | None = None


@contextmanager
def cluster(
    workers: int | None = None, scheduler: str | None = None, memory: str | None = None,
    dashboard: bool = True, *, connect_timeout: float = CONNECT_TIMEOUT, tls: Tls | None = None,
) -> Iterator[Cluster]:  # fmt: skip
    """A Dask client: on a new ``LocalCluster`` of ``workers`` processes (each capped at
    ``memory``, Dask's size syntax), with a dashboard when ``dashboard`` and bokeh is
    installed, or on the scheduler at ``scheduler`` (``tcp://host:8786``, or ``tls://``
    with the files of ``tls``), which must answer within ``connect_timeout`` seconds."""
    distributed = require()
    import dask

    if scheduler:
        address = check_address(scheduler, tls)
        secure = security(tls)
        probe(address, secure, connect_timeout)
        try:
            client = distributed.Client(address, timeout=connect_timeout, security=secure)
        except (OSError, TimeoutError) as exc:
            raise InputError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
        try:
            _same_version(client)
            yield Cluster(client, _joined_dashboard(client))
        finally:
            client.close()
        return
    board = dashboard and importlib.util.find_spec("bokeh") is not None
    with dask.config.set({"distributed.scheduler.allowed-failures": RETRIES, **QUIET}):
        local = _local_cluster(distributed, workers or 1, memory)
        client = distributed.Client(local)
    try:
        yield Cluster(client, client.dashboard_link if board else None)
    finally:
        client.close()
        close_local(local)


CLOSE_TRIES = 2


def close_local(local: Any) -> None:
    """Close a local cluster this process started and now discards. A nanny restarting a
    killed worker as the cluster closes makes Dask raise (``can only join a started
    process``); closing is tried once more, and past that the mine's contracts, or the
    error it stopped with, are what the caller gets, with a warning, not Dask's error in
    their place."""
    for attempt in range(1, CLOSE_TRIES + 1):
        try:
            local.close()
            return
        except (AssertionError, OSError, RuntimeError, TimeoutError) as exc:
            if attempt == CLOSE_TRIES:
                logging.getLogger(__name__).warning(
                    "the local Dask cluster did not close cleanly: %s: %s",
                    type(exc).__name__, exc)  # fmt: skip
            else:
                time.sleep(0.5)


def _local_cluster(distributed: Any, workers: int, memory: str | None) -> Any:
    """A ``LocalCluster``, started again when a worker dies while it starts (Dask then
    says ``Nanny failed to start``), up to :data:`START_TRIES` times."""
    for attempt in range(1, START_TRIES + 1):
        try:
            # the scheduler's web server starts whatever is asked: on a free port, never a
            # clash with another cluster's 8787
            return distributed.LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True,
                memory_limit=memory or "auto", dashboard_address=":0",
                # a task that fails is said once, by the client, not logged by each worker
                silence_logs=logging.CRITICAL,
            )  # fmt: skip
        except (RuntimeError, OSError, TimeoutError) as exc:
            if attempt == START_TRIES:
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                raise ShardFailed(
                    f"the local Dask cluster of {workers} workers did not start in "
                    f"{START_TRIES} tries (a worker died while it started: {first})"
                ) from None
    raise AssertionError("unreachable")


def _joined_dashboard(client: Any) -> str | None:
    """The dashboard of a cluster joined: its scheduler serves one when bokeh is there."""
    try:
        served = client.run_on_scheduler(_serves_dashboard)
    except Exception:  # a scheduler that cannot say has no link to give
        return None
    return client.dashboard_link if served else None


def _serves_dashboard() -> bool:
    return importlib.util.find_spec("bokeh") is not None


def _same_version(client: Any) -> None:
    import tracemine

    found = set(client.run(_version).values())
    if found - {tracemine.__version__}:
        raise InputError(
            f"the cluster's workers run tracemine {', '.join(sorted(found))}; this client "
            f"runs {tracemine.__version__}: install the same version on both"
        )


def _version() -> str:
    import tracemine

    return tracemine.__version__


class _Lost(Exception):
    """The cluster lost part of a pass (not a task's own failure): ``index`` is the first
    call not done, ``why`` what was lost."""

    def __init__(self, index: int, why: str) -> None:
        super().__init__(why)
        self.index = index
        self.why = why


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


class DaskEngine:
    """Runs worker functions on a Dask client, a task per item, with progress."""

    def __init__(self, client: Any, progress: Progress | None = None) -> None:
        self.client = client
        self.progress = progress

    def slots(self) -> int:
        """The cluster's worker threads: tasks that can run at once."""
        return max(sum(self.client.nthreads().values()), 1)

    def run(self, label: str, function: Callable[..., T], calls: Sequence[tuple[str, tuple]],
            shared: Sequence[Any] = ()) -> list[T]:  # fmt: skip
        """``function(*shared, *args)`` for each ``(name, args)`` of ``calls``, in order;
        ``shared`` arguments are sent to the workers once a try. A try the cluster loses
        part of is made again for the calls not done, up to :data:`LOST_TRIES` in all;
        their results are fetched as they finish, so a worker that dies later takes none
        of them."""
        results: dict[int, T] = {}
        if self.progress:
            self.progress(label, 0, len(calls))
        for attempt in range(1, LOST_TRIES + 1):
            try:
                self._try(label, function, calls, shared, results)
            except _Lost as lost:
                if attempt == LOST_TRIES:
                    name = calls[lost.index][0]
                    left = len(calls) - len(results) - 1
                    more = f" (and {left} more shards)" if left > 0 else ""
                    raise ShardFailed(
                        f"{label} of {name}{more} was lost by the cluster {LOST_TRIES} times "
                        f"(its workers died: {lost.why}); nothing was written"
                    ) from None
                time.sleep(LOST_PAUSE * attempt)
                continue
            return [results[n] for n in range(len(calls))]
        raise AssertionError("unreachable")

    def _try(self, label: str, function: Callable[..., T], calls: Sequence[tuple[str, tuple]],
             shared: Sequence[Any], results: dict[int, T]) -> None:  # fmt: skip
        """One try of :meth:`run` for the calls without a result in ``results``, which it
        fills; :class:`_Lost` when the cluster loses part of it."""
        distributed = require()
        tag = f"tracemine-{label.replace(' ', '-')}-{uuid.uuid4().hex[:8]}"
        todo = [n for n in range(len(calls)) if n not in results]
        # keys of the client's choosing: a dict is scattered item by item, each value whole
        keys = [f"{tag}-shared{i}" for i in range(len(shared))]
        try:
            scattered = (
                self.client.scatter(dict(zip(keys, shared, strict=True)), broadcast=True)
                if shared
                else {}  # Dask refuses to scatter nothing
            )
        except (OSError, TimeoutError) as exc:  # CommClosedError: a worker died as it received
            raise _Lost(todo[0], f"scatter: {_first_line(exc)}") from None
        sent = [scattered[k] for k in keys]
        # no more tasks in flight than the cluster has threads: with a free thread for each,
        # the scheduler gives a worker only the shard it runs, so when it dies no shard that
        # merely waited on it is counted as having killed it (Dask counts every task a dead
        # worker was given). Threads that join later are not used until the next pass.
        slots = self.slots()
        futures: list[Any] = []
        index: dict[str, int] = {}

        def start() -> Any:
            n = todo[len(futures)]
            future = self.client.submit(function, *sent, *calls[n][1], key=f"{tag}-{n}",
                                        retries=RETRIES, pure=False)  # fmt: skip
            futures.append(future)
            index[future.key] = n
            return future

        try:
            running = distributed.as_completed([start() for _ in range(min(slots, len(todo)))])
            for future in running:
                n = index[future.key]
                if future.status == "cancelled":  # its shared arguments went with a worker
                    raise _Lost(n, "the only copy of the pass's arguments was lost")
                if future.status != "finished":
                    self._fail(label, calls[n][0], future)
                try:
                    results[n] = future.result()
                except (OSError, TimeoutError, distributed.CancelledError) as exc:
                    raise _Lost(n, f"fetching the result: {_first_line(exc)}") from None
                if self.progress:
                    self.progress(label, len(results), len(calls))
                if len(futures) < len(todo):
                    running.add(start())
        finally:
            for future in futures:
                future.cancel()
            for future in sent:
                future.cancel()

    def _fail(self, label: str, name: str, future: Any) -> None:
        distributed = require()
        error = future.exception()
        if isinstance(error, TracemineError) and not isinstance(error, distributed.KilledWorker):
            said = str(error) if name in str(error) else f"{name}: {error}"
            raise type(error)(said) from None
        if isinstance(error, distributed.KilledWorker):
            why = "its worker died twice while running it"
        elif error is None:  # lost, not raised: its worker died with another shard's task
            raise ShardFailed(f"{label} of {name} was lost by the cluster ({future.status}, "
                              "no error of its own); nothing was written")  # fmt: skip
        else:  # DuckDB's messages run over lines of advice: the first says what happened
            first = (str(error).strip().splitlines() or [""])[0]
            why = f"{type(error).__name__}: {first}"
        raise ShardFailed(f"{label} of {name} failed twice ({why}); nothing was written")


class DaskShards:
    """The stores of a sharded mine, as :class:`tracemine.mine.profile.shards.Shards` on Dask."""

    client_is_store = False

    def __init__(self, engine: DaskEngine, stores: list[tuple[str, str]],
                 config: worker.Config) -> None:  # fmt: skip
        self.engine = engine
        self.stores = stores  # (name, path)
        self.config = config
        self._setup = Setup()

    def setup(self, setup: Setup) -> None:
        self._setup = setup

    def map(self, step: Callable[..., T], *args: Any, label: str = "") -> list[T]:
        calls = [(name, (path,)) for name, path in self.stores]
        return self.engine.run(label or step.__name__, _run_step, calls,
                               shared=(self._setup, step, args, self.config))  # fmt: skip


def _run_step(setup: Setup, step: Callable[..., Any], args: tuple, config: worker.Config,
              path: str) -> Any:  # fmt: skip
    return worker.run_step(path, setup, step, args, config)
