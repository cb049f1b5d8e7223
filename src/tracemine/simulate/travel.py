"""Travel and money: flights, fares in ISO currencies, exchange rates, bookings.

Planted properties: IATA codes echoed from the arguments; flight ids shaped two letters +
3–4 digits; ``arrive_at`` after ``depart_at`` and on or after ``args.date``; fares in
cents, positive, with a currency from a small set; ``seats_left`` non-negative; exchange
rates positive with ``base``/``quote`` echoed; a booking's ``total.amount_cents`` equal to
``args.fare_cents`` times the number of passengers; ``book_flight`` only after a
``search_flights`` that returned that flight; cancellations refund a non-negative amount
no larger than what was paid.
"""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta
from typing import Any

from tracemine.simulate._core import (
    EPOCH,
    Recorder,
    digits,
    iso,
    new_run,
    run_start,
    task_rng,
    trial_rng,
    upper_token,
    weighted,
    with_retry,
)

DOMAIN = "travel"
AIRPORTS = {
    "LHR": "GBP",
    "CDG": "EUR",
    "FRA": "EUR",
    "JFK": "USD",
    "SFO": "USD",
    "NRT": "JPY",
    "SYD": "AUD",
    "AMS": "EUR",
}
CARRIERS = ["BA", "AF", "LH", "UA", "JL", "QF", "KL"]
CABINS = ["economy", "premium_economy", "business"]
RATES_TO_USD = {"USD": 1.0, "EUR": 1.08, "GBP": 1.27, "JPY": 0.0066, "AUD": 0.66}


def _flights(rng: random.Random, origin: str, dest: str, day: date, cabin: str) -> list[dict]:
    currency = AIRPORTS[origin]
    scale = {"economy": 1, "premium_economy": 2, "business": 5}[cabin]
    flights = []
    for _ in range(rng.randint(0, 6)):
        depart = datetime(
            day.year,
            day.month,
            day.day,
            rng.randint(5, 22),
            rng.choice([0, 15, 30, 45]),
            tzinfo=EPOCH.tzinfo,
        )
        arrive = depart + timedelta(minutes=rng.randint(55, 900))
        base = rng.randint(8_000, 60_000) * scale
        if currency == "JPY":
            base *= 100  # yen have no minor unit in practice; fares are still integers
        fare: dict[str, Any] = {"amount_cents": base, "currency": currency}
        if rng.random() < 0.3:
            fare["taxes_cents"] = rng.randint(1_000, 9_000)  # optional breakdown
        flights.append(
            {
                "flight_id": rng.choice(CARRIERS) + digits(rng, rng.choice([3, 4])),
                "depart_at": iso(depart),
                "arrive_at": iso(arrive),
                "cabin": cabin,
                "fare": fare,
                "seats_left": rng.randint(0, 9),
                "operated_by": rng.choice(CARRIERS) if rng.random() < 0.2 else None,
            }
        )
    return flights


def _world(rng: random.Random) -> dict[str, Any]:
    origin, dest = rng.sample(sorted(AIRPORTS), 2)
    day = EPOCH.date() + timedelta(days=rng.randint(3, 120))
    cabin = weighted(rng, [("economy", 0.7), ("premium_economy", 0.15), ("business", 0.15)])
    flights = _flights(rng, origin, dest, day, cabin)
    passengers = [
        "p_" + digits(rng, 5) for _ in range(weighted(rng, [(1, 0.6), (2, 0.3), (3, 0.1)]))
    ]
    return {
        "origin": origin,
        "dest": dest,
        "date": day.isoformat(),
        "cabin": cabin,
        "flights": flights,
        "passengers": passengers,
        "home": rng.choice(sorted(RATES_TO_USD)),
    }


def _search_result(world: dict[str, Any]) -> dict[str, Any]:
    return {
        "origin": world["origin"],
        "destination": world["dest"],
        "date": world["date"],
        "cabin": world["cabin"],
        "count": len(world["flights"]),
        "flights": world["flights"],
    }


def simulate_task(seed: int, index: int, trials: int) -> list[dict[str, Any]]:
    """Every trial of one travel task."""
    world_rng = task_rng(seed, DOMAIN, index)
    world = _world(world_rng)
    family = weighted(
        world_rng, [("book_trip", 0.5), ("convert_and_book", 0.25), ("manage_booking", 0.25)]
    )
    booking_seed = world_rng.random()
    runs = []
    for trial in range(trials):
        rng = trial_rng(seed, DOMAIN, index, trial)
        rec = Recorder(rng, run_start(index, trial))
        brng = random.Random(booking_seed)
        if family == "manage_booking":
            instruction, final, reward = _manage(rec, world, brng)
        else:
            instruction, final, reward = _book(rec, world, brng, family == "convert_and_book")
        runs.append(new_run(DOMAIN, index, trial, family, instruction, rec, final, reward))
    return runs


def _booking(brng: random.Random, world: dict[str, Any], flight: dict[str, Any]) -> dict:
    fare = flight["fare"]["amount_cents"]
    people = world["passengers"]
    return {
        "booking_id": "BK-" + upper_token(brng, 6),
        "flight_id": flight["flight_id"],
        "status": weighted(brng, [("confirmed", 0.85), ("waitlisted", 0.15)]),
        "passengers": [
            {"passenger_id": p, "seat": f"{brng.randint(3, 40)}{brng.choice('ABCDEF')}"}
            for p in people
        ],
        "total": {"amount_cents": fare * len(people), "currency": flight["fare"]["currency"]},
        "created_at": iso(EPOCH + timedelta(minutes=brng.randint(0, 10_000))),
    }


def _rate(base: str, quote: str) -> dict[str, Any]:
    rate = round(RATES_TO_USD[base] / RATES_TO_USD[quote], 6)
    return {"base": base, "quote": quote, "rate": rate, "as_of": EPOCH.date().isoformat()}


def _book(rec: Recorder, world: dict[str, Any], brng: random.Random, convert: bool) -> tuple:
    rng = rec.rng
    args = {
        "origin": world["origin"],
        "destination": world["dest"],
        "date": world["date"],
        "cabin": world["cabin"],
    }
    found = with_retry(rec, "search_flights", args, _search_result(world))
    instruction = (
        f"Book a {world['cabin']} flight {world['origin']}→{world['dest']} on {world['date']}."
    )
    open_flights = [f for f in found["flights"] if f["seats_left"] >= len(world["passengers"])]
    if not open_flights:
        return instruction, "No flight has enough seats that day.", 1.0
    flight = min(open_flights, key=lambda f: f["fare"]["amount_cents"])
    currency = flight["fare"]["currency"]
    if convert and currency != world["home"]:
        rec.call(
            "get_exchange_rate",
            {"base": currency, "quote": world["home"]},
            _rate(currency, world["home"]),
        )
    booking = _booking(brng, world, flight)
    book_args = {
        "flight_id": flight["flight_id"],
        "passenger_ids": world["passengers"],
        "fare_cents": flight["fare"]["amount_cents"],
        "currency": currency,
    }
    if rng.random() < 0.08:
        rec.call(
            "book_flight",
            book_args,
            None,
            ("fare_changed", "the fare changed since the search; search again"),
        )
        rec.call("search_flights", args, _search_result(world))
    rec.call("book_flight", book_args, booking)
    reward = 0.0 if rng.random() < 0.07 else 1.0
    return instruction, f"Booked {booking['booking_id']} on {flight['flight_id']}.", reward


def _manage(rec: Recorder, world: dict[str, Any], brng: random.Random) -> tuple:
    rng = rec.rng
    # a booking made earlier: when the route has no flight that day, one existed then
    flight = (world["flights"] or _fallback_flights(brng, world))[0]
    booking = _booking(brng, world, flight)
    booking_id = booking["booking_id"]
    rec.call("get_booking", {"booking_id": booking_id}, booking)
    paid = booking["total"]["amount_cents"]
    fee = brng.choice([0, 2_500, 7_500])
    cancel = {
        "booking_id": booking_id,
        "status": "cancelled",
        "refund": {"amount_cents": max(paid - fee, 0), "currency": booking["total"]["currency"]},
        "cancelled_at": iso(rec.now),
    }
    home = world["home"]
    if rng.random() < 0.3 and home != booking["total"]["currency"]:
        rate = _rate(booking["total"]["currency"], home)
        rec.batch(
            [
                ("cancel_booking", {"booking_id": booking_id}, cancel, None),
                (
                    "get_exchange_rate",
                    {"base": booking["total"]["currency"], "quote": home},
                    rate,
                    None,
                ),
            ]
        )
    else:
        rec.call("cancel_booking", {"booking_id": booking_id}, cancel)
    return f"Cancel booking {booking_id}.", f"Booking {booking_id} is cancelled.", 1.0


def _fallback_flights(brng: random.Random, world: dict[str, Any]) -> list[dict[str, Any]]:
    day = date.fromisoformat(world["date"])
    while True:
        flights = _flights(brng, world["origin"], world["dest"], day, world["cabin"])
        if flights:
            return flights
