"""Every Python block in README.md (and in the guides written for users) runs as written.

Each block runs in a fresh process and an empty folder. Blocks that need a live service
(an OpenAI client against a running server, HANA credentials) are left to their guides.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

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


def _blocks() -> list[tuple[str, str]]:
    out = []
    for page in PAGES:
        text = (REPO / page).read_text(encoding="utf-8")
        for i, code in enumerate(re.findall(r"```python\n(.*?)```", text, flags=re.S)):
            if not any(marker in code for marker in NEEDS_A_LIVE_SERVICE):
                out.append((f"{page}#{i}", code))
    return out


BLOCKS = _blocks()


def test_readme_has_python_blocks() -> None:
    assert sum(1 for name, _ in BLOCKS if name.startswith("README.md")) >= 4


@pytest.mark.parametrize("code", [c for _, c in BLOCKS], ids=[n for n, _ in BLOCKS])
def test_block_runs(code: str, tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, f"{code}\n--- stderr ---\n{run.stderr}"
    assert "Warning" not in run.stderr, run.stderr
