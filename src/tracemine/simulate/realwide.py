"""Real-wide: booking and search results shaped like real exports, thousands of paths a tool.

Real recorded tool responses are wide in two ways the ``offers`` suite is not: each
record carries many optional fields (a room has a few of two hundred possible attributes),
and objects are keyed by names that recur across records (fare rules by rule name,
amenities by amenity, seat maps by seat, ``"12A"``), so one tool has thousands of
distinct paths, not a few dozen. Some maps are keyed by ids or dates (rates per day),
which the miner folds to ``{*}``.

Tools, one task a trip (five calls a run):

- ``search_flights``: 3–8 offers, each with a core of fixed fields, some of 80 fare rules
  and 40 ancillaries keyed by name, and some of 100 optional fields;
- ``get_offer``: one of those offers, as the search gave it; or, in about one task of six,
- ``get_seat_map``: a seat map keyed by seat (``"12A"``), 20–60 rows of 6–10 seats, each
  with some of 5 optional features: the results of a few thousand values;
- ``search_hotels``: hotels with room lists of many optional fields (200 possible), an
  amenity map (150 possible) and policies per locale;
- ``get_hotel_rates``: rates per room type (60 codes) and per date (a map keyed by date);
- ``book_trip``: a short confirmation echoing the chosen offer and hotel.

Planted properties: ``count == len(offers)``; prices non-negative; a booking echoes the
offer id and hotel id it was given; ``seats_total == len(seats)``.

Not part of the ``all`` suite (``simulate("realwide", …)`` names it), so the suites that
were there before it produce what they did.
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from tracemine.simulate._core import (
    EPOCH,
    Recorder,
    iso,
    new_run,
    run_start,
    task_rng,
    trial_rng,
    upper_token,
)

DOMAIN = "realwide"
_WORDS = ("free", "late", "early", "extra", "shared", "private", "open", "quiet", "city",
          "sea", "garden", "pool", "smart", "eco", "family", "club", "kids", "pet", "long",
          "short")  # fmt: skip
_NOUNS = ("wifi", "breakfast", "parking", "checkin", "checkout", "view", "bath", "desk",
          "safe", "kitchen", "balcony", "terrace", "minibar", "shuttle", "gym", "spa",
          "lounge", "crib", "bed", "tv")  # fmt: skip
_NAMES = [f"{word}_{noun}" for word in _WORDS for noun in _NOUNS]  # 400 field names
FARE_RULES = _NAMES[:80]
ANCILLARIES = _NAMES[80:120]
OFFER_FIELDS = _NAMES[120:220]
ROOM_FIELDS = _NAMES[200:400]
AMENITIES = _NAMES[::2][:150]
SEAT_FEATURES = ["extra_legroom", "power_outlet", "near_exit", "bassinet", "no_recline"]
ROOM_CODES = [f"{a}_{b}" for a in ("SGL", "DBL", "TWN", "TRP", "QUA", "STE")
              for b in ("STD", "SEA", "CTY", "GDN", "POOL", "DLX", "EXE", "ACC", "FAM",
                        "LFT")]  # fmt: skip
LOCALES = [f"{lang}_{land}" for lang in ("en", "de", "fr", "es", "it", "nl")
           for land in ("US", "GB", "DE", "FR", "ES")]  # fmt: skip
SEAT_LETTERS = "ABCDEFGHJK"
AIRPORTS = ["AMS", "BCN", "CDG", "FRA", "JFK", "LHR", "LIS", "MAD", "MUC", "ORD", "SFO"]
CURRENCIES = ["EUR", "USD", "GBP"]


def _optional(rng: random.Random, names: list[str], share: float) -> dict[str, Any]:
    """Some of ``names``, each with a value of the type its position gives it (a field
    keeps one type everywhere, as in a real schema)."""
    out: dict[str, Any] = {}
    for position, name in enumerate(names):
        if rng.random() >= share:
            continue
        kind = position % 4
        if kind == 0:
            out[name] = rng.random() < 0.5
        elif kind == 1:
            out[name] = rng.randint(0, 500)
        elif kind == 2:
            out[name] = rng.choice(("yes", "no", "on request", "included"))
        else:
            out[name] = round(rng.random() * 100, 2)
    return out


def _offer(rng: random.Random, origin: str, dest: str) -> dict[str, Any]:
    amount = rng.randint(4_000, 90_000)
    rules = rng.sample(FARE_RULES, rng.randint(10, 30))
    extras = rng.sample(ANCILLARIES, rng.randint(2, 8))
    return {
        "offer_id": "OF-" + upper_token(rng, 10),
        "origin": origin,
        "destination": dest,
        "seats_left": rng.randint(1, 9),
        "price": {
            "amount_cents": amount,
            "currency": rng.choice(CURRENCIES),
            "taxes_cents": rng.randint(0, amount // 4),
        },
        "fare_rules": {
            r: {"allowed": rng.random() < 0.6, "fee_cents": rng.randint(0, 9000)}
            for r in sorted(rules)
        },
        "ancillaries": {
            a: {"price_cents": rng.randint(0, 8000), "per_segment": rng.random() < 0.5}
            for a in sorted(extras)
        },
        **_optional(rng, OFFER_FIELDS, 0.15),
    }


def _seat_map(rng: random.Random, offer_id: str) -> dict[str, Any]:
    rows = rng.randint(20, 60)
    letters = SEAT_LETTERS[: rng.choice((6, 8, 10))]
    seats: dict[str, Any] = {}
    for row in range(1, rows + 1):
        for letter in letters:
            kind = "window" if letter in (letters[0], letters[-1]) else "aisle"
            seat: dict[str, Any] = {"available": rng.random() < 0.6, "type": kind}
            if seat["available"] and rng.random() < 0.3:
                seat["price_cents"] = rng.randint(500, 9000)
            seat.update(_optional(rng, SEAT_FEATURES, 0.25))
            seats[f"{row}{letter}"] = seat
    return {"offer_id": offer_id, "aircraft": rng.choice(("A320", "A321", "B738", "B789")),
            "seats_total": len(seats), "seats": seats}  # fmt: skip


def _hotel(rng: random.Random) -> dict[str, Any]:
    rooms = [
        {"room_code": rng.choice(ROOM_CODES), "price_cents": rng.randint(5_000, 60_000),
         **_optional(rng, ROOM_FIELDS, 0.1)}
        for _ in range(rng.randint(2, 6))
    ]  # fmt: skip
    return {
        "hotel_id": "HT-" + upper_token(rng, 8),
        "stars": rng.randint(1, 5),
        "rooms": rooms,
        "amenities": {
            a: {"included": rng.random() < 0.7}
            for a in sorted(rng.sample(AMENITIES, rng.randint(3, 15)))
        },
        "policies": {
            loc: {"text_len": rng.randint(50, 900)}
            for loc in sorted(rng.sample(LOCALES, rng.randint(1, 3)))
        },
    }


def _rates(rng: random.Random, hotel_id: str, day: int) -> dict[str, Any]:
    codes = sorted(rng.sample(ROOM_CODES, rng.randint(2, 6)))
    nights = rng.randint(1, 5)
    dates = [(EPOCH + timedelta(days=day + n)).date().isoformat() for n in range(nights)]
    return {
        "hotel_id": hotel_id,
        "by_room": {
            c: {
                "nightly_cents": rng.randint(5_000, 60_000),
                "available": rng.randint(0, 12),
                "refundable": rng.random() < 0.5,
            }
            for c in codes
        },
        "by_date": {d: {"min_cents": rng.randint(5_000, 30_000)} for d in dates},
    }


def simulate_task(seed: int, index: int, trials: int) -> list[dict[str, Any]]:
    """Every trial of one real-wide task: the searches answer alike in every trial."""
    world = task_rng(seed, DOMAIN, index)
    origin, dest = world.sample(AIRPORTS, 2)
    day = world.randint(1, 300)
    offers = [_offer(world, origin, dest) for _ in range(world.randint(3, 8))]
    found = {"origin": origin, "destination": dest, "count": len(offers), "offers": offers}
    seat_map = _seat_map(world, offers[0]["offer_id"]) if world.random() < 0.18 else None
    stays = [_hotel(world) for _ in range(world.randint(1, 3))]
    hotels = {"city": dest, "hotels": stays}
    hotel_id = stays[0]["hotel_id"]
    rates = _rates(world, hotel_id, day)
    runs = []
    for trial in range(trials):
        rng = trial_rng(seed, DOMAIN, index, trial)
        rec = Recorder(rng, run_start(index, trial))
        date = (EPOCH + timedelta(days=day)).date().isoformat()
        rec.call("search_flights", {"origin": origin, "destination": dest, "date": date}, found)
        if seat_map is not None:
            rec.call("get_seat_map", {"offer_id": seat_map["offer_id"]}, seat_map)
        else:
            look = offers[rng.randrange(len(offers))]
            rec.call("get_offer", {"offer_id": look["offer_id"]}, look)
        rec.call("search_hotels", {"city": dest, "date": date}, hotels)
        rec.call("get_hotel_rates", {"hotel_id": hotel_id, "date": date}, rates)
        best = min(offers, key=lambda o: o["price"]["amount_cents"])
        booking = {"booking_id": "BK-" + upper_token(rng, 8), "offer_id": best["offer_id"],
                   "hotel_id": hotel_id, "status": "confirmed",
                   "expires_at": iso(rec.now + timedelta(minutes=30))}  # fmt: skip
        rec.call("book_trip", {"offer_id": best["offer_id"], "hotel_id": hotel_id}, booking)
        instruction = f"Book the cheapest flight {origin}→{dest} and a hotel there."
        final = f"Booked {booking['booking_id']}."
        reward = 0.0 if rng.random() < 0.05 else 1.0
        runs.append(new_run(DOMAIN, index, trial, "trip", instruction, rec, final, reward))
    return runs
