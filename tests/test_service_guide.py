"""The service guide's examples, as written, against a real `hybrid-rag serve` on loopback.

The guide's curl commands run with the real curl, its Python blocks with the official
`openai` client, each in a fresh process; the printed output must match the comments.
Only the port (the guide says 8000) and the job id (which the upload returns) are filled in.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("uvicorn", reason="needs the [server] extra")
pytest.importorskip("openai", reason="needs the openai client ([dev] or [openai] extra)")

import httpx
from conftest import REPO, free_port
from doc_blocks import blocks, expected_lines, mismatches

GUIDE = REPO / "docs" / "guides" / "service.md"
SHEETS = {
    "acetone.pdf": "acetone-hplc-grade-6732361021b8a.pdf",
    "ethyl-acetate.pdf": "ethyl-acetate-995-acs-grade-673392eb02d41.pdf",
}


def _key() -> str:
    serve = next(b for b in blocks(GUIDE, "bash") if "hybrid-rag serve" in b)
    match = re.search(r"HYBRID_RAG_API_KEYS=(\S+)", serve)
    assert match, "the guide's serve command sets HYBRID_RAG_API_KEYS"
    return match.group(1)


@pytest.fixture(scope="module")
def served(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A real server holding nothing yet, and a folder with the files the guide uploads."""
    work = tmp_path_factory.mktemp("guide")
    for name, source in SHEETS.items():
        shutil.copy(corpus / "laballey" / source, work / name)
    port = free_port()
    env = {**os.environ, "HYBRID_RAG_API_KEYS": _key()}
    cmd = [sys.executable, "-m", "hybrid_rag.cli", "serve", "--store", str(work / "store")]
    cmd += ["--port", str(port), "--embedder", "hashing"]
    proc = subprocess.Popen(cmd, env=env, cwd=work, stderr=subprocess.PIPE, text=True)
    url = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            try:
                if httpx.get(f"http://{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        yield url, work
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()


def _curl_commands() -> list[str]:
    block = next(b for b in blocks(GUIDE, "bash") if "/documents" in b and "curl" in b)
    return [c.strip() for c in block.replace("\\\n", " ").splitlines() if c.startswith("curl")]


def _sh(command: str, cwd: Path) -> str:
    run = subprocess.run(command, shell=True, cwd=cwd, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, f"{command}\n{run.stderr}"
    return run.stdout


def test_the_guide_has_its_examples() -> None:
    assert len(_curl_commands()) == 3
    python = blocks(GUIDE)
    assert sum("from openai import OpenAI" in b for b in python) == 2
    assert all(expected_lines(b) for b in python if "openai" in b)


@pytest.fixture(scope="module")
def curled(served: tuple[str, Path]) -> dict[str, Any]:
    """The guide's three curl commands, run once: upload, poll the job until done, ask."""
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed")
    url, work = served
    upload, job, ask = (c.replace("localhost:8000", url) for c in _curl_commands())
    accepted = json.loads(_sh(upload, work))
    for _ in range(600):
        status = json.loads(_sh(job.replace("<job_id>", accepted["job_id"]), work))
        if status["status"] == "done":
            break
        time.sleep(0.2)
    return {"accepted": accepted, "job": status, "answer": json.loads(_sh(ask, work))}


def test_curl_upload_job_and_ask(curled: dict[str, Any]) -> None:
    assert curled["accepted"]["files"] == list(SHEETS)
    assert [f["status"] for f in curled["job"]["files"]] == ["ingested", "ingested"]
    answer = curled["answer"]
    assert "-20 °C" in answer["text"] and answer["facts"][0]["doc_id"] == "acetone"


@pytest.mark.parametrize("index", [0, 1])
def test_openai_client_blocks(served: tuple[str, Path], curled: dict[str, Any], index: int) -> None:
    url, work = served
    code = [b for b in blocks(GUIDE) if "from openai import OpenAI" in b][index]
    run = subprocess.run(
        [sys.executable, "-c", code.replace("localhost:8000", url)],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, f"{code}\n--- stderr ---\n{run.stderr}"
    assert not mismatches(code, run.stdout), f"printed:\n{run.stdout}"
