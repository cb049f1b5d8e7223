"""Template families: each module holds small pure functions that take a
:class:`~tracemine.mine.propose.context.MineContext` and return candidate contracts.

``TEMPLATES`` runs them in order; a new family is a module here and an entry below.
"""

from __future__ import annotations

from collections.abc import Callable

from tracemine.mine.propose.context import MineContext
from tracemine.mine.propose.templates import conditional, relational, scales, strings, unary
from tracemine.model.contract import Contract

Template = Callable[[MineContext], list[Contract]]

TEMPLATES: tuple[Template, ...] = (
    unary.presence,
    unary.types,
    unary.signs,
    unary.ranges,
    unary.sizes,
    unary.uniqueness,
    strings.literals,
    strings.formats,
    strings.patterns,
    relational.relations,
    scales.ratios,
    conditional.conditions,
)


def propose(ctx: MineContext) -> list[Contract]:
    """Every template's candidates for one context."""
    out: list[Contract] = []
    for template in TEMPLATES:
        out.extend(template(ctx))
    return out
