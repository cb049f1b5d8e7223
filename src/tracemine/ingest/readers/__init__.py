"""Format adapters, one module each. A module defines one :class:`Reader` subclass with a
``name``; it is found here by discovery, so adding a format touches nothing else.
Detection tries readers by ascending ``priority`` (most specific shapes first)."""

from __future__ import annotations

import importlib
import pkgutil

from tracemine.ingest.readers.base import BadRecord, Reader, Sink


def _discover() -> dict[str, type[Reader]]:
    found: list[type[Reader]] = []
    for info in pkgutil.iter_modules(__path__):
        if info.name == "base" or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Reader)
                and value is not Reader
                and value.__module__ == module.__name__
                and value.name
            ):
                found.append(value)
    found.sort(key=lambda cls: (cls.priority, cls.name))
    return {cls.name: cls for cls in found}


READERS: dict[str, type[Reader]] = _discover()

__all__ = ["READERS", "BadRecord", "Reader", "Sink"]
