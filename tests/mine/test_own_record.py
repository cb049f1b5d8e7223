"""A family's prior does not price a contract below what its own held-out record shows."""

from __future__ import annotations

import pytest

from tracemine.mine.evidence.crossfit import Candidate, lower_bound
from tracemine.mine.evidence.pooling import Prior, family_of
from tracemine.mine.select.budget import Settings, build_evidence
from tracemine.model.contract import Contract, Evidence, Kind, Side

SETTINGS = Settings(folds=5, target_fa=0.01, min_tasks=5, min_folds=2, crossfit=True)


def _schema(units: dict[int, tuple[float, float]]) -> Candidate:
    contract = Contract(tool="get_ticket", side=Side.RESULT, kind=Kind.SCHEMA,
                        paths=["result"], params={"schema": {"type": "object"}},
                        evidence=Evidence(calls=8, tasks=3))  # fmt: skip
    return Candidate(final=contract, units=units, tool_calls=dict.fromkeys(units, 4))


# a family whose spread the data did not pin down: a + b at its upper bound, mean 0.28 %
CONFIDENT = Prior(a=2.8, b=997.2)


def _price(entry: Candidate) -> float:
    assert entry.final is not None
    evidence = build_evidence(entry, SETTINGS, lambda key, shown: None,
                              {family_of(entry.final): CONFIDENT})  # fmt: skip
    assert evidence.fa_posterior is not None
    return evidence.fa_posterior


def test_a_schema_that_broke_on_one_of_three_held_out_tasks_is_not_priced_at_its_family() -> None:
    broke = _price(_schema({0: (1.0, 1.0), 1: (1.0, 0.0), 2: (1.0, 0.0)}))
    assert broke == pytest.approx(lower_bound(1, 3), abs=1e-6)
    assert broke > SETTINGS.target_fa  # over the tool's whole budget: not bought


def test_a_clean_record_keeps_the_pooled_price() -> None:
    clean = _price(_schema({0: (1.0, 0.0), 1: (1.0, 0.0), 2: (1.0, 0.0)}))
    assert clean == pytest.approx(CONFIDENT.posterior_mean(0, 3), abs=1e-6)
    # one break in many tasks is what the pool expects: its price stays the pool's
    many = _price(_schema({f: (40.0, 1.0 if f == 0 else 0.0) for f in range(5)}))
    assert many == pytest.approx(CONFIDENT.posterior_mean(1, 200), abs=1e-6)


def test_a_value_family_is_centred_on_its_kinds_checks_not_on_smoothing() -> None:
    from tracemine.mine.evidence.pooling import fit_families

    # ranges on a corpus of few held-out tasks a candidate: 30 ranges, none broke in 5
    # tasks each, beside type checks that broke once in 400
    counts = {
        "range/result/tasks<=10": [(0.0, 5.0)] * 30,
        "type/result/string": [(0.0, 20.0)] * 19 + [(1.0, 20.0)],
        "call_cap/run": [(0.0, 5.0)] * 30,
    }
    priors = fit_families(counts)
    ranges = priors["range/result/tasks<=10"]
    # the kind's own checks: no break in 150 task-checks; the mean of smoothed rates,
    # 0.5 / 6 ≈ 8 %, is what five held-out tasks say of anything
    assert ranges.mean < 0.02
    # a run-level family keeps the pool of every candidate as its centre
    assert priors["call_cap/run"].mean > ranges.mean


def test_a_shape_is_priced_from_the_schemas_of_its_side_and_moves_no_centre() -> None:
    from tracemine.mine.evidence.pooling import fit_families

    schemas = [(1.0, 5.0)] * 5 + [(0.0, 5.0)] * 15  # schemas that variants break
    shapes = [(0.0, 5.0)] * 60  # the same members' records read again, types only
    alone = fit_families({"schema/result": schemas, "type/result/string": [(0.0, 5.0)] * 20})
    both = fit_families({"schema/result": schemas, "type/result/string": [(0.0, 5.0)] * 20,
                         "schema/result/shape": shapes})  # fmt: skip
    for name in alone:
        assert both[name].mean == pytest.approx(alone[name].mean, rel=1e-9), name
    # centred on the schemas' pooled rate (5.5 / 101), pulled down by its own clean records
    assert 0 < both["schema/result/shape"].mean < both["schema/result"].mean
