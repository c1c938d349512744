"""Reciprocal rank fusion of several ranked lists (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

__all__ = ["Fused", "reciprocal_rank_fusion"]

K = TypeVar("K")


@dataclass(slots=True)
class Fused(Generic[K]):
    """One fused item: its key, RRF score and 1-based rank in each input list."""

    key: K
    score: float = 0.0
    ranks: dict[str, int] = field(default_factory=dict)


def reciprocal_rank_fusion(
    rankings: Mapping[str, Sequence[K]],
    *,
    k: int = 60,
    weights: Mapping[str, float] | None = None,
) -> list[Fused[K]]:
    """Fuse ranked lists: ``score = sum_i w_i / (k + rank_i)``; best first, ties by first seen.

    Args:
        rankings: retriever name -> keys, best first (duplicates after the first ignored).
        k: the RRF constant (60 as in Cormack et al.).
        weights: optional per-retriever weights (default 1.0).
    """
    fused: dict[K, Fused[K]] = {}
    for name, keys in rankings.items():
        w = 1.0 if weights is None else weights.get(name, 1.0)
        rank = 0
        for key in keys:
            item = fused.setdefault(key, Fused(key))
            if name in item.ranks:
                continue
            rank += 1
            item.ranks[name] = rank
            item.score += w / (k + rank)
    order = {key: i for i, key in enumerate(fused)}
    return sorted(fused.values(), key=lambda f: (-f.score, order[f.key]))
