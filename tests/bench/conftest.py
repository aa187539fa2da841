"""What the poisoned-test-part check of every bench shares: the test part replaced by noise with its labels
permuted must leave every choice (the ``selection`` objects) exactly as it was."""
from __future__ import annotations

import numpy as np
import pytest


class Poison:
    """Noise in place of a test part, and the selection objects without wall-clock fields."""

    @staticmethod
    def noise_like(X: np.ndarray, seed: int = 99) -> np.ndarray:
        rng = np.random.default_rng(seed)
        if X.dtype == np.uint8:
            return rng.integers(0, 256, X.shape, dtype=np.uint8)
        return (rng.standard_normal(X.shape) * (X.std() or 1.0) + X.mean()).astype(X.dtype)

    @staticmethod
    def permuted(y: np.ndarray, seed: int = 98) -> np.ndarray:
        return np.random.default_rng(seed).permutation(np.asarray(y))

    @classmethod
    def without_timings(cls, obj):
        """``obj`` with every wall-clock figure left out (keys ending ``_ms`` or ``_s``, or naming seconds
        or load): times differ between two runs on any machine, choices must not."""
        if isinstance(obj, dict):
            return {k: cls.without_timings(v) for k, v in obj.items()
                    if not (k.endswith(("_ms", "_s")) or "seconds" in k or "load" in k)}
        if isinstance(obj, list):
            return [cls.without_timings(v) for v in obj]
        return obj


@pytest.fixture
def poison() -> type[Poison]:
    return Poison
