"""Code blocks of the user-facing pages, and the check that their output comments are true.

A comment on a ``print(...)`` line shows what that line prints: ``print(x)  # 42``. The
comment may elide with ``...`` (any text, also at the end). The printed lines must contain
every such comment in order, each matching one whole line.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["blocks", "expected_lines", "mismatches"]

_PRINT = re.compile(r"^\s*print\(.*\)\s+#\s?(?P<shown>.*?)\s*$")


def blocks(page: Path, lang: str = "python") -> list[str]:
    """The fenced ``lang`` blocks of a Markdown page, in order."""
    return re.findall(rf"```{lang}\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)


def expected_lines(code: str) -> list[str]:
    """The output comments of a block's ``print`` lines, in order."""
    return [m["shown"] for line in code.splitlines() if (m := _PRINT.match(line))]


def _matches(shown: str, line: str) -> bool:
    pattern = ".*".join(re.escape(piece) for piece in shown.split("..."))
    return re.fullmatch(pattern, line.rstrip()) is not None


def mismatches(code: str, stdout: str) -> list[str]:
    """Output comments of ``code`` that no printed line (after the previous match) shows."""
    lines, at, missing = stdout.splitlines(), 0, []
    for shown in expected_lines(code):
        hit = next((i for i in range(at, len(lines)) if _matches(shown, lines[i])), None)
        if hit is None:
            missing.append(shown)
        else:
            at = hit + 1
    return missing
