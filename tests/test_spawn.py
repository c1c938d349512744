"""Worker processes are used only where spawning cannot re-run the user's script."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hybrid_rag._spawn import spawn_is_safe

PROBE = "from hybrid_rag._spawn import spawn_is_safe\n"


def _run(code: str, tmp_path: Path) -> str:
    script = tmp_path / "script.py"
    script.write_text(code, encoding="utf-8")
    out = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        timeout=120,
    )
    return out.stdout


def test_unguarded_script_is_not_safe(tmp_path: Path) -> None:
    assert _run(PROBE + "print(spawn_is_safe())\n", tmp_path).strip() == "False"


def test_guarded_script_is_safe(tmp_path: Path) -> None:
    code = (
        PROBE
        + "def main():\n    print(spawn_is_safe())\n\nif __name__ == '__main__':\n    main()\n"
    )
    assert _run(code, tmp_path).strip() == "True"


def test_no_main_file_is_safe() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE + "print(spawn_is_safe())"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "True"


def test_answer_is_the_same_from_a_worker_thread() -> None:
    import threading

    seen: list[bool] = []
    t = threading.Thread(target=lambda: seen.append(spawn_is_safe()))
    t.start()
    t.join()
    assert seen == [spawn_is_safe()]


@pytest.mark.parametrize("guarded", [False, True])
def test_script_top_level_runs_once(tmp_path: Path, guarded: bool) -> None:
    body = (
        "from hybrid_rag import HybridRAG\n"
        "from hybrid_rag.samples import sample_pdfs, write_pdf\n"
        "print('top-level ran')\n"
        "def main():\n"
        "    docs = sample_pdfs('docs')\n"
        "    docs += [write_pdf(f'docs/extra-{i}.pdf', [f'Extra {i}\\nFlash point: 1{i} C'])\n"
        "             for i in range(2)]\n"
        "    with HybridRAG(embedder='hashing') as rag:\n"
        "        print(sorted({r.status for r in rag.ingest_many(docs)}))\n"
    )
    body += "if __name__ == '__main__':\n    main()\n" if guarded else "main()\n"
    out = _run(body, tmp_path)
    assert out.count("['ingested']") == 1  # the work ran once, in the parent
    if not guarded:  # an unguarded script gets threads: nothing is re-imported
        assert out.count("top-level ran") == 1
