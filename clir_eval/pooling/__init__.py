"""Pooling finished runs across collections: one leaderboard of MT metrics per target, metric pairs
with equivalence bounds, and CLIR thresholds (``clir-eval pool``; docs/pooling.md)."""

from __future__ import annotations

from .core import PoolResult, assign_weights, pool

__all__ = ["PoolResult", "assign_weights", "pool"]
