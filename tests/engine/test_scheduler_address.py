"""``mine --scheduler`` with addresses that are not a scheduler: malformed, a server that
accepts and never answers, one that answers garbage, ``tls://`` without its files — each
one line and exit 2, in bounded time; and a worker that dies while a local cluster
starts is started again. Loopback only."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from killer import KILL_AT_START

from tracemine.engine import dask as engine
from tracemine.engine.dask import cluster
from tracemine.errors import ShardFailed

LIFETIME = 30.0
"""The test servers stop by themselves after this many seconds."""


def _serve(server: socket.socket, reply: bytes | None) -> None:
    held = []  # connections kept open and silent until the server stops
    end = time.monotonic() + LIFETIME
    server.settimeout(0.2)
    while time.monotonic() < end:
        try:
            conn, _ = server.accept()
        except TimeoutError:
            continue
        except OSError:
            break
        held.append(conn)
        if reply is not None:
            conn.sendall(reply)
    for conn in held:
        conn.close()
    server.close()


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[str]:
    """``tcp://127.0.0.1:PORT`` of a server that accepts connections and sends
    ``request.param`` (None: nothing, ever)."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    serving = threading.Thread(target=_serve, args=(listener, request.param), daemon=True)
    serving.start()
    yield f"tcp://127.0.0.1:{port}"
    listener.close()


def _mine(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    (cwd / "a.jsonl").write_text('{"run_id": "r", "tool": "t", "result": 1}\n')
    return subprocess.run([sys.executable, "-m", "tracemine", "mine", "a.jsonl",
                           "--work", "work", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)  # fmt: skip


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.mark.parametrize("address", [
    "nonsense", "tcp://127.0.0.1", "tcp://127.0.0.1:notaport", "http://127.0.0.1:8786",
    "tcp://127.0.0.1:99999", "tls://127.0.0.1:1",
])  # fmt: skip
def test_a_bad_address_is_one_line_naming_it(tmp_path: Path, address: str) -> None:
    line = _one_line(_mine("--scheduler", address, cwd=tmp_path))
    assert address in line
    assert "tcp://host:8786" in line or "--tls-ca-file" in line


@pytest.mark.parametrize("server", [None], indirect=True)
def test_a_server_that_never_answers_ends_at_the_time_limit(tmp_path: Path, server: str) -> None:
    started = time.monotonic()
    line = _one_line(_mine("--scheduler", server, "--join-timeout", "1", cwd=tmp_path))
    assert time.monotonic() - started < LIFETIME  # ended by the limit, not by the server
    assert f"{server}: no answer within 1 s" in line


@pytest.mark.parametrize("server", [b"HTTP/1.1 400 Bad Request\r\n\r\n<html>no</html>" * 4],
                         indirect=True)  # fmt: skip
def test_a_server_that_answers_garbage_is_not_a_scheduler(tmp_path: Path, server: str) -> None:
    line = _one_line(_mine("--scheduler", server, "--join-timeout", "5", cwd=tmp_path))
    assert f"{server}: what answers is not a Dask scheduler" in line


@pytest.mark.parametrize("address", ["", "  "])
def test_an_empty_address_is_refused_not_mined_locally(tmp_path: Path, address: str) -> None:
    # ``--scheduler "$DASK_SCHEDULER"`` with the variable unset
    line = _one_line(_mine("--scheduler", address, cwd=tmp_path))
    assert "--scheduler is empty" in line and "tcp://host:8786" in line
    assert not (tmp_path / "work").exists()


def test_a_time_limit_of_zero_is_refused(tmp_path: Path) -> None:
    line = _one_line(_mine("--scheduler", "tcp://127.0.0.1:1", "--join-timeout", "0",
                           cwd=tmp_path))  # fmt: skip
    assert "--join-timeout 0: give a number of seconds above 0" in line


def test_tls_files_that_cannot_be_read_are_named(tmp_path: Path) -> None:
    line = _one_line(_mine("--scheduler", "tls://127.0.0.1:1", "--tls-ca-file", "ca.pem",
                           "--tls-cert", "cert.pem", cwd=tmp_path))  # fmt: skip
    assert line.startswith("error: --tls-ca-file ca.pem: cannot read it")


@pytest.fixture
def killed_at_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    import dask

    tally = tmp_path / "kills"
    monkeypatch.setenv("TRACEMINE_TEST_TALLY", str(tally))
    with dask.config.set({"distributed.worker.preload": [str(KILL_AT_START)]}):
        yield tally


def test_a_worker_killed_while_the_cluster_starts_is_started_again(
    killed_at_start: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRACEMINE_TEST_KILLS", "1")
    with cluster(1, dashboard=False) as started:
        assert sum(started.client.nthreads().values()) == 1
    assert killed_at_start.read_text() == "1"


def test_workers_that_die_at_every_start_end_in_one_line(
    killed_at_start: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRACEMINE_TEST_KILLS", "99")
    monkeypatch.setattr(engine, "START_TRIES", 2)  # the count, not the behaviour, is tuned
    with pytest.raises(ShardFailed, match=r"did not start in 2 tries"), cluster(1, dashboard=False):
        pass
    assert killed_at_start.read_text() == "2"


def _certificate(folder: Path) -> tuple[str, str]:
    """A self-signed certificate for 127.0.0.1 and its key, as PEM files."""
    x509 = pytest.importorskip("cryptography.x509")
    import datetime
    import ipaddress

    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "tracemine-test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=1))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))  # fmt: skip
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))  # fmt: skip
    return str(cert_file), str(key_file)


def test_a_tls_scheduler_is_joined_with_the_files_a_dask_user_passes(tmp_path: Path) -> None:
    import distributed
    from distributed.security import Security

    from tracemine.engine import Tls

    cert, key = _certificate(tmp_path)
    secure = Security(tls_ca_file=cert, tls_scheduler_cert=cert, tls_scheduler_key=key,
                      tls_client_cert=cert, tls_client_key=key, require_encryption=True)  # fmt: skip
    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tls://",
                                  host="127.0.0.1", security=secure,
                                  dashboard_address=None) as running:  # fmt: skip
        address = running.scheduler_address
        assert address.startswith("tls://127.0.0.1:")
        with cluster(scheduler=address, tls=Tls(cert, cert, key), connect_timeout=10) as joined:
            assert joined.client.scheduler_info()["address"] == address
