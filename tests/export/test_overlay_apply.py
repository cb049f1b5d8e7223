"""Applying an overlay whose target names a key the document lacks: one clear error,
whatever the key looks like."""

from __future__ import annotations

import pytest

from tracemine.errors import InputError
from tracemine.export import apply_overlay


@pytest.mark.parametrize("key", ["²", "9" * 5000], ids=["superscript", "5000-digits"])
def test_a_digit_like_key_that_is_not_there_selects_nothing(key: str) -> None:
    document = {"paths": {"/a": {}}, "responses": {200: {}}}
    overlay = {"actions": [{"target": f"$.paths['{key}']", "update": {"x": 1}}]}
    with pytest.raises(InputError, match="selects nothing"):
        apply_overlay(document, overlay)
