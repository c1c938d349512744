"""Inputs that never end or are far too large: refused at once, typed, stores unchanged.

Issue 19's run: a named pipe passed to ``ingest`` hung forever; a symlink to
``/dev/zero`` was read until memory ran out (7.5 GiB); a 200 MB text file did not finish
in 180 s; there was no size limit in the API or the CLI. Now only regular files are
read and nothing past ``max_bytes`` (default 50 MiB). Each case runs in a daemon thread
with a deadline, so a hang fails the test instead of stopping the suite.
"""

from __future__ import annotations

import os
import socket
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hybrid_rag import (
    DocumentError,
    DocumentTooLargeError,
    HybridRAG,
    HybridRAGError,
    InputError,
)
from hybrid_rag.ingest.inputs import DEFAULT_MAX_BYTES
from hybrid_rag.samples import sample_pdfs

DEADLINE_S = 10.0
FAST_S = 2.0  # every refusal below is immediate; the deadline only catches hangs


def _within(call: Callable[[], object], seconds: float = DEADLINE_S) -> tuple[object, float]:
    """``call()``'s result or exception and how long it took; fails after ``seconds``."""
    box: list[object] = []

    def run() -> None:
        try:
            box.append(call())
        except BaseException as exc:  # handed to the test
            box.append(exc)

    t = time.perf_counter()
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        pytest.fail(f"no answer within {seconds} s: a hang")
    return box[0], time.perf_counter() - t


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HybridRAG]:
    root = tmp_path_factory.mktemp("endless")
    with HybridRAG(root / "store", embedder="hashing", max_bytes=2 * 2**20) as r:
        r.ingest_many(sample_pdfs(root / "pdfs"), raise_errors=True)
        yield r


def _snapshot(r: HybridRAG) -> tuple[Any, ...]:
    return tuple((d.doc_id, d.content_hash) for d in r.documents()), len(r.vectors)  # type: ignore[arg-type]


def _fifo(tmp: Path) -> Path:
    path = tmp / "pipe.txt"
    os.mkfifo(path)
    return path


def _link(tmp: Path, target: str, name: str) -> Path:
    path = tmp / name
    path.symlink_to(target)
    return path


def _sparse(tmp: Path, size: int, name: str = "huge.txt") -> Path:
    path = tmp / name
    with open(path, "wb") as fh:
        fh.truncate(size)  # sparse: no disk used, but that many bytes to read
    return path


def _socket(tmp: Path) -> Path:
    path = tmp / "sock.txt"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    return path


Case = Callable[[HybridRAG, Path], object]
CASES: list[tuple[str, Case, type[HybridRAGError], str]] = [
    ("named-pipe", lambda r, t: r.ingest(_fifo(t)), DocumentError, "named pipe"),
    ("named-pipe-in-many", lambda r, t: r.ingest_many([_fifo(t)], raise_errors=True),
     DocumentError, "named pipe"),
    ("dev-zero", lambda r, t: r.ingest("/dev/zero", name="zero.txt"), DocumentError,
     "character device"),
    ("symlink-to-dev-zero", lambda r, t: r.ingest(_link(t, "/dev/zero", "zero.txt")),
     DocumentError, "character device"),
    ("symlink-to-dev-urandom", lambda r, t: r.ingest(_link(t, "/dev/urandom", "rand.pdf")),
     DocumentError, "character device"),
    ("unix-socket", lambda r, t: r.ingest(_socket(t)), DocumentError, "socket"),
    ("file-over-the-limit", lambda r, t: r.ingest(_sparse(t, 200 * 2**20)), DocumentTooLargeError,
     "larger than the limit"),
    ("file-just-over-the-limit", lambda r, t: r.ingest(_sparse(t, 2 * 2**20 + 1)),
     DocumentTooLargeError, "2,097,152 bytes"),
    ("bytes-over-the-limit", lambda r, t: r.ingest(b"x" * (2 * 2**20 + 1), name="big.txt"),
     DocumentTooLargeError, "larger than the limit"),
    ("many-with-one-too-large", lambda r, t: r.ingest_many([_sparse(t, 3 * 2**20)],
     raise_errors=True), DocumentTooLargeError, "larger than the limit"),
    ("symlink-loop", lambda r, t: r.ingest(_link(t, str(t / "loop.txt"), "loop.txt")),
     DocumentError, "cannot read"),
    ("dangling-symlink", lambda r, t: r.ingest(_link(t, str(t / "gone.txt"), "dangling.txt")),
     DocumentError, "not found"),
]  # fmt: skip


@pytest.mark.skipif(sys.platform == "win32", reason="named pipes and devices are POSIX here")
@pytest.mark.parametrize(("name", "call", "kind", "says"), CASES, ids=[c[0] for c in CASES])
def test_endless_or_huge_input_is_refused_at_once(
    name: str,
    call: Case,
    kind: type[HybridRAGError],
    says: str,
    rag: HybridRAG,
    tmp_path: Path,
) -> None:
    before = _snapshot(rag)
    outcome, took = _within(lambda: call(rag, tmp_path))
    assert isinstance(outcome, kind), f"{name}: {outcome!r}"
    assert says in str(outcome), outcome
    assert took < FAST_S, f"{name} took {took:.1f} s"
    assert _snapshot(rag) == before


def test_the_limit_has_a_documented_default_and_is_checked() -> None:
    assert DEFAULT_MAX_BYTES == 50 * 2**20 == HybridRAG().max_bytes
    for bad in (0, -1, "10", 1.5, True, None):
        with pytest.raises(InputError, match="max_bytes"):
            HybridRAG(max_bytes=bad)  # type: ignore[arg-type]


def test_a_file_within_the_limit_is_read(rag: HybridRAG, tmp_path: Path) -> None:
    small = tmp_path / "small-note.txt"
    small.write_text("Product name: Smallex\nFlash point: 12 C\n")
    assert stat.S_ISREG(small.stat().st_mode)
    assert rag.ingest(small).status == "ingested"
    rag.forget(small.stem)


def test_the_cli_takes_max_bytes(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from hybrid_rag.cli import app

    note = tmp_path / "note.txt"
    note.write_text("Product name: Limitex\nFlash point: 12 C\n" * 10)
    store = tmp_path / "store"
    runner = CliRunner()
    over = runner.invoke(app, ["ingest", str(note), "--store", str(store), "--max-bytes", "100"])
    assert over.exit_code == 1 and "larger than the limit of 100 bytes" in over.output
    pipe = _fifo(tmp_path)
    args = ["ingest", str(pipe), "--store", str(store)]
    refused, took = _within(lambda: runner.invoke(app, args))
    assert getattr(refused, "exit_code", None) == 1 and took < FAST_S
    ok = runner.invoke(app, ["ingest", str(note), "--store", str(store), "--max-bytes", "100000"])
    assert ok.exit_code == 0, ok.output
