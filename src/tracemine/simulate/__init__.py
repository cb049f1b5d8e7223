"""Synthetic tool suites: seeded, offline agent runs to mine, check and evaluate on.

>>> from tracemine.simulate import simulate, write_traces
>>> runs = simulate(suite="commerce", tasks=3, seed=7)
>>> runs[0]["run_id"], runs[0]["calls"][0]["tool"]  # doctest: +SKIP
('commerce-0000.r0', 'search_orders')
>>> write_traces(runs, "traces.jsonl", "openai_chat")  # doctest: +SKIP

A *run* is a dict: ``run_id``, ``task_id``, ``trial``, ``family`` (``domain.family``),
``reward``, ``run_outcome``, ``instruction``, ``final_text``, ``started_at``, ``ended_at``
(ISO strings) and ``calls``, its calls in order. A call is a dict named like
:class:`~tracemine.model.CallRecord` fields: ``seq``, ``turn``, ``parallel_index``,
``call_id``, ``tool``, ``arguments``, ``result``, ``status`` (``ok`` or ``tool_error``),
``error_type``, ``error_message``, ``started_at``, ``ended_at``.

The same seed gives the same runs, and the writers the same bytes: every random draw goes
through a ``random.Random`` seeded from the suite seed, the domain, the task and the trial,
and time is a synthetic clock.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from tracemine._atomic import write_atomic
from tracemine.errors import InputError
from tracemine.simulate import commerce, offers, realwide, search, travel
from tracemine.simulate.formats import FORMATS, runs_from_records, write_traces

DOMAINS: dict[str, Callable[[int, int, int], list[dict[str, Any]]]] = {
    commerce.DOMAIN: commerce.simulate_task,
    search.DOMAIN: search.simulate_task,
    travel.DOMAIN: travel.simulate_task,
}
WIDE_DOMAINS: dict[str, Callable[[int, int, int], list[dict[str, Any]]]] = {
    offers.DOMAIN: offers.simulate_task,
    realwide.DOMAIN: realwide.simulate_task,
}
"""Domains of wide results (lists of offers, hundreds of values a call; ``realwide``,
thousands of distinct paths a tool, as real exports have): named on their
own, never dealt into ``all``, so ``all`` gives the runs it gave before they existed."""
SUITES: tuple[str, ...] = ("all", *DOMAINS, *WIDE_DOMAINS)
OPENAPI_DOCUMENTS = {"commerce": "commerce.openapi.yaml"}


def simulate(
    suite: str = "all", tasks: int = 30, seed: int = 0, trials: int = 3
) -> list[dict[str, Any]]:
    """Runs of ``tasks`` tasks, ``trials`` runs each, ordered by task then trial.

    ``suite`` is a domain (``commerce``, ``search``, ``travel``, or ``offers`` and
    ``realwide``, whose results are wide) or ``all``, which deals tasks to the first
    three in turn. Task ``i`` of a domain is the same whatever ``tasks`` is, so a larger
    simulation extends a smaller one.
    """
    if suite not in SUITES:
        raise InputError(f"unknown suite {suite!r}; choose one of: {', '.join(SUITES)}")
    if tasks < 1:
        raise InputError(f"--tasks must be at least 1 (got {tasks})")
    if trials < 1:
        raise InputError(f"--trials must be at least 1 (got {trials})")
    domains = list(DOMAINS) if suite == "all" else [suite]
    runs: list[dict[str, Any]] = []
    for position in range(tasks):
        domain = domains[position % len(domains)]
        runs.extend({**DOMAINS, **WIDE_DOMAINS}[domain](seed, position // len(domains), trials))
    return runs


def openapi_document(domain: str = "commerce") -> str:
    """The OpenAPI 3.1 document (YAML) describing a domain's tools.

    As in real documents, some constraints are declared (``required``, ``enum``,
    ``minimum``, ``pattern``, ``format``), some only stated in prose descriptions and
    some not stated at all.
    """
    name = OPENAPI_DOCUMENTS.get(domain)
    if name is None:
        known = ", ".join(OPENAPI_DOCUMENTS)
        raise InputError(f"no OpenAPI document for {domain!r}; documents exist for: {known}")
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


def write_openapi(path: str | Path, domain: str = "commerce") -> Path:
    """Write :func:`openapi_document` to ``path``."""
    target = Path(path)
    write_atomic(target, openapi_document(domain))
    return target


def write_suite(
    out: str | Path,
    suite: str = "all",
    tasks: int = 30,
    seed: int = 0,
    trials: int = 3,
    formats: tuple[str, ...] = ("openai_chat", "otlp"),
    compress: bool = False,
) -> list[Path]:
    """Simulate and write ``<out>/<suite>.<format>.jsonl`` (``.gz`` when ``compress``) for
    each format, plus the OpenAPI document of every simulated domain that has one."""
    unknown = [name for name in formats if name not in FORMATS]
    if unknown or not formats:
        raise InputError(
            f"unknown trace format {', '.join(unknown) or '(none)'}; "
            f"choose from: {', '.join(FORMATS)}"
        )
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise InputError(f"{folder}: exists and is not a folder")
    runs = simulate(suite, tasks, seed, trials)
    folder.mkdir(parents=True, exist_ok=True)
    suffix = ".jsonl.gz" if compress else ".jsonl"
    written = [write_traces(runs, folder / f"{suite}.{name}{suffix}", name) for name in formats]
    domains = list(DOMAINS) if suite == "all" else [suite]
    for domain in domains:
        if domain in OPENAPI_DOCUMENTS:
            written.append(write_openapi(folder / OPENAPI_DOCUMENTS[domain], domain))
    return written


__all__ = [
    "DOMAINS",
    "FORMATS",
    "SUITES",
    "WIDE_DOMAINS",
    "openapi_document",
    "runs_from_records",
    "simulate",
    "write_openapi",
    "write_suite",
    "write_traces",
]
