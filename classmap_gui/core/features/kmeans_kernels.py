"""Fused element-wise kernels of the k-means encoder (numba, ``nogil`` so joblib threads run them in parallel).

After the distance GEMM ``G = X @ (-2 C^T)`` of a block of patches, one pass over ``G`` (still in cache)
adds the squared norms, takes the square root, the mean distance per patch, the triangle activation
``max(0, mean - z)``, and adds it into the patch's pooling quadrant. The numpy equivalent needs about
eight full passes over the (patches x K) matrix plus a reshape/sum for pooling; see
the ``kmeans`` module docstring for the measured numbers that justify this module (3.5x faster
encoding). :func:`~.kmeans_ops.pool_numpy` (here also ``numpy_pool``) does the same steps in plain numpy: the
fallback, the exported predict.py's encoder, and a check in the tests.
"""
from __future__ import annotations

import numpy as np

from .kmeans_ops import pool_numpy as numpy_pool  # noqa: F401  (the fallback, one implementation)

try:  # numba is a declared dependency; the fallback keeps the feature usable if it fails to import
    from numba import njit

    HAVE_NUMBA = True
except Exception:  # noqa: BLE001  # pragma: no cover - exercised only on broken installs
    HAVE_NUMBA = False


if HAVE_NUMBA:

    @njit(nogil=True, fastmath=True, cache=True)
    def triangle_pool(G, xx, cc, row0, n_pos, n_w, half_h, half_w, out):  # pragma: no cover - compiled
        """Triangle encoding + quadrant sum pooling of one block of patches, in place.

        G (R, K) float32: ``-2 x.c`` per patch row and centroid (overwritten with distances);
        xx (R,) float32 squared patch norms; cc (K,) float32 squared centroid norms;
        row0: index of G's first row among the chunk's patches (image-major, then row-major positions);
        n_pos positions per image, n_w per grid row; half_h/half_w: first grid row/column of the lower/right
        quadrants; out (B, 4, K) float32 accumulates the pooled features of the chunk's B images.
        """
        R, K = G.shape
        inv_k = np.float32(1.0 / K)
        zero = np.float32(0.0)
        for r in range(R):
            g = row0 + r
            img = g // n_pos
            pos = g - img * n_pos
            i = pos // n_w
            j = pos - i * n_w
            q = (2 if i >= half_h else 0) + (1 if j >= half_w else 0)
            x2 = xx[r]
            s = zero
            row = G[r]
            for k in range(K):
                d = row[k] + x2 + cc[k]
                z = np.sqrt(d if d > zero else zero)
                row[k] = z
                s += z
            mu = s * inv_k
            o = out[img, q]
            for k in range(K):
                v = mu - row[k]
                o[k] += v if v > zero else zero

    @njit(nogil=True, fastmath=True, cache=True)
    def hard_pool(G, xx, cc, row0, n_pos, n_w, half_h, half_w, out):  # pragma: no cover - compiled
        """Hard (1-of-K) encoding + quadrant sum pooling: counts of nearest centroids per quadrant.

        Same arguments as :func:`triangle_pool`; ``xx`` does not change the nearest centroid and is unused.
        """
        R, K = G.shape
        for r in range(R):
            g = row0 + r
            img = g // n_pos
            pos = g - img * n_pos
            i = pos // n_w
            j = pos - i * n_w
            q = (2 if i >= half_h else 0) + (1 if j >= half_w else 0)
            row = G[r]
            best = 0
            bestv = row[0] + cc[0]
            for k in range(1, K):
                v = row[k] + cc[k]
                if v < bestv:
                    bestv = v
                    best = k
            out[img, q, best] += 1.0
