"""Cards as one self-contained HTML fragment for the notebook: the same items as
``tracemine review cards``, styled inline (no stylesheet or script fetched from anywhere,
so it reads the same offline and in a saved notebook)."""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from tracemine.review.cards import Card, Item

_STYLE = """<style>
.tm-card{font-family:sans-serif;border:1px solid #bbb;border-radius:6px;padding:8px 12px;
 margin:10px 0}
.tm-card h3{margin:2px 0 6px 0}
.tm-item{margin:6px 0 8px 0}
.tm-item .tm-id{font-family:monospace;color:#555}
.tm-status{padding:1px 6px;border-radius:4px;color:#fff;font-size:85%}
.tm-undecided{background:#757575}.tm-accepted{background:#2e7d32}.tm-rejected{background:#c62828}
.tm-muted{background:#f9a825}.tm-mixed{background:#6a1b9a}.tm-changed{background:#ef6c00}
.tm-lines{font-family:monospace;font-size:90%;margin:2px 0 0 18px}
.tm-ev{color:#666}.tm-not-kept{color:#666;font-style:italic}
</style>"""


def cards_html(cards: Iterable[Card], *, pending: dict[str, str] | None = None) -> str:
    """HTML for ``cards``; ``pending`` (item id → status) marks what a save would record.

    >>> IPython.display.HTML(cards_html(build_cards(contracts)))  # doctest: +SKIP
    """
    body = "".join(_card(card, pending or {}) for card in cards)
    return f'{_STYLE}<div class="tm-cards">{body}</div>'


def _card(card: Card, pending: dict[str, str]) -> str:
    contracts = sum(len(i.contracts) for i in card.items)
    items = "".join(_item(item, pending.get(item.item)) for item in card.items)
    not_kept = f'<div class="tm-not-kept">{escape(card.not_kept)}</div>' if card.not_kept else ""
    return (f'<div class="tm-card"><h3>{escape(card.tool)} <small>{len(card.items)} items, '
            f"{contracts} contracts</small></h3>{items}{not_kept}</div>")  # fmt: skip


def _item(item: Item, pending: str | None) -> str:
    status = escape(item.status)
    will = f" → <b>{escape(pending)}</b> when saved" if pending else ""
    lines = "".join(
        f'<div style="padding-left:{1.5 * line.depth}em">{escape(line.claim)}'
        + (f' <span class="tm-ev">({escape(line.evidence)})</span>' if line.evidence else "")
        + "</div>"
        for line in item.lines
    )
    return (f'<div class="tm-item"><span class="tm-status tm-{status}">{status}</span> '
            f'<span class="tm-id">{escape(item.item)}</span> {escape(item.title)}{will}'
            f'<div class="tm-lines">{lines}</div></div>')  # fmt: skip
