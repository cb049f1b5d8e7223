"""Values about a person: what is never written as a literal (a ``one_of``, a ``const``, a
predicate's value) and what violation output redacts. Standard library only: the monitor
shares it.

:func:`personal_kind` names what a value looks like — ``"email"``, ``"name-email"``
(``Name <email>``), ``"card"`` (12–19 digits, Luhn-valid, as a JSON number or a string),
``"phone"`` (``+`` and 8–15 digits, or a national shape such as ``(555) 123-4567`` or ten
bare digits), ``"id-number"`` (``123-45-6789``), ``"iban"`` (checksum-valid) or ``"name"``
(two to four words of letters in any script and case, or one ``O'Brien-Smith``) — or None.

>>> personal_kind("john smith"), personal_kind(4111111111111111), personal_kind("in_stock")
('name', 'card', None)

Names are the guess: a person's name is words, and so are many enum values. A run of words
is not a name when every word is a word of the vocabulary below (``pending review``,
``Next Day Air``, ``out of stock``), when only its first word is capitalised (a message:
``Comment added successfully``) or when it has more than four (prose). That keeps
enum-like values and flags ``New York``: a place is an address, and an address is not
listed either.
"""

from __future__ import annotations

import re

__all__ = ["COMMON_WORDS", "looks_like_person", "personal_kind", "redact_text"]

_EMAIL = r"[^@\s<>\"]+@[^@\s.<>\"]+(?:\.[^@\s.<>\"]+)+"
_EMAIL_RE = re.compile(_EMAIL)
_NAME_EMAIL_RE = re.compile(r"[^<>@]*<\s*" + _EMAIL + r"\s*>")
_NUMBERISH = re.compile(r"\+?[0-9 ().\-/]+")
_SEPARATORS = re.compile(r"[ ().\-/]+")
_ID_NUMBER = re.compile(r"\d{3}-\d{2}-\d{4}")
_DATE = re.compile(r"\d{4}([-/.])\d{1,2}\1\d{1,2}|\d{1,2}([-/.])\d{1,2}\2\d{2,4}")
_IPV4 = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
_IBAN = re.compile(r"[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}")
# a word: letters of any script, joined inside by an apostrophe or a hyphen, an initial
# may end in a dot (J. Smith)
_WORD = r"[^\W\d_]+(?:['’\-][^\W\d_]+)*\.?"
_WORDS = re.compile(_WORD + r"(?: " + _WORD + r"){1,3}")
_JOINED = re.compile(r"[^\W\d_]+(?:['’\-][^\W\d_]+)+")
MAX_TEXT = 120
"""Longer strings are prose or documents, not a value about one person."""


def _vocabulary(text: str) -> frozenset[str]:
    return frozenset(text.split())


COMMON_WORDS = _vocabulary(
    """
    a an the of in on at to for from by with without via per and or not no non out off up
    down over under into onto is are be been was has have all any some none each every
    new old open opened closed close pending active inactive enabled disabled on hold
    ready done complete completed incomplete failed failure success successful error
    errors ok okay valid invalid unknown other default custom manual auto automatic
    approved rejected declined accepted cancelled canceled refunded partially partial
    full fully paid unpaid due overdue draft published archived deleted removed expired
    review reviewed under progress started stopped paused running queued scheduled
    waiting processing processed shipped delivered returned transit stock available
    unavailable sold back order ordered reserved confirmed unconfirmed verified
    unverified blocked unblocked locked unlocked found missing not
    high low medium normal urgent critical minor major standard express priority
    economy business first class premium basic free trial plan tier level
    day days week weeks month months year years hour hours minute minutes next same
    last previous current today tomorrow yesterday morning evening night air ground
    sea mail email post office home work mobile phone fax
    credit debit card cash bank transfer wire check cheque account balance payment
    invoice refund charge fee tax total amount price cost discount coupon gift
    user admin guest owner member customer client vendor supplier staff team group
    public private internal external shared read write only exec execute
    yes true false null empty blank see more less
    north south east west central left right top bottom front middle inside outside
    small large big extra size color colour red green blue black white yellow grey gray
    type kind mode status state stage step phase test production sandbox live
    added created updated sent received successfully
    united states kingdom
    """
)
"""Words of enum-like values; a run of words made only of these is not a name."""


def _luhn(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char) * (2 if position % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def _iban(text: str) -> bool:
    compact = text.replace(" ", "").upper()
    if not _IBAN.fullmatch(compact):
        return False
    moved = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def _number_kind(text: str, bare: bool) -> str | None:
    """A card or phone number among digits and separators (``bare``: a JSON number)."""
    digits = "".join(c for c in text if c.isdigit())
    if 12 <= len(digits) <= 19 and _luhn(digits) and not text.startswith("+"):
        return "card"
    if bare:
        return None  # a JSON number is a count, an amount or a time, unless a card
    if _ID_NUMBER.fullmatch(text):
        return "id-number"
    if _DATE.fullmatch(text) or _IPV4.fullmatch(text):
        return None
    if text.startswith("+"):
        return "phone" if 8 <= len(digits) <= 15 else None
    if text.isdigit():  # ten bare digits and more: a national number, with or without 0
        return "phone" if 10 <= len(digits) <= 15 else None
    groups = [g for g in _SEPARATORS.split(text) if g]
    # national shapes have three groups or more ((555) 123-4567, 020 7946 0958); two
    # groups are a range or a decimal (2020-2024, 1234.5678)
    if 8 <= len(digits) <= 15 and (len(groups) >= 3 or "(" in text):
        return "phone"
    return None


def looks_like_person(text: str) -> bool:
    """Words that read as a person's name (or a place's): see the module docstring."""
    if _JOINED.fullmatch(text):
        # one word, joined: O'Brien-Smith is a name; in-stock and read-only are not
        return text[0].isupper() and not set(re.split(r"['’\-]", text.lower())) <= COMMON_WORDS
    if not _WORDS.fullmatch(text):
        return False
    words = text.split(" ")
    if all(w.isupper() and len(w) > 1 for w in words):
        return False  # acronyms: ISO, USD, PDF A
    if words[0][:1].isupper() and all(w.islower() for w in words[1:]):
        return False  # sentence case is a message (Comment added successfully), not a name
    known = {w.strip(".").lower() for w in words}
    return not known <= COMMON_WORDS


def personal_kind(value: object) -> str | None:
    """What personal value ``value`` looks like, or None (see the module docstring)."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    if isinstance(value, int):
        if value.bit_length() > 80:  # past 24 digits: no card, phone or id number is this long
            return None  # (and str() of a 5000-digit integer raises)
        return _number_kind(str(abs(value)), bare=True)
    text = value.strip()
    if not text or len(text) > MAX_TEXT:
        return None
    if _EMAIL_RE.fullmatch(text):
        return "email"
    if _NAME_EMAIL_RE.fullmatch(text):
        return "name-email"
    if _NUMBERISH.fullmatch(text):
        return _number_kind(text, bare=False)
    if _iban(text):
        return "iban"
    return "name" if looks_like_person(" ".join(text.split())) else None


def _number_in_text(match: re.Match[str]) -> str:
    text = match.group().strip()
    kind = _number_kind(text, bare=False)
    if kind is None and sum(c.isdigit() for c in text) >= 12:
        kind = "number"  # a long number in prose: an account or a card, best not shown
    return match.group() if kind is None else f"<{kind}>"


_IN_TEXT = (
    (re.compile(r"[\w.%+-]+@[\w-]+(?:\.[\w-]+)+"), lambda m: "<email>"),
    (re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b"),
     lambda m: "<iban>" if _iban(m.group()) else m.group()),
    (re.compile(r"\b\d{3}-\d{2}-\d{4}\b"), lambda m: "<id-number>"),
    (re.compile(r"(?<![\w#.])\+?\(?(?:\d[ ().-]{0,2}){7,18}\d\b"), _number_in_text),
)  # fmt: skip
_MAYBE = re.compile(r"@|\d{3}")  # every redaction in text needs one of these


def redact_text(text: str) -> str:
    """``text`` with the emails, IBANs, card, phone and id numbers inside it replaced by
    ``<email>``, ``<iban>``, ``<card>``, ``<phone>``, ``<id-number>``. Names in free text
    cannot be told from other words; values are screened whole by :func:`personal_kind`."""
    if _MAYBE.search(text) is None:
        return text
    for pattern, replace in _IN_TEXT:
        text = pattern.sub(replace, text)
    return text
