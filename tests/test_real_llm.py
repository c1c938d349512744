"""A real model on a real server: Qwen2.5 0.5B on llama.cpp's OpenAI-compatible server.

Slow and opt-in (``bash .ci/test -m slow tests/test_real_llm.py``): it needs the runtime
and the weights that ``python benchmarks/real_model.py setup --dir DIR`` installs, named
by two variables:

* ``HYBRID_RAG_LLAMA_GGUF``: the 0.5B GGUF file (``DIR/gguf/qwen-0.5b.gguf``);
* ``HYBRID_RAG_LLAMA_PYTHON``: a Python with ``llama-cpp-python[server]``
  (``DIR/venv/bin/python``; default this interpreter).

Without them every test here is skipped, saying so. The model is not scripted: the tests
assert what must hold whatever it writes (shapes, bounds, checks), not its words.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from hybrid_rag import HybridRAG
from hybrid_rag.ask.llm_route import LLMRouter
from hybrid_rag.ingest.llm_extract import LLMExtractor
from hybrid_rag.models import ChatMessage
from hybrid_rag.samples import sample_pdfs

pytestmark = pytest.mark.slow

GGUF = os.environ.get("HYBRID_RAG_LLAMA_GGUF", "")
PYTHON = os.environ.get("HYBRID_RAG_LLAMA_PYTHON", sys.executable)


def _runtime() -> str | None:
    if not GGUF or not Path(GGUF).is_file():
        return "set HYBRID_RAG_LLAMA_GGUF to the 0.5B GGUF (benchmarks/real_model.py setup)"
    probe = subprocess.run([PYTHON, "-c", "import llama_cpp.server"], capture_output=True)
    if probe.returncode != 0:
        return f"{PYTHON} has no llama-cpp-python[server] (set HYBRID_RAG_LLAMA_PYTHON)"
    return None


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    missing = _runtime()
    if missing:
        pytest.skip(missing)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [PYTHON, "-m", "llama_cpp.server", "--model", GGUF, "--model_alias", "qwen-0.5b",
           "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096",
           "--n_threads", str(os.cpu_count() or 2)]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(180):
            try:
                urllib.request.urlopen(f"{url}/models", timeout=2).read()
                break
            except OSError:
                time.sleep(1)
        else:
            pytest.fail("the llama.cpp server did not start")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _llm(url: str, **kw: object):  # type: ignore[no-untyped-def]
    from hybrid_rag.providers import OpenAILLM

    return OpenAILLM("qwen-0.5b", base_url=url, timeout=600, **kw)  # type: ignore[arg-type]


def test_structured_output_settles_on_what_the_server_takes(server: str) -> None:
    llm = _llm(server)
    schema = {
        "title": "colour",
        "type": "object",
        "properties": {"colour": {"type": "string"}},
        "required": ["colour"],
        "additionalProperties": False,
    }
    ask = [ChatMessage(role="user", content="Name the colour of a ripe banana.")]
    done = anyio.run(lambda: llm.complete(ask, json_schema=schema, max_tokens=40))
    assert isinstance(json.loads(done.text).get("colour"), str)
    assert llm.structured_output == "json_object"  # llama-cpp-python refuses json_schema
    assert llm.usage.llm_calls == 1 and llm.usage.prompt_tokens > 0  # the refusal is no call


def test_a_stream_counts_tokens_and_stops_at_its_cap(server: str) -> None:
    llm = _llm(server)
    ask = [ChatMessage(role="user", content="Count from one to fifty in words.")]

    async def pieces() -> list[str]:
        return [p async for p in llm.stream(ask, max_tokens=12)]

    got = anyio.run(pieces)
    assert got and llm.usage.completion_tokens <= 13 and llm.usage.prompt_tokens > 0


def test_extraction_keeps_the_document_and_checks_every_quote(server: str, tmp_path: Path) -> None:
    pdf = sample_pdfs(tmp_path / "pdfs")[0]
    llm = _llm(server, max_concurrency=1)
    with HybridRAG(tmp_path / "store", embedder="hashing", extractor=LLMExtractor(llm)) as rag:
        report = rag.ingest(pdf)
        offline = HybridRAG(tmp_path / "offline", embedder="hashing")
        with offline:
            base = offline.ingest(pdf)
    assert report.status == "ingested" and report.triples >= base.triples  # offline facts stay
    assert report.usage.llm_calls >= 1


def test_an_answer_within_its_budget_and_two_calls(server: str, tmp_path: Path) -> None:
    llm = _llm(server)
    with HybridRAG(tmp_path / "store", embedder="hashing", llm=llm, router=LLMRouter(llm)) as rag:
        rag.ingest_many(sample_pdfs(tmp_path / "pdfs"), raise_errors=True)
        started = time.perf_counter()
        answer = rag.ask("Which of these cleaners may I store near heat?", timeout=240)
    assert time.perf_counter() - started < 260
    assert answer.usage.llm_calls <= 2
    if answer.generation == "llm":  # served only when every claim has a source
        assert answer.citations
    else:
        assert answer.text is None or answer.errors or answer.abstention
