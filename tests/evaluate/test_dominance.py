"""Dominance over a plain schema (issue #29): on every bundled simulator suite and on the
real corpora under ``data/``, the cross-fitted arm detects at least what the
``inferred-schema`` arm (GenSON, no statistics) detects in every structural fault class
and on average over the covered classes, with no more false alarms on nominal calls.

Both arms are scored by one ``evaluate`` on the same split and the same faulted runs, so
counts are compared as they are, without a margin. One evaluation per corpus serves all
its checks; a test names every breach with its figures. Every corpus falls short on
structure today (figures in ``docs/selection.md``): the strict ``xfail`` marks say why,
and turn into failures to remove once the cause is fixed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tracemine.evaluate import EvaluationReport, evaluate
from tracemine.faults import FaultClass, FaultGroup

ROOT = Path(__file__).resolve().parents[2]
STRUCTURAL = [c.value for c in FaultClass if c.group == FaultGroup.STRUCTURAL] + [
    # filed as semantic, but what it breaks is the result's shape (text where an object
    # was): issue #29 counts it among the structural classes a schema sees fully
    FaultClass.HTML_ERROR_PAGE.value
]
TRACES = {"agentdojo": ROOT / "data/agentdojo/agentdojo.jsonl.gz",
          "bfcl": ROOT / "data/bfcl/bfcl.jsonl.gz"}  # fmt: skip

_PER_PATH = (
    "structural contracts are mined and priced path by path: fields of optional elements "
    "and of tools with few tasks keep no type/present/not_null contract within the budget, "
    "where one schema per tool covers them (issue #29 item 1)"
)
_NULLABLE = (
    "no `type` is mined for a value that is a string or null (one JSON type only), where "
    'GenSON types it ["null", "string"] and so catches a list'
)
_ONE_TASK = "a tool of one mining task gets no candidate at all (templates need 2 tasks)"
_NAME_KEYED = (
    'name-keyed results ({"New Car Rental": 50.0}) are mined key by key, not as map '
    "entries, so a fold's schema requires the names its tasks saw and breaks on the next task"
)


def _corpus(name: str, *, slow: bool = False, fails: str | None = _PER_PATH) -> object:
    """One corpus; ``fails``: why it fails today (strict: a pass is reported, so that the
    mark is removed when the cause is fixed)."""
    # the 100- and 300-task corpora take minutes: `make test-heavy` runs them
    marks = [pytest.mark.slow, pytest.mark.heavy] if slow else []
    if fails:
        marks.append(pytest.mark.xfail(strict=True, raises=AssertionError, reason=fails))
    return pytest.param(name, marks=marks, id=name)


CORPORA = [
    _corpus("commerce-40", fails=(
        f"{_ONE_TASK}: list_items (3 calls, 1 task) misses 3 omitted, 1 null, 2 wrong types "
        f"and 2 HTML pages; {_NULLABLE}: 3 wrong types on search_orders "
        "result.status_filter and get_order result.gift_message")),
    _corpus("search-40", fails=f"{_NULLABLE}: wrong_type 35/36 against 36/36 on "
            "search_docs result.next_page (an integer or null)"),
    _corpus("travel-40", fails=f"{_NULLABLE}: wrong_type 35/36 against 36/36 on "
            "search_flights result.flights[*].operated_by"),
    _corpus("commerce-100", slow=True), _corpus("search-100", slow=True),
    _corpus("travel-100", slow=True),
    _corpus("commerce-300", slow=True), _corpus("search-300", slow=True),
    _corpus("travel-300", slow=True),
    _corpus("agentdojo", fails=(
        f"{_ONE_TASK} (check_restaurant_opening_hours, get_car_types_available); "
        f"{_NAME_KEYED}: get_restaurants_address's schema is priced 7.9% from that, "
        "get_car_price_per_day's misses a null and a string under a name it did not see")),
    _corpus("bfcl", fails=(
        f"{_ONE_TASK} (add_contact, edit_ticket); get_ticket (3 tasks) returns tickets of two "
        "shapes, one of 3 held-out tasks broke its fold's schema, priced 12.7%, over budget")),
]  # fmt: skip


def _evaluate(corpus: str, out: Path) -> EvaluationReport:
    if corpus in TRACES:
        return evaluate(traces=[TRACES[corpus]], out=out)
    suite, tasks = corpus.split("-")
    return evaluate(suite=suite, tasks=int(tasks), out=out)


def breaches(report: EvaluationReport) -> list[str]:
    """Where the cross-fitted arm does worse than the inferred schema, with the figures."""
    schema, crossfit = report.arm("inferred-schema"), report.arm("mined-crossfit")
    assert schema.available and crossfit.available, (schema.note, crossfit.note)
    found = []
    for name in STRUCTURAL:
        ours, theirs = crossfit.row(name), schema.row(name)
        assert ours is not None and theirs is not None
        if ours.detection.k < theirs.detection.k:
            found.append(f"{name}: {ours.detection.k}/{ours.injected} detected against the "
                         f"schema's {theirs.detection.k}/{theirs.injected}")  # fmt: skip
    ours_mean, theirs_mean = crossfit.detection_covered or 0.0, schema.detection_covered or 0.0
    if ours_mean < theirs_mean:
        found.append(f"mean detection over covered classes {ours_mean:.1%} against the "
                     f"schema's {theirs_mean:.1%}")  # fmt: skip
    if crossfit.false_alarms.k > schema.false_alarms.k:
        found.append(f"false alarms {crossfit.false_alarms.text(2)} against the schema's "
                     f"{schema.false_alarms.text(2)}")  # fmt: skip
    return found


@pytest.mark.parametrize("corpus", CORPORA)
def test_crossfit_dominates_the_inferred_schema(
    corpus: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    report = _evaluate(corpus, tmp_path_factory.mktemp(corpus))
    found = breaches(report)
    assert not found, f"{corpus}: " + "; ".join(found)
