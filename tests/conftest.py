"""Shared fixtures: the real corpus (skipped when absent) and a guard against network use."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
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
