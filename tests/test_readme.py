"""Every Python block in README.md (and in the guides written for users) runs as written,
and prints what its comments say it prints.

Each block runs once, in a fresh process and an empty folder. A comment on a ``print``
line shows that line's output (``...`` elides); see ``doc_blocks``. Blocks that need a live
service (an OpenAI client against a running server: ``test_service_guide.py`` runs those)
are left out here.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from doc_blocks import blocks, expected_lines, mismatches

REPO = Path(__file__).resolve().parents[1]
PAGES = [
    "README.md",
    "docs/index.md",
    "docs/getting-started.md",
    "docs/guides/langchain.md",
    "docs/guides/service.md",
    "docs/guides/testing-stores.md",
]
NEEDS_A_LIVE_SERVICE = ("from openai import",)
KNOWN_WRONG: dict[str, str] = {}  # printed line -> why it is wrong for now


def _blocks() -> dict[str, str]:
    out = {}
    for page in PAGES:
        for i, code in enumerate(blocks(REPO / page)):
            if not any(marker in code for marker in NEEDS_A_LIVE_SERVICE):
                out[f"{page}#{i}"] = code
    return out


BLOCKS = _blocks()
_RUNS: dict[str, subprocess.CompletedProcess[str]] = {}


def _run(name: str, folder: Path) -> subprocess.CompletedProcess[str]:
    if name not in _RUNS:
        _RUNS[name] = subprocess.run(
            [sys.executable, "-c", BLOCKS[name]],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=300,
        )
    return _RUNS[name]


def test_readme_has_python_blocks() -> None:
    readme = [name for name in BLOCKS if name.startswith("README.md")]
    assert len(readme) >= 4
    assert sum(len(expected_lines(BLOCKS[n])) for n in readme) >= 8  # outputs are shown


@pytest.mark.parametrize("name", list(BLOCKS))
def test_block_runs(name: str, tmp_path: Path) -> None:
    run = _run(name, tmp_path)
    assert run.returncode == 0, f"{BLOCKS[name]}\n--- stderr ---\n{run.stderr}"
    assert "Warning" not in run.stderr, run.stderr


@pytest.mark.parametrize("name", [n for n in BLOCKS if expected_lines(BLOCKS[n])])
def test_block_prints_what_its_comments_show(name: str, tmp_path: Path) -> None:
    run = _run(name, tmp_path)
    assert run.returncode == 0, run.stderr
    missing = mismatches(BLOCKS[name], run.stdout)
    shown = expected_lines(BLOCKS[name])
    for line in KNOWN_WRONG:
        assert line not in shown or line in missing, f"{line!r} prints as shown: remove it"
    wrong = [m for m in missing if m not in KNOWN_WRONG]
    assert not wrong, f"comments no printed line shows: {wrong}\n--- printed ---\n{run.stdout}"
    if missing:
        pytest.xfail("; ".join(KNOWN_WRONG[m] for m in missing))


def test_the_output_check_reads_comments_and_ellipses() -> None:
    code = 'print(1)  # 2\nprint("a b c")  # a ... c\nx = 1  # not output\nprint(x)  # 1...'
    assert expected_lines(code) == ["2", "a ... c", "1..."]
    assert mismatches(code, "1\na b c\n1\n") == ["2"]
    assert mismatches(code, "2\na b c\n10\n") == []
    assert mismatches(code, "2\na b\n1\n") == ["a ... c"]
