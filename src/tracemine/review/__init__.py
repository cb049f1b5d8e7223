"""Stage: review. A person's decisions about candidate contracts, kept in a file beside
them and keyed by stable contract id; a polars view and charts for the notebook.

    decisions.py   the review file (YAML), evidence digests, recording decisions
    apply.py       applying decisions, flagging stale ones, choosing contracts
    cards.py       one card per tool: a few items, each one decision
    html.py        the cards as self-contained HTML for the notebook
    frame.py       contracts as a polars DataFrame, summaries
    plots.py       altair charts (support vs held-out violations, per-tool coverage)

>>> contracts, review, path = load_reviewed("mined_contracts/candidates.json")  # doctest: +SKIP
>>> decide(review, find_contracts(contracts, ["c_8c7c"]), "accepted")  # doctest: +SKIP
>>> save_review(review, path)  # doctest: +SKIP
"""

from tracemine.review.apply import (
    apply_review,
    filter_contracts,
    find_contracts,
    is_stale,
    load_reviewed,
)
from tracemine.review.cards import BRIEF_LEGEND, Card, Item, build_cards, cards_json, find_items
from tracemine.review.decisions import (
    ReviewEntry,
    ReviewFile,
    decide,
    default_reviewer,
    evidence_digest,
    load_review,
    review_path,
    save_review,
)
from tracemine.review.frame import contracts_frame, evidence_frame, summarise
from tracemine.review.html import cards_html
from tracemine.review.plots import coverage_chart, support_chart

__all__ = [
    "BRIEF_LEGEND",
    "Card",
    "Item",
    "ReviewEntry",
    "ReviewFile",
    "apply_review",
    "build_cards",
    "cards_html",
    "cards_json",
    "contracts_frame",
    "coverage_chart",
    "decide",
    "default_reviewer",
    "evidence_digest",
    "evidence_frame",
    "filter_contracts",
    "find_contracts",
    "find_items",
    "is_stale",
    "load_review",
    "load_reviewed",
    "review_path",
    "save_review",
    "summarise",
    "support_chart",
]
