"""Shared fixtures: the real corpus (skipped when absent) and a guard against network use."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "sds"
EVAL = REPO.parent / "shared" / "eval"


def _is_loopback(address: Any) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX path
        return True
    host = address[0] if isinstance(address, tuple) else address
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fail any test that opens a connection to a non-loopback address."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guard(sock: socket.socket, address: Any) -> Any:
        if not _is_loopback(address):
            raise RuntimeError(f"test tried to reach the network: {address!r}")
        return real_connect(sock, address)

    def guard_ex(sock: socket.socket, address: Any) -> Any:
        if not _is_loopback(address):
            raise RuntimeError(f"test tried to reach the network: {address!r}")
        return real_connect_ex(sock, address)

    monkeypatch.setattr(socket.socket, "connect", guard)
    monkeypatch.setattr(socket.socket, "connect_ex", guard_ex)
    yield


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The shared SDS corpus; tests using it skip with a reason when it is absent."""
    if not (CORPUS / "laballey").is_dir():
        pytest.skip(f"SDS corpus not found at {CORPUS} (it lives in ../shared, outside the repo)")
    return CORPUS


# -- real SPARQL servers on loopback (skipped with a reason when not installed) ----------


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_port(port: int, proc: Any, seconds: float, what: str) -> None:
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if proc.poll() is not None:
                pytest.skip(f"{what} exited at start (code {proc.returncode})")
            time.sleep(0.1)
    pytest.skip(f"{what} did not start within {seconds:.0f} s")


def _stop(proc: Any, seconds: float) -> None:
    import subprocess

    proc.terminate()
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


_VIRTUOSO_INI = """[Database]
DatabaseFile = {db}/virtuoso.db
ErrorLogFile = {db}/virtuoso.log
LockFile = {db}/virtuoso.lck
TransactionFile = {db}/virtuoso.trx
xa_persistent_file = {db}/virtuoso.pxa
[TempDatabase]
DatabaseFile = {db}/virtuoso-temp.db
TransactionFile = {db}/virtuoso-temp.trx
[Parameters]
ServerPort = 127.0.0.1:{sql_port}
DisableUnixSocket = 1
DirsAllowed = .
NumberOfBuffers = 10000
MaxDirtyBuffers = 6000
[HTTPServer]
ServerPort = 127.0.0.1:{http_port}
ServerRoot = {db}
ServerThreads = 8
[SPARQL]
ResultSetMaxRows = 100000
MaxQueryExecutionTime = 60
"""


@dataclass(frozen=True)
class Virtuoso:
    """A Virtuoso server started for the test session.

    ``query_url`` is the anonymous ``/sparql`` endpoint (read-only for the SPARQL user,
    the account the docs recommend for queries); ``update_url`` is ``/sparql-auth``,
    which needs Digest auth (``dba``/``dba`` on this throw-away database).
    """

    base: str
    query_url: str
    update_url: str
    user: str = "dba"
    password: str = "dba"


@pytest.fixture(scope="session")
def virtuoso(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Virtuoso]:
    """Debian's ``virtuoso-t`` on loopback with a temp database and free ports."""
    import shutil
    import subprocess

    binary = shutil.which("virtuoso-t")
    if binary is None:
        pytest.skip("Virtuoso is not installed (apt-get install -y virtuoso-opensource)")
    db = tmp_path_factory.mktemp("virtuoso")
    http_port, sql_port = free_port(), free_port()
    ini = db / "virtuoso.ini"
    ini.write_text(_VIRTUOSO_INI.format(db=db, http_port=http_port, sql_port=sql_port))
    proc = subprocess.Popen(
        [binary, "-f", "-c", str(ini)],
        cwd=db,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_port(http_port, proc, 180, "virtuoso-t")
        base = f"http://127.0.0.1:{http_port}"
        yield Virtuoso(base, f"{base}/sparql", f"{base}/sparql-auth")
    finally:
        _stop(proc, 30)


@pytest.fixture(scope="session")
def oxigraph_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``oxigraph serve`` on loopback (the [server] extra); yields its base URL."""
    import shutil
    import subprocess
    import sys

    local = Path(sys.executable).with_name("oxigraph")
    binary = str(local) if local.exists() else shutil.which("oxigraph")
    if binary is None:
        pytest.skip("the `oxigraph` server binary is not installed (pip install oxigraph)")
    port = free_port()
    location = tmp_path_factory.mktemp("oxigraph-server")
    proc = subprocess.Popen(
        [binary, "serve", "--location", str(location), "--bind", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_port(port, proc, 20, "oxigraph serve")
        yield f"http://127.0.0.1:{port}"
    finally:
        _stop(proc, 10)


@pytest.fixture(scope="session")
def sample_paths(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The shipped sample sheets written as PDFs (always present)."""
    from hybrid_rag.samples import sample_pdfs

    return sample_pdfs(tmp_path_factory.mktemp("sample-sheets"))


@pytest.fixture(scope="module")
def sample_rag(sample_paths: list[Path]) -> Iterator[Any]:
    """An in-memory HybridRAG (hashing embedder) holding the sample sheets; read-only use."""
    from hybrid_rag import HybridRAG

    with HybridRAG(embedder="hashing") as rag:
        rag.ingest_many(sample_paths)
        yield rag


def import_error_without(module: str, blocked: str) -> str:
    """The ImportError message of ``import module`` in a fresh interpreter lacking ``blocked``."""
    import subprocess
    import sys

    code = (
        f"import sys; sys.modules[{blocked!r}] = None\n"
        f"try:\n    import {module}\nexcept ImportError as e:\n    print(e)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return run.stdout
