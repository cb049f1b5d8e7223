"""Search and scan: paged hits with a total count, documents, directory scans.

Planted properties: ``len(result.hits) <= args.page_size``; ``total_hits >= len(hits)``;
hits non-empty when ``result.total_hits > 0`` and the page is in range; scores in [0, 1];
``next_page`` null on the last page; ``page``, ``query``, ``doc_id`` and ``root`` echoed;
``files_matched == len(matches)`` and every match under ``args.root``; a scan is
``complete`` exactly when nothing was skipped; a document's ``word_count`` is the sum of
its sections'.
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from tracemine.simulate._core import (
    EPOCH,
    Recorder,
    hex_token,
    iso,
    new_run,
    run_start,
    task_rng,
    trial_rng,
    weighted,
    with_retry,
)

DOMAIN = "search"
TOPICS = [
    "rate limits",
    "webhooks",
    "billing exports",
    "single sign-on",
    "audit logs",
    "data retention",
    "api keys",
    "sandbox accounts",
    "bulk import",
    "regional hosting",
]
LANGUAGES = ["en", "de", "fr"]
SKIP_REASONS = ["permission_denied", "too_deep", "symlink_loop"]
EXTENSIONS = ["*.py", "*.md", "*.yaml", "*.log"]


def _document(rng: random.Random, topic: str) -> dict[str, Any]:
    doc_id = "doc-" + hex_token(rng, 8)
    sections = [
        {"heading": heading, "word_count": rng.randint(40, 900)}
        for heading in rng.sample(
            ["Overview", "Setup", "Limits", "Examples", "Troubleshooting", "Reference"],
            rng.randint(1, 4),
        )
    ]
    title = f"{topic.title()}: {rng.choice(['guide', 'reference', 'FAQ', 'changelog'])}"
    return {
        "doc_id": doc_id,
        "title": title,
        "url": f"https://docs.example.com/{topic.replace(' ', '-')}/{doc_id}",
        "language": weighted(rng, [("en", 0.8), ("de", 0.1), ("fr", 0.1)]),
        "updated_at": iso(EPOCH - timedelta(days=rng.randint(1, 700))),
        "sections": sections,
        "word_count": sum(section["word_count"] for section in sections),
    }


def _world(rng: random.Random) -> dict[str, Any]:
    topic = rng.choice(TOPICS)
    # some queries are narrow enough that nothing matches: an empty page is then correct
    count = 0 if rng.random() < 0.12 else rng.randint(1, 37)
    docs = [_document(rng, topic) for _ in range(count)]
    scores = sorted((round(rng.uniform(0.05, 1.0), 4) for _ in docs), reverse=True)
    for doc, score in zip(docs, scores, strict=True):
        doc["score"] = score
    roots = rng.sample(
        ["/srv/app", "/srv/data", "/home/ci", "/var/log/app", "/opt/tools"], rng.randint(1, 3)
    )
    return {"topic": topic, "docs": docs, "roots": roots, "pattern": rng.choice(EXTENSIONS)}


def _page(world: dict[str, Any], query: str, page: int, size: int) -> dict[str, Any]:
    docs = world["docs"]
    chunk = docs[(page - 1) * size : page * size]
    hits = [
        {
            "doc_id": d["doc_id"],
            "title": d["title"],
            "url": d["url"],
            "score": d["score"],
            "snippet": f"…{world['topic']} in {d['title'].lower()}…",
            "updated_at": d["updated_at"],
        }
        for d in chunk
    ]
    last = page * size >= len(docs)
    return {
        "query": query,
        "page": page,
        "page_size": size,
        "total_hits": len(docs),
        "hits": hits,
        "next_page": None if last else page + 1,
    }


def _scan(rng: random.Random, root: str, pattern: str, depth: int) -> dict[str, Any]:
    dirs = [root] + [
        f"{root}/{name}"
        for name in rng.sample(
            ["src", "lib", "tests", "docs", "tmp", "cache", "build"], rng.randint(1, 5)
        )
    ]
    skipped = []
    if rng.random() < 0.3:
        skipped.append({"path": f"{root}/private", "reason": rng.choice(SKIP_REASONS)})
    suffix = pattern.lstrip("*")
    matches = [
        {
            "path": f"{rng.choice(dirs)}/{hex_token(rng, 6)}{suffix}",
            "size_bytes": rng.choice([0, rng.randint(1, 400_000)]),
            "modified_at": iso(EPOCH - timedelta(hours=rng.randint(1, 5000))),
        }
        for _ in range(rng.randint(0, 12))
    ]
    return {
        "root": root,
        "pattern": pattern,
        "max_depth": depth,
        "scanned_dirs": dirs,
        "skipped": skipped,
        "files_matched": len(matches),
        "matches": matches,
        "complete": not skipped,
    }


def simulate_task(seed: int, index: int, trials: int) -> list[dict[str, Any]]:
    """Every trial of one search/scan task."""
    world_rng = task_rng(seed, DOMAIN, index)
    world = _world(world_rng)
    family = weighted(world_rng, [("research", 0.5), ("audit", 0.3), ("lookup", 0.2)])
    scan_seed = world_rng.random()
    runs = []
    for trial in range(trials):
        rng = trial_rng(seed, DOMAIN, index, trial)
        rec = Recorder(rng, run_start(index, trial))
        if family == "audit":
            instruction, final, reward = _audit(rec, world, random.Random(scan_seed))
        else:
            instruction, final, reward = _research(rec, world, deep=family == "research")
        runs.append(new_run(DOMAIN, index, trial, family, instruction, rec, final, reward))
    return runs


def _research(rec: Recorder, world: dict[str, Any], deep: bool) -> tuple[str, str, float]:
    rng = rec.rng
    query = world["topic"] if deep else f'"{world["topic"]}" exact'
    size = rng.choice([5, 10, 20]) if deep else 5
    first = with_retry(
        rec,
        "search_docs",
        {"query": query, "page": 1, "page_size": size},
        _page(world, query, 1, size),
    )
    hits = list(first["hits"])
    if deep and first["next_page"] is not None and rng.random() < 0.7:
        second = rec.call(
            "search_docs",
            {"query": query, "page": 2, "page_size": size},
            _page(world, query, 2, size),
        )
        hits += second["hits"]
    instruction = f"Find documentation about {world['topic']}."
    if not hits:
        return instruction, f"No documents mention {world['topic']}.", 1.0
    by_id = {doc["doc_id"]: doc for doc in world["docs"]}
    chosen = hits[: rng.randint(1, 3)]
    # reading the top documents at once: the ids come from the search result
    rec.batch(
        [
            ("read_document", {"doc_id": hit["doc_id"]}, _read(by_id[hit["doc_id"]]), None)
            for hit in chosen
        ]
    )
    reward = 0.0 if rng.random() < 0.08 else 1.0
    return instruction, f"The best match is {chosen[0]['title']}.", reward


def _read(doc: dict[str, Any]) -> dict[str, Any]:
    keys = ("doc_id", "title", "url", "language", "updated_at", "sections", "word_count")
    return {key: doc[key] for key in keys}


def _audit(rec: Recorder, world: dict[str, Any], srng: random.Random) -> tuple[str, str, float]:
    rng = rec.rng
    depth = rng.choice([2, 3, 5])
    scans = [(root, _scan(srng, root, world["pattern"], depth)) for root in world["roots"]]
    if len(scans) > 1 and rng.random() < 0.6:
        rec.batch(
            [
                (
                    "scan_directory",
                    {"root": root, "pattern": world["pattern"], "max_depth": depth},
                    scan,
                    None,
                )
                for root, scan in scans
            ]
        )
    else:
        for root, scan in scans:
            with_retry(
                rec,
                "scan_directory",
                {"root": root, "pattern": world["pattern"], "max_depth": depth},
                scan,
            )
    if rng.random() < 0.1:
        # a root that does not exist: the tool says so, and the agent moves on
        rec.call(
            "scan_directory",
            {"root": "/srv/missing", "pattern": world["pattern"], "max_depth": depth},
            None,
            ("not_found", "no such directory: /srv/missing"),
        )
    total = sum(scan["files_matched"] for _, scan in scans)
    incomplete = [root for root, scan in scans if not scan["complete"]]
    final = f"Found {total} files matching {world['pattern']}."
    if incomplete:
        final += f" Could not fully scan {', '.join(incomplete)}."
    return f"List every {world['pattern']} file under {', '.join(world['roots'])}.", final, 1.0
