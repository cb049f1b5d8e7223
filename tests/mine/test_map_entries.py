"""A map's entries are the names its call asked for: ``get_hotels_prices(hotel_names)``
returns one entry per hotel named, keyed by the name. Mined as ``subset`` both ways
between the argument and ``keys(result)``, and part of the tool's schema, which reaches
a tool of one task."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tracemine.mine import mine
from tracemine.model.contract import Contract, Kind
from tracemine.monitor import Monitor

from helpers import store_calls

NAMES = ["Speedy Rentals", "SunSet Rent-A-Car", "LAX Car Rental", "Green Motion", "City Cars",
         'Chez "Ami" Jean', "Back\\Slash Autos", "Hertz", "Rent A Wreck", "Nice Drive"]  # fmt: skip


def _entries(contracts: list[Contract], tool: str) -> dict[tuple[str, ...], Contract]:
    return {tuple(c.paths): c for c in contracts if c.tool == tool and c.kind == Kind.SUBSET
            and any(p.startswith("keys(") for p in c.paths)}  # fmt: skip


def _prices(i: int) -> tuple[dict[str, Any], dict[str, float]]:
    chosen = [NAMES[(i + j) % len(NAMES)] for j in range(1 + i % 3)]
    return {"company_name": chosen}, {name: 40.0 + i + j for j, name in enumerate(chosen)}


def test_a_map_keyed_by_the_names_asked_for_is_mined_both_ways(tmp_path: Path) -> None:
    calls = [(f"t{i}", "price_per_day", *_prices(i)) for i in range(30)]
    found = mine(store_calls(tmp_path, calls), budget=False)
    entries = _entries(found.contracts, "price_per_day")
    assert set(entries) == {("args.company_name", "keys(result)"),
                            ("keys(result)", "args.company_name")}  # fmt: skip
    monitor = Monitor.from_dict(found.model_dump(mode="json"), include_proposed=True)
    asked = {"company_name": ["Nobody Seen", 'Chez "Ami" Jean']}
    assert monitor.check("price_per_day", asked, {"Nobody Seen": 45.0,
                                                  'Chez "Ami" Jean': 46.0}).ok  # fmt: skip
    dropped = monitor.check("price_per_day", asked, {"Nobody Seen": 45.0})
    assert [v.contract_id for v in dropped.violations] == \
        [entries[("args.company_name", "keys(result)")].id]  # fmt: skip
    extra = monitor.check("price_per_day", asked, {"Nobody Seen": 45.0, 'Chez "Ami" Jean': 46.0,
                                                   "Hertz": 47.0})  # fmt: skip
    assert [v.contract_id for v in extra.violations] == \
        [entries[("keys(result)", "args.company_name")].id]  # fmt: skip


def test_a_direction_that_broke_is_not_mined(tmp_path: Path) -> None:
    # companies the tool does not know get no entry: every entry was asked for, but not
    # every name asked for has an entry
    calls = []
    for i in range(30):
        arguments, result = _prices(i)
        if i % 4 == 0:
            arguments = {"company_name": [*arguments["company_name"], "Unknown Cars"]}
        calls.append((f"t{i}", "price_per_day", arguments, result))
    found = mine(store_calls(tmp_path, calls), budget=False)
    assert set(_entries(found.contracts, "price_per_day")) == {
        ("keys(result)", "args.company_name")
    }


def test_a_tool_of_one_task_gets_its_entries_in_its_schema(tmp_path: Path) -> None:
    # one task cannot show the keys change, but it shows they are the names it asked for;
    # the schema carries that, priced from the pool of every tool's schema
    calls = [(f"t{i}", "price_per_day", *_prices(i)) for i in range(30)]
    arguments = {"company_name": ["SunSet Rent-A-Car", "LAX Car Rental"]}
    result = {"SunSet Rent-A-Car": ["Sedan", "SUV"], "LAX Car Rental": ["Sedan", "Truck"]}
    calls += [("t0", "car_types", arguments, result)] * 2
    found = mine(store_calls(tmp_path, calls))
    entries = _entries(found.contracts, "car_types")
    schemas = {c.id for c in found.contracts if c.tool == "car_types" and c.kind == Kind.SCHEMA
               and c.side.value == "result"}  # fmt: skip
    member = entries.get(("args.company_name", "keys(result)"))
    assert member is not None and schemas and member.folded_into in schemas
    monitor = Monitor.from_dict(found.model_dump(mode="json"), include_proposed=True)
    assert monitor.check("car_types", arguments, result).ok
    assert not monitor.check("car_types", arguments, {"SunSet Rent-A-Car": ["Sedan"]}).ok
