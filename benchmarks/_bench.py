"""Timing helpers shared by the benchmark scripts."""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["meta", "ms", "stats", "write_json"]


def ms(fn: Callable[[], object]) -> float:
    """Milliseconds one call of ``fn`` takes."""
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def stats(samples: list[float], digits: int = 3) -> dict[str, float]:
    """p50, p95, max and count of latency samples in milliseconds."""
    s = sorted(samples)
    return {
        "p50_ms": round(statistics.median(s), digits),
        "p95_ms": round(s[min(len(s) - 1, int(0.95 * len(s)))], digits),
        "max_ms": round(s[-1], digits),
        "n": len(s),
    }


def meta(**extra: object) -> dict[str, object]:
    """Where and when a result was measured (load average: the machine is shared)."""
    return {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()} python {platform.python_version()}",
        "cpus": os.cpu_count(),
        "load_average_at_end": os.getloadavg(),
        **extra,
    }


def write_json(out: Path, payload: dict[str, Any]) -> None:
    """Write ``payload`` to ``out`` (folders created)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=1) + "\n")
