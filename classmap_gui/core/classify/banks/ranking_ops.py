"""Ranking class scores (numpy only): the app's brute-force ranking, inlined into the exported predict.py."""
from __future__ import annotations

import numpy as np


def top_k(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``(n, k) int64`` and values ``(n, k) float32`` of the ``k`` largest scores per row, best first."""
    n, C = scores.shape
    k = max(1, min(int(k), C))
    if k < C:
        part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    else:
        part = np.broadcast_to(np.arange(C), (n, C)).copy()
    vals = np.take_along_axis(scores, part, axis=1)
    order = np.argsort(-vals, axis=1, kind="stable")
    idx = np.take_along_axis(part, order, axis=1).astype(np.int64)
    return idx, np.take_along_axis(vals, order, axis=1).astype(np.float32)
