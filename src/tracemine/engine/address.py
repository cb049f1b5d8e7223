"""What ``--scheduler`` may name, and the first exchange with it before a client joins.

A Dask client given an address it cannot use fails in many ways: a traceback for a
missing port or an unknown scheme, a ``TypeError`` for ``tls://`` without certificates, a
``MemoryError`` when a web server answers, and no end at all when the peer accepts the
connection and never speaks. :func:`check_address` says in one line what was expected;
:func:`probe` asks the scheduler who it is, within a time limit, so every way of not being
a scheduler ends as one line too.
"""

from __future__ import annotations

import asyncio
import re
import socket
import threading
from dataclasses import dataclass
from typing import Any

from tracemine.errors import InputError

CONNECT_TIMEOUT = 30.0
"""Seconds to connect to a scheduler and to have its first answer."""
EXPECTED = "expected tcp://host:8786 (or tls://host:8786 with TLS files)"
_ADDRESS = re.compile(r"(?:(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://)?(?P<host>\[[^\]]+\]|[^:/\[\]]+)"
                      r":(?P<port>[0-9]{1,5})/?")  # fmt: skip


@dataclass(frozen=True)
class Tls:
    """The files a Dask client passes as ``Security(tls_ca_file=, tls_client_cert=,
    tls_client_key=)``; the key may be inside the certificate's file."""

    ca_file: str | None = None
    cert: str | None = None
    key: str | None = None

    def given(self) -> bool:
        return any((self.ca_file, self.cert, self.key))


def check_address(address: str, tls: Tls | None = None) -> str:
    """The scheduler address as Dask reads it (``host:8786`` is ``tcp://host:8786``), or
    :class:`InputError` naming it and what was expected."""
    found = _ADDRESS.fullmatch(address.strip())
    if found is None:
        raise InputError(f"--scheduler {address}: not a scheduler address; {EXPECTED}")
    scheme = (found["scheme"] or "tcp").lower()
    if scheme not in ("tcp", "tls"):
        raise InputError(f"--scheduler {address}: the scheme {scheme}:// is not one a Dask "
                         f"scheduler listens on here; {EXPECTED}")  # fmt: skip
    port = int(found["port"])
    if not 0 < port < 65536:
        raise InputError(f"--scheduler {address}: port {port} is not 1 to 65535; {EXPECTED}")
    if scheme == "tls" and not (tls and tls.given()):
        raise InputError(f"--scheduler {address}: a tls:// scheduler needs the client's TLS "
                         "files: --tls-ca-file, --tls-cert and --tls-key")  # fmt: skip
    if scheme == "tcp" and tls and tls.given():
        raise InputError(f"--scheduler {address}: TLS files were given for a tcp:// "
                         "address; name it tls://")  # fmt: skip
    return f"{scheme}://{found['host']}:{port}"


def security(tls: Tls | None) -> Any:
    """The ``distributed.Security`` of ``tls`` (None without files), or one line saying
    which file could not be used."""
    if not (tls and tls.given()):
        return None
    from distributed.security import Security

    for flag, path in (("--tls-ca-file", tls.ca_file), ("--tls-cert", tls.cert),
                       ("--tls-key", tls.key)):  # fmt: skip
        if path is not None:
            try:
                with open(path, "rb"):
                    pass
            except OSError as exc:
                raise InputError(f"{flag} {path}: cannot read it ({exc.strerror})") from None
    if not (tls.ca_file and tls.cert):
        raise InputError("a tls:// scheduler needs --tls-ca-file and --tls-cert (and --tls-key "
                         "unless the key is in the certificate's file)")  # fmt: skip
    try:
        made = Security(tls_ca_file=tls.ca_file, tls_client_cert=tls.cert,
                        tls_client_key=tls.key, require_encryption=True)  # fmt: skip
        made.get_connection_args("client")  # loads the files: a bad one is said here
    except (OSError, ValueError) as exc:
        raise InputError(f"the TLS files ({tls.ca_file}, {tls.cert}) cannot be used: "
                         f"{exc}") from None  # fmt: skip
    return made


def probe(address: str, secure: Any, timeout: float) -> None:
    """Connect to ``address`` and ask the scheduler its identity, all within ``timeout``
    seconds; :class:`InputError` when nothing answers in time or what answers is not a
    Dask scheduler. Runs on a thread of its own, so a caller with an event loop of its own
    (a notebook) can call it."""
    if not timeout > 0:
        raise InputError(f"--join-timeout {timeout:g}: give a number of seconds above 0")
    host, port = address.split("://", 1)[1].rsplit(":", 1)
    try:  # a refused or unroutable address is said at once; Dask would retry until the limit
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        why = "no answer" if isinstance(exc, TimeoutError) else exc.strerror or str(exc)
        raise InputError(f"cannot reach the Dask scheduler at {address}: {why}") from None
    outcome: list[BaseException | dict] = []
    runner = threading.Thread(target=lambda: outcome.append(_ask(address, secure, timeout)),
                              daemon=True, name="tracemine-scheduler-probe")  # fmt: skip
    runner.start()
    runner.join(2 * timeout + 5)  # the thread's own limits end it first; this is a backstop
    answer = outcome[0] if outcome else TimeoutError()
    if isinstance(answer, TimeoutError | asyncio.TimeoutError):
        raise InputError(
            f"--scheduler {address}: no answer within {timeout:g} s (a Dask "
            "scheduler answers at once; --join-timeout sets the limit)"
        )
    if isinstance(answer, OSError):
        raise InputError(f"cannot reach the Dask scheduler at {address}: {answer}")
    if isinstance(answer, BaseException) or answer.get("type") != "Scheduler":
        why = f"{type(answer).__name__}" if isinstance(answer, BaseException) else "its reply"
        raise InputError(f"--scheduler {address}: what answers is not a Dask scheduler "
                         f"({why}); {EXPECTED}")  # fmt: skip


def _ask(address: str, secure: Any, timeout: float) -> BaseException | dict:
    try:
        return asyncio.run(_identity(address, secure, timeout))
    except BaseException as exc:  # said by probe, on the caller's thread
        return exc


async def _identity(address: str, secure: Any, timeout: float) -> dict:
    from distributed.comm import connect

    args = secure.get_connection_args("client") if secure is not None else {}
    # Dask's own limit on connecting ends in an OSError that says so; the outer one is for
    # a handshake that never ends
    comm = await asyncio.wait_for(connect(address, timeout=timeout, **args), timeout + 1)
    try:
        await comm.write({"op": "identity", "reply": True})
        answer = await asyncio.wait_for(comm.read(), timeout)
    finally:
        comm.abort()
    return answer if isinstance(answer, dict) else {}
