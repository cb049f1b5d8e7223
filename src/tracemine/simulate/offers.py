"""Offers: a search tool with wide results, the shape of real search and booking exports.

``search_offers`` answers with 5–30 offers of 14 fields each, some nested (a price object,
a baggage object, a list of segments), so a call carries a few hundred values. One task
is a search, a second search with another cabin at times, a look at two or three offers
and a hold on the cheapest.

Planted properties: ``count == len(offers)`` and ``len(offers) <= args.max_results``;
``origin`` and ``destination`` echoed; prices and taxes non-negative, taxes below the
amount; ``seats_left`` in [1, 9]; ``stops == len(segments) - 1``; ``cabin`` one of four;
``get_offer`` and ``hold_offer`` echo the offer id they were given, and a hold's amount is
the offer's price.

Not part of the ``all`` suite (``simulate("offers", …)`` names it), so the suites that
were there before it produce what they did.
"""

from __future__ import annotations

import itertools
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
    weighted,
    with_retry,
)

DOMAIN = "offers"
AIRPORTS = ["AMS", "BCN", "CDG", "FRA", "JFK", "LHR", "LIS", "MAD", "MUC", "ORD", "SFO", "ZRH"]
CARRIERS = ["AF", "BA", "IB", "KL", "LH", "LX", "TP", "UA"]
CABINS = ["economy", "premium_economy", "business", "first"]
CURRENCIES = ["EUR", "USD", "GBP", "CHF"]


def _offer(rng: random.Random, origin: str, dest: str, day: int, cabin: str) -> dict[str, Any]:
    carrier = rng.choice(CARRIERS)
    stops = weighted(rng, [(0, 0.5), (1, 0.4), (2, 0.1)])
    hops = [origin, *rng.sample([a for a in AIRPORTS if a not in (origin, dest)], stops), dest]
    departs = EPOCH + timedelta(days=day, minutes=rng.randint(0, 23 * 60))
    minutes = rng.randint(70, 180) * (stops + 1)
    amount = rng.randint(4_000, 90_000) * (1 + CABINS.index(cabin))
    return {
        "offer_id": "OF-" + upper_token(rng, 10),
        "carrier": carrier,
        "flight_number": f"{carrier}{rng.randint(10, 9999)}",
        "departs_at": iso(departs),
        "arrives_at": iso(departs + timedelta(minutes=minutes)),
        "duration_minutes": minutes,
        "stops": stops,
        "cabin": cabin,
        "seats_left": rng.randint(1, 9),
        "refundable": rng.random() < 0.3,
        "price": {
            "amount_cents": amount,
            "currency": rng.choice(CURRENCIES),
            "taxes_cents": rng.randint(0, amount // 4),
        },
        "baggage": {"checked": rng.randint(0, 2), "carry_on": 1},
        "segments": [
            {"from": a, "to": b, "flight": f"{carrier}{rng.randint(10, 9999)}"}
            for a, b in itertools.pairwise(hops)
        ],
        "score": round(rng.random(), 4),
    }


def _search(rng: random.Random, world: dict[str, Any], cabin: str, limit: int) -> dict[str, Any]:
    count = min(rng.randint(5, 30), limit)
    offers = [
        _offer(rng, world["origin"], world["dest"], world["day"], cabin) for _ in range(count)
    ]
    return {"search_id": "S-" + upper_token(rng, 12), "origin": world["origin"],
            "destination": world["dest"], "count": count, "offers": offers}  # fmt: skip


def simulate_task(seed: int, index: int, trials: int) -> list[dict[str, Any]]:
    """Every trial of one offers task: the searches answer alike in every trial."""
    world_rng = task_rng(seed, DOMAIN, index)
    origin, dest = world_rng.sample(AIRPORTS, 2)
    world = {"origin": origin, "dest": dest, "day": world_rng.randint(1, 300),
             "cabin": weighted(world_rng, [(c, w) for c, w in zip(CABINS, (6, 2, 2, 1),
                                                                   strict=True)]),
             "passengers": world_rng.randint(1, 4)}  # fmt: skip
    limit = world_rng.choice([10, 20, 30])
    first = _search(world_rng, world, world["cabin"], limit)
    other = _search(world_rng, world, world_rng.choice(CABINS), limit)
    runs = []
    for trial in range(trials):
        rng = trial_rng(seed, DOMAIN, index, trial)
        rec = Recorder(rng, run_start(index, trial))
        query = {"origin": origin, "destination": dest,
                 "depart_date": (EPOCH + timedelta(days=world["day"])).date().isoformat(),
                 "passengers": world["passengers"], "max_results": limit}  # fmt: skip
        found = with_retry(rec, "search_offers", {**query, "cabin": world["cabin"]}, first)
        if rng.random() < 0.3:
            rec.call("search_offers", {**query, "cabin": other["offers"][0]["cabin"]}, other)
        offers = found["offers"]
        looked = rng.sample(offers, min(len(offers), rng.randint(2, 3)))
        for offer in looked:
            rec.call("get_offer", {"offer_id": offer["offer_id"]}, offer)
        best = min(offers, key=lambda o: o["price"]["amount_cents"])
        hold = {"hold_id": "H-" + upper_token(rng, 8), "offer_id": best["offer_id"],
                "amount_cents": best["price"]["amount_cents"],
                "currency": best["price"]["currency"],
                "expires_at": iso(rec.now + timedelta(minutes=30))}  # fmt: skip
        rec.call("hold_offer", {"offer_id": best["offer_id"],
                                "passengers": world["passengers"]}, hold)  # fmt: skip
        instruction = f"Find and hold the cheapest {world['cabin']} offer {origin}→{dest}."
        final = f"Held {best['offer_id']} for {hold['amount_cents'] / 100:.2f}."
        reward = 0.0 if rng.random() < 0.05 else 1.0
        runs.append(new_run(DOMAIN, index, trial, "hold", instruction, rec, final, reward))
    return runs
