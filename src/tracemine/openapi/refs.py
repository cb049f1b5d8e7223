"""Reading schema documents and following their ``$ref``s.

A :class:`Loc` is a schema together with where it sits (the base URI of its file and the
JSON pointer inside it), so that relative ``$ref``s resolve against the right file and
every error can name the file and pointer. Resolution goes through ``referencing`` (the
library jsonschema uses); this module adds the file retrieval, a cache, and errors that
say which ``$ref`` at which pointer could not be followed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

import orjson
import yaml
from referencing import Registry, Resource, Specification
from referencing.exceptions import NoSuchResource, Unresolvable
from referencing.jsonschema import DRAFT202012

from tracemine.errors import InputError

_INDEX = re.compile(r"[0-9]{1,9}")  # an array step of a JSON pointer (ASCII digits only)
_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    """Safe loader without implicit timestamps: ``enum: [2024-01-01]`` stays a string,
    so declared values remain JSON values."""


_Loader.yaml_implicit_resolvers = {
    key: [(tag, regex) for tag, regex in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
}


class SpecError(InputError):
    """A schema document cannot be used: unreadable, of no known kind, or a ``$ref`` that
    leads nowhere. The message names the file and, where there is one, the pointer."""


@dataclass(slots=True, unsafe_hash=True)
class Loc:
    """A schema (or any document node) and where it sits: ``base`` is its file's URI,
    ``pointer`` the JSON pointer inside that file (``#/components/schemas/Order``).
    Never changed once made (not ``frozen``: a frozen dataclass is three times slower to
    create, and a large document makes millions)."""

    node: Any
    base: str
    pointer: str = "#"

    def child(self, *keys: str | int) -> Loc:
        """The node under ``keys`` (which the caller knows exist)."""
        node, pointer = self.node, self.pointer
        for key in keys:
            node = node[key]
            pointer += "/" + escape(key)
        return Loc(node, self.base, pointer)

    def where(self) -> str:
        return f"{display_name(self.base)}{self.pointer}"


def escape(key: str | int) -> str:
    """One JSON pointer step (RFC 6901: ``~`` and ``/`` escaped)."""
    key = str(key)
    if "~" in key or "/" in key:
        return key.replace("~", "~0").replace("/", "~1")
    return key


def display_name(uri: str) -> str:
    """The file name a user recognises, for messages."""
    parts = urlsplit(uri)
    if parts.scheme == "file":
        return Path(unquote(parts.path)).name
    return uri


def read_document(path: Path) -> Any:
    """Parse a JSON or YAML file; :class:`SpecError` names the file and line on failure."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SpecError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if path.suffix.lower() in (".yaml", ".yml"):
        return _parse_yaml(path, data)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if path.suffix.lower() == ".json":
            raise SpecError(f"{path}: not valid JSON: {exc}") from None
    # neither suffix says: YAML is a superset of JSON, so try it last
    return _parse_yaml(path, data)


def _parse_yaml(path: Path, data: bytes) -> Any:
    try:
        return yaml.load(data, Loader=_Loader)  # a safe loader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        at = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise SpecError(f"{path}: not valid YAML: {at}{exc.problem}") from None
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SpecError(f"{path}: not valid YAML: {reason}") from None


class Refs:
    """Follows ``$ref``s from one root document: local pointers, relative files (read on
    demand and cached) and, for JSON Schema 2020-12 documents, ``$id``/``$anchor``.
    Remote (http) references are not fetched: tracemine never goes to the network."""

    def __init__(self, document: Any, base: str, *, json_schema: bool = False) -> None:
        self.specification = DRAFT202012 if json_schema else Specification.OPAQUE
        self.root = Loc(document, base)
        self._documents: dict[str, Resource[Any]] = {}
        # retrieval is not a bound method: that would be a reference cycle, and the whole
        # document would wait for the cyclic collector instead of going with the last reference
        retrieve = partial(_retrieve, self._documents, self.specification)
        self._registry: Registry[Any] = Registry(retrieve=retrieve).with_resource(  # type: ignore[call-arg]
            base, self.specification.create_resource(document)
        )
        self._cache: dict[tuple[str, str, str], Loc] = {}  # (base, $ref, scope)
        # what walking this document computes once: flattened schema positions (schema.py),
        # walks of result schemas, shared-subtree memos and recursion marks (declared.py)
        self.flat_cache: dict[Any, Any] = {}
        self.in_progress: set[str] = set()  # positions being flattened (schema.py)
        self.remote: set[str] = set()
        # pointers of schemas that stand on their own inside the document (an MCP tool's
        # inputSchema/outputSchema): a "#/..." $ref below one means that schema's "#"
        self.scopes: dict[str, Any] = {}
        # the shortcut for local pointers holds where the library would name the same file
        self._local = urldefrag(urljoin(base, "#/")).url == base

    def resolve(self, ref: Any, at: Loc) -> Loc | None:
        """The node ``ref`` (found at ``at``) points to; None for a remote reference, which
        is left unconstrained. Raises :class:`SpecError` naming the ``$ref`` and pointer."""
        if not isinstance(ref, str):
            raise SpecError(f"{at.where()}: $ref is not a string: {ref!r}")
        scope = self._scope(at) if self.scopes and ref.startswith("#") else None
        key = (at.base, ref, scope or "")
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        if scope is not None:
            loc = self._in_scope(scope, ref)
            if loc is not None:
                self._cache[key] = loc
                return loc
        if self._local and at.base == self.root.base and ref.startswith("#/"):
            loc = self._local_pointer(ref)
            if loc is not None:
                self._cache[key] = loc
                return loc
        target = urljoin(at.base, ref)
        if urlsplit(target).scheme not in ("file", urlsplit(self.root.base).scheme):
            self.remote.add(target)
            return None
        try:
            resolved = self._registry.resolver(base_uri=at.base).lookup(ref)
        except SpecError as exc:
            raise SpecError(f"{at.where()}: $ref {ref!r}: {exc}") from None
        except (Unresolvable, NoSuchResource) as exc:
            raise SpecError(f"{at.where()}: $ref {ref!r} {_reason(exc, target)}") from None
        except (LookupError, ValueError, TypeError):
            # the library's pointer walk fails this way where a step names no array index
            url, fragment = urldefrag(target)
            where = f"no {fragment or '/'} in {display_name(url)}"
            raise SpecError(f"{at.where()}: $ref {ref!r} points to nothing: {where}") from None
        url, fragment = urldefrag(target)
        loc = Loc(resolved.contents, url, "#" + fragment if fragment.startswith("/") else "#")
        self._cache[key] = loc
        return loc

    def _scope(self, at: Loc) -> str | None:
        """The innermost scope ``at`` lies in (None: none, or another file)."""
        if at.base != self.root.base:
            return None
        pointer = at.pointer
        while len(pointer) > 1:
            if pointer in self.scopes:
                return pointer
            pointer = pointer[: pointer.rfind("/")]
        return None

    def _in_scope(self, scope: str, ref: str) -> Loc | None:
        """``ref`` read inside the schema at ``scope``; None when it leads nowhere there
        (the document as a whole is tried next)."""
        if ref != "#" and not ref.startswith("#/"):
            return None  # an anchor name, which only the library knows how to find
        node = self.scopes[scope]
        steps = [s.replace("~1", "/").replace("~0", "~") for s in unquote(ref[1:]).split("/")[1:]]
        for step in steps:
            if isinstance(node, dict) and step in node:
                node = node[step]
            elif isinstance(node, list) and _INDEX.fullmatch(step) and int(step) < len(node):
                node = node[int(step)]
            else:
                return None
        return Loc(node, self.root.base, scope + "".join("/" + escape(s) for s in steps))

    def _local_pointer(self, ref: str) -> Loc | None:
        """``#/a/b/0`` in the root document, found by hand: what ``referencing`` finds, at a
        fraction of the cost (most documents make thousands of such references). None when
        the pointer needs unescaping or does not lead anywhere: the library then decides
        (and words the error)."""
        if "~" in ref or "%" in ref:
            return None
        node = self.root.node
        try:
            for segment in ref[2:].split("/"):
                if isinstance(node, dict):
                    node = node[segment]
                elif isinstance(node, list):
                    node = node[int(segment)]
                else:
                    return None
        except (LookupError, ValueError):
            return None
        return Loc(node, self.root.base, ref)


def _retrieve(
    documents: dict[str, Resource[Any]], specification: Specification[Any], uri: str
) -> Resource[Any]:
    """A referenced file, read on first use (``documents`` caches them by URI)."""
    cached = documents.get(uri)
    if cached is not None:
        return cached
    if urlsplit(uri).scheme != "file":
        raise SpecError(f"{uri}: not a local file")
    document = read_document(Path(unquote(urlsplit(uri).path)))
    resource = specification.create_resource(document)
    documents[uri] = resource
    return resource


def _reason(exc: BaseException, target: str) -> str:
    """Why a reference failed, from the chain of causes ``referencing`` raises."""
    url, fragment = urldefrag(target)
    names = []
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, SpecError):
            if "cannot read" in str(cause):
                return f"cannot be followed: no file {display_name(url)}"
            return f"leads to a file that cannot be used: {cause}"
        names.append(type(cause).__name__)
        cause = cause.__cause__
    if "PointerToNowhere" in names:
        return f"points to nothing: no {fragment or '/'} in {display_name(url)}"
    if "Unretrievable" in names or "NoSuchResource" in names:
        return f"cannot be followed: no file {display_name(url)}"
    return f"cannot be followed ({names[-1]})"
