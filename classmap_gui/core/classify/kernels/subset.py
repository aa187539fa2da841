"""Compiled kernel of subset scoring: ``out[i, j] = X[i] · W[idx[i, j]] + b[idx[i, j]]``.

Replaces numpy's gather + batched matmul (``np.matmul(W[idx], X[:, :, None])``) for batches: the
gather writes an ``(n, k, D)`` copy of the weights before reading it again, this kernel reads each
named weight row once, straight from ``W``: about 2.4x faster than the numpy path at 2430 classes,
D=1764, k=40 and 1000 queries. For a handful of queries the
thread start-up costs more than it saves, so :func:`classmap_gui.core.classify.banks.base.gathered_dot`
uses numpy below ``MIN_ROWS`` rows.
"""
from __future__ import annotations

import numpy as np

MIN_ROWS = 64

try:  # numba is a declared dependency; the numpy path stays as fallback and reference
    import numba
    from numba import njit

    HAVE_NUMBA = True
except Exception:  # noqa: BLE001  # pragma: no cover - only on broken installs
    HAVE_NUMBA = False


if HAVE_NUMBA:

    @njit(parallel=True, fastmath=True, cache=True)
    def subset_dot(X, W, b, idx, out):  # pragma: no cover - compiled
        """X (n, D) float32, W (M, D) float32, b (M,) float32, idx (n, k) int64 -> out (n, k) float32."""
        n, k = idx.shape
        D = X.shape[1]
        for i in numba.prange(n):
            for j in range(k):
                c = idx[i, j]
                acc = np.float32(0.0)
                for d in range(D):
                    acc += X[i, d] * W[c, d]
                out[i, j] = acc + b[c]
