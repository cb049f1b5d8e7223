"""String formats a ``format`` contract can name. Each test takes a string and answers
whether it has the format; the regular expressions here are linear and inputs are capped."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from datetime import date

MAX_FORMAT_INPUT = 2048

# field ranges are in the expressions so the common case needs no datetime parsing; only
# the 29th-31st of a month go through date() to catch 2023-02-30
_DAY = r"\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8]|(29|30|31))"
_CLOCK = r"(?:[01]\d|2[0-3]):[0-5]\d(?::(?:[0-5]\d|60)(?:\.\d{1,9})?)?"
_DATE_TIME = re.compile(_DAY + r"[Tt ]" + _CLOCK + r"(?:[Zz]|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?")
_DATE_ONLY = re.compile(_DAY)
_TIME = re.compile(r"\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:[Zz]|[+-]\d{2}:?\d{2})?")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_EMAIL = re.compile(r"[^@\s]+@[^@\s.]+(?:\.[^@\s.]+)+")
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S+")
_URL = re.compile(r"https?://[^\s/?#]+\S*")
_HOSTNAME = re.compile(
    r"(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*"
)
_PHONE = re.compile(r"\+?[0-9][0-9 ().-]{5,22}[0-9]")
_DECIMAL = re.compile(r"-?\d+(?:\.\d+)?")


def _calendar(match: re.Match[str] | None) -> bool:
    if match is None:
        return False
    if match.group(1) is None:
        return True
    try:
        date(int(match.string[:4]), int(match.string[5:7]), int(match.group(1)))
    except ValueError:
        return False
    return True


def _date_time(text: str) -> bool:
    return _calendar(_DATE_TIME.fullmatch(text))


def _date(text: str) -> bool:
    return _calendar(_DATE_ONLY.fullmatch(text))


def _ip(version: int) -> Callable[[str], bool]:
    def test(text: str) -> bool:
        try:
            return ipaddress.ip_address(text).version == version
        except ValueError:
            return False

    return test


FORMATS: dict[str, Callable[[str], bool]] = {
    "date-time": _date_time,
    "datetime": _date_time,
    "date": _date,
    "time": lambda s: bool(_TIME.fullmatch(s)),
    "uuid": lambda s: bool(_UUID.fullmatch(s)),
    "email": lambda s: bool(_EMAIL.fullmatch(s)),
    "uri": lambda s: bool(_URI.fullmatch(s)),
    "url": lambda s: bool(_URL.fullmatch(s)),
    "hostname": lambda s: bool(_HOSTNAME.fullmatch(s)),
    "ipv4": _ip(4),
    "ipv6": _ip(6),
    "phone": lambda s: bool(_PHONE.fullmatch(s)),
    "currency": lambda s: len(s) == 3 and s.isascii() and s.isalpha() and s.isupper(),
    "country": lambda s: len(s) == 2 and s.isascii() and s.isalpha() and s.isupper(),
    "decimal": lambda s: bool(_DECIMAL.fullmatch(s)),
}
"""Format name → test. A name not here makes the contract "not evaluated", not a failure."""
