"""Stand-ins for the personal values of the runs an incident writes as cassettes.

The incident folder is meant to be committed, so its cassettes hold no one's email, phone
or name: every value that mining would never list literally
(:func:`tracemine.mine.profile.formats.looks_personal`, with the words of its path) is
replaced by a stand-in of the same kind and shape — an email by an email at
``example.com``, a phone by as many digits with the same separators, a card by a
Luhn-valid number of the same length (an integer stays an integer), an IBAN by one whose
checksum holds, a name by as many capitalised words. Free text (a result that is prose,
an error message) has its emails and numbers replaced the same way.

The same value gets the same stand-in everywhere in the incident, so the relations the
contracts state (an argument echoed in the result, a customer's email across calls) still
hold. Stand-ins are keyed with a digest of the recorded runs themselves: writing the same
incident again gives the same bytes, and no one holding only the cassettes can test a guess
(a phone number has few enough values to try them all against an unkeyed hash).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from tracemine.mine.profile.formats import looks_personal, name_tokens
from tracemine.model.personal import personal_kind

_LETTERS = "bcdfghjklmnprstvwz"
_VOWELS = "aeiou"
_TEXT_EMAIL = re.compile(r"[\w.%+-]+@[\w-]+(?:\.[\w-]+)+")
_TEXT_NUMBER = re.compile(r"(?<![\w#.])\+?\(?(?:\d[ ().-]{0,2}){7,18}\d\b")


class StandIns:
    """Replaces personal values in call records; see the module docstring."""

    def __init__(self, records: Sequence[Mapping[str, Any]]) -> None:
        self._key = hashlib.sha256(orjson.dumps(list(records), default=str)).digest()
        self._made: dict[tuple[str, object], object] = {}

    @property
    def replaced(self) -> int:
        """Distinct values replaced so far."""
        return len(self._made)

    def record(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of a call record with its arguments, result and error message screened."""
        out = dict(record)
        for side in ("arguments", "result"):
            if side in out:
                out[side] = self.value(out[side], "args" if side == "arguments" else "result")
        if isinstance(out.get("error_message"), str):
            out["error_message"] = self.text(out["error_message"])
        return out

    def value(self, value: Any, path: str) -> Any:
        if isinstance(value, dict):
            return {k: self.value(v, f"{path}.{k}") for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v, f"{path}[]") for v in value]
        if isinstance(value, bool) or not isinstance(value, int | str):
            return value
        if isinstance(value, int) and value.bit_length() > 80:
            return value  # no person's number is this long (and str() of it may raise)
        if looks_personal(value, name_tokens(path)):
            return self._stand_in(value)
        if isinstance(value, str):
            return self.text(value)
        return value

    def text(self, text: str) -> str:
        """``text`` with the emails and person-like numbers inside it replaced."""
        if "@" not in text and not any(c.isdigit() for c in text):
            return text
        text = _TEXT_EMAIL.sub(lambda m: str(self._stand_in(m.group())), text)
        return _TEXT_NUMBER.sub(self._number_in_text, text)

    def _number_in_text(self, match: re.Match[str]) -> str:
        found = match.group()
        if personal_kind(found.strip()) is None:
            return found
        return str(self._stand_in(found))

    # -- stand-ins ------------------------------------------------------------------------
    def _stand_in(self, value: int | str) -> object:
        key = (type(value).__name__, value)
        made = self._made.get(key)
        if made is None:
            made = self._make(value)
            self._made[key] = made
        return made

    def _stream(self, value: object) -> bytes:
        return hmac.new(self._key, repr(value).encode(), hashlib.sha256).digest() * 4

    def _make(self, value: int | str) -> object:
        stream = self._stream(value)
        if isinstance(value, int):
            digits = _digits(str(abs(value)), stream)
            if personal_kind(value) == "card":
                digits = _luhn_fixed(digits)
            number = int(digits)
            return -number if value < 0 else number
        kind = personal_kind(value)
        if kind == "email":
            return _email(stream)
        if kind == "name-email":
            return f"{_name(stream, 2)} <{_email(stream[8:])}>"
        if kind == "iban":
            return _iban(value.strip(), stream)
        if kind == "name":
            words = value.split()
            if len(words) == 1:  # one joined word: O'Brien-Smith
                return f"{_word(stream, 5).capitalize()}-{_word(stream[5:], 5).capitalize()}"
            return _name(stream, len(words))
        if kind == "card":
            return _luhn_fixed(_digits(value, stream))
        if kind in ("phone", "id-number") or any(c.isdigit() for c in value):
            return _digits(value, stream)
        return f"redacted-{stream[:4].hex()}"  # a string under a path about a person


def _digits(text: str, stream: bytes) -> str:
    """``text`` with each digit replaced from ``stream``, separators kept, a leading
    digit never zero (a number keeps its length)."""
    out: list[str] = []
    for n, char in enumerate(text):
        if char.isdigit():
            digit = stream[n % len(stream)] % 10
            if not out or not any(c.isdigit() for c in out):
                digit = 1 + stream[n % len(stream)] % 9
            out.append(str(digit))
        else:
            out.append(char)
    return "".join(out)


def _luhn_fixed(text: str) -> str:
    """``text`` with its last digit set so that its digits pass the Luhn check."""
    positions = [n for n, c in enumerate(text) if c.isdigit()]
    digits = [int(text[n]) for n in positions[:-1]]
    total = 0
    for n, digit in enumerate(reversed(digits)):
        doubled = digit * 2 if n % 2 == 0 else digit
        total += doubled - 9 if doubled > 9 else doubled
    check = (10 - total % 10) % 10
    last = positions[-1]
    return text[:last] + str(check) + text[last + 1 :]


def _word(stream: bytes, letters: int) -> str:
    chars = [(_LETTERS if n % 2 == 0 else _VOWELS)[b % (len(_LETTERS) if n % 2 == 0 else 5)]
             for n, b in enumerate(stream[:letters])]  # fmt: skip
    return "".join(chars)


def _name(stream: bytes, words: int) -> str:
    return " ".join(_word(stream[4 * n :], 5).capitalize() for n in range(min(words, 4)))


def _email(stream: bytes) -> str:
    return f"{_word(stream, 6)}.{_word(stream[6:], 5)}@example.com"


def _iban(text: str, stream: bytes) -> str:
    compact = text.replace(" ", "")
    country, body = compact[:2], _digits(compact[4:], stream)
    moved = body + country + "00"
    remainder = int("".join(str(int(c, 36)) for c in moved)) % 97
    return f"{country}{98 - remainder:02d}{body}"
