"""The same calls give the same contracts whatever format carried them.

The simulator's runs (every suite) are written in every format it writes (OpenAI chat,
OTLP spans, flat lines, flat lines in reverse order, Phoenix spans dataframe rows,
LangSmith runs, Anthropic Messages, MCP JSON-RPC transcripts, Braintrust spans, W&B Weave calls, Langfuse traces), each file ingested into its own store and
mined: the candidate files must be identical but for what names the source (the store,
the files' fingerprint, run ids: compared as task and trial) and timings. The comparison says which contracts and which of
their fields differ, so a failure points at the leak.

The bundled real corpora (AgentDojo's text and YAML results, BFCL's arguments written as
Python calls and its null results) are read, regrouped into runs and written in every
format the same way: what a real export holds must not leak through a writer or a reader
either.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tracemine.ingest import ingest, read_traces
from tracemine.mine import mine
from tracemine.simulate import FORMATS, runs_from_records, simulate, write_traces

DATA = Path(__file__).resolve().parents[2] / "data"
TASKS = 36  # twelve of each suite
TRIALS = 2
SHOWN = 12
"""Differences listed in a failure message, at most."""


def nominal_runs() -> list[dict[str, Any]]:
    """The simulated runs with the calls every format carries alike.

    OpenAI chat has no error flag: a tool error there is a result like any other, and
    whether ingest reads an error out of its text is the business of the error rule, not
    of mining. Error calls are left out, and the positions renumbered, so that every
    format holds the same calls at the same places.
    """
    runs = simulate("all", tasks=TASKS, seed=11, trials=TRIALS)
    for run in runs:
        calls = [call for call in run["calls"] if call["status"] == "ok"]
        turns = {turn: n for n, turn in enumerate(sorted({c["turn"] for c in calls}))}
        sizes: dict[int, int] = {}
        for call in calls:
            sizes[call["turn"]] = sizes.get(call["turn"], 0) + 1
        positions: dict[int, int] = {}
        for seq, call in enumerate(calls):
            turn = call["turn"]
            call["seq"], call["turn"] = seq, turns[turn]
            call["parallel_index"] = positions.get(turn, 0) if sizes[turn] > 1 else None
            positions[turn] = positions.get(turn, 0) + 1
        run["calls"] = calls
    return runs


def _reversed_flat(runs: list[dict[str, Any]], path: Path) -> Path:
    """Flat lines, last first: the same calls, stored in the opposite order."""
    written = write_traces(runs, path, "flat")
    lines = written.read_text(encoding="utf-8").splitlines(keepends=True)
    written.write_text("".join(reversed(lines)), encoding="utf-8")
    return written


# every format the simulator writes (a reader it learns to write joins by itself), and
# flat lines in the opposite order; the first is what the others are compared with
VARIANTS = ("openai_chat", *sorted(set(FORMATS) - {"openai_chat"}), "flat-reversed")


def stored_in_every_format(runs: list[dict[str, Any]], folder: Path, stem: str) -> dict[str, Path]:
    """``runs`` written in each of :data:`VARIANTS` and ingested, a store each."""
    out = {}
    for name in VARIANTS:
        trace = folder / f"{stem}.{name}.jsonl"
        if name == "flat-reversed":
            _reversed_flat(runs, trace)
        else:
            write_traces(runs, trace, name)
        db = folder / f"{stem}.{name}.duckdb"
        ingest([trace], db)
        out[name] = db
    return out


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return stored_in_every_format(nominal_runs(), tmp_path_factory.mktemp("formats"), "all")


def _runs_by_task(db: Path) -> dict[str, str]:
    """Each run id of a store as ``task/trial``: OTLP and OpenAI chat carry the simulator's
    run id, Phoenix and LangSmith name a run by its trace id, as those platforms do."""
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT run_id, task_id, trial FROM runs").fetchall()
    return {run: f"{task}/{trial}" for run, task, trial in rows}


def _renamed(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: names.get(v, v) if k == "run_id" and isinstance(v, str)
                else _renamed(v, names) for k, v in value.items()}  # fmt: skip
    if isinstance(value, list):
        return [_renamed(v, names) for v in value]
    return value


def comparable(db: Path, **options: Any) -> dict[str, Any]:
    """The candidate file as written, less what names its source or says how long it
    took, runs named by their task and trial."""
    found = mine(db, **options)
    document = _renamed(json.loads(found.model_dump_json(exclude_none=True)), _runs_by_task(db))
    document.pop("generated_at")
    provenance = document["provenance"]
    for name in ("store", "seconds"):
        provenance.pop(name)
    provenance["profile"].pop("fingerprint")  # of the files read: their names and bytes
    return document


def _flat(value: Any, prefix: str) -> dict[str, Any]:
    """Every leaf of a JSON value by its dotted path (lists of objects by index)."""
    out: dict[str, Any] = {}
    if isinstance(value, dict):
        for key in sorted(value):
            out.update(_flat(value[key], f"{prefix}.{key}"))
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for index, item in enumerate(value):
            out.update(_flat(item, f"{prefix}[{index}]"))
    else:
        out[prefix] = value
    return out


def differences(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """What differs between two candidate files: contracts only one has, fields of shared
    contracts, the order of the contracts, and the provenance."""
    said: list[str] = []
    mine_ = {c["id"]: c for c in expected["contracts"]}
    theirs = {c["id"]: c for c in actual["contracts"]}
    for cid in sorted(mine_.keys() - theirs.keys()):
        said.append(f"only in the first: {cid} {mine_[cid]['description']}")
    for cid in sorted(theirs.keys() - mine_.keys()):
        said.append(f"only in the second: {cid} {theirs[cid]['description']}")
    for cid in sorted(mine_.keys() & theirs.keys()):
        a, b = _flat(mine_[cid], ""), _flat(theirs[cid], "")
        for field in sorted(a.keys() | b.keys()):
            if a.get(field) != b.get(field):
                said.append(f"{cid} {mine_[cid]['description']}: {field.lstrip('.')} "
                            f"{a.get(field)!r} != {b.get(field)!r}")  # fmt: skip
    shared = [c for c in mine_ if c in theirs]
    if not said and shared != [c for c in theirs if c in mine_]:
        said.append("the contracts are listed in another order")
    a, b = _flat(expected["provenance"], "provenance"), _flat(actual["provenance"], "provenance")
    for field in sorted(a.keys() | b.keys()):
        if a.get(field) != b.get(field):
            said.append(f"{field}: {a.get(field)!r} != {b.get(field)!r}")
    return said


# every eligible candidate too: more of them broke on a held-out task, so counterexamples
# are compared, not only the few a budget keeps
@pytest.mark.parametrize(
    "options",
    [{}, {"run_level": True, "where": "run_outcome=success", "budget": False}],
    ids=["defaults", "run-level-successes-all-eligible"],
)
def test_every_format_gives_the_same_candidates(
    stores: dict[str, Path], options: dict[str, Any]
) -> None:
    expected = comparable(stores[VARIANTS[0]], **options)
    assert expected["contracts"], "the simulated suites give contracts to compare"
    assert not (report := against_the_first(expected, stores, **options)), "\n".join(report)


def against_the_first(
    expected: dict[str, Any], stores: dict[str, Path], **options: Any
) -> list[str]:
    """What each other variant's candidate file differs in from ``expected`` (the first
    variant's), a paragraph per variant that differs."""
    first, *others = VARIANTS
    report = []
    for name in others:
        found = differences(expected, comparable(stores[name], **options))
        if found:
            shown = "\n  ".join(found[:SHOWN])
            more = f"\n  … and {len(found) - SHOWN} more" if len(found) > SHOWN else ""
            report.append(f"{first} vs {name}: {len(found)} differences\n  {shown}{more}")
    return report


@pytest.mark.parametrize("corpus", ["agentdojo", "bfcl"])
def test_a_real_corpus_gives_the_same_candidates_in_every_format(
    corpus: str, tmp_path: Path
) -> None:
    traces = read_traces(DATA / corpus / f"{corpus}.jsonl.gz")
    stores = stored_in_every_format(runs_from_records(traces.runs, traces.calls), tmp_path, corpus)
    expected = comparable(stores[VARIANTS[0]])
    assert len(expected["contracts"]) > 500, f"{corpus} gives contracts to compare"
    assert not (report := against_the_first(expected, stores)), "\n".join(report)
