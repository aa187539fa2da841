"""The exact filter scan: the ``p`` nearest rows of ``A (C, D) float32`` to a query by L1.

ClassMap's filter ranks classes by ``sum_i alpha_i |f_i - e_i|``, which is plain L1 between the
alpha-scaled query and alpha-scaled class embeddings (``alpha >= 0``). These are the exact scans
that the IVF index (``filter_ivf``) is measured against and that :class:`~.ann_index.FilterIndex`
uses below its class threshold:

* :func:`scan_top` one query, one thread: L1 fused with a running top-p (no ``(C,)`` or ``(C, d)``
  temporary). Rows zero-padded to a multiple of 16 floats (:func:`pad_columns`) give the
  same answer about 25-35 % faster (no loop tail; ``bench scale`` measures both);
* :func:`scan_top_chunks` one query split over threads (each a chunk of rows, then a merge);
* :func:`scan_batch` many queries in parallel;
* :func:`exact_filter_numpy` the plain numpy reference (one subtract, abs, row sum, argpartition).
"""
from __future__ import annotations

import numba as nb
import numpy as np

from ._topk import topk_insert

_OPTS = dict(nogil=True, fastmath=True, cache=True, boundscheck=False)
#: rows are zero-padded to a multiple of this many float32 (or uint8 code) columns so the inner
#: loops vectorise without a tail; padding adds |0 - 0| = 0 to every distance
PAD = 16


def pad_columns(X: np.ndarray, multiple: int = PAD, dtype=None) -> np.ndarray:
    """``X (n, d)`` copied into a C-contiguous ``(n, D)`` array of zeros, ``D`` = d rounded up to ``multiple``."""
    D = -(-X.shape[1] // multiple) * multiple
    out = np.zeros((X.shape[0], D), dtype or X.dtype)
    out[:, :X.shape[1]] = X
    return out


@nb.njit(**_OPTS)
def _scan_range(q, A, lo, hi, p, topd, topc):
    """Top-p of rows ``lo..hi`` of ``A`` by L1 to ``q`` into ``topd/topc``; returns the fill count."""
    d = A.shape[1]
    filled = 0
    worst = np.float32(np.inf)
    for c in range(lo, hi):
        s = np.float32(0.0)
        for j in range(d):
            s += abs(q[j] - A[c, j])
        if s < worst:
            filled = topk_insert(s, c, filled, p, topd, topc)
            if filled == p:
                worst = topd[p - 1]
    return filled


@nb.njit(**_OPTS)
def scan_top(q, A, p, topd, topc):
    """L1 from ``q (D,) float32`` to every row of ``A (C, D) float32``; ``topd/topc[:p]`` = the p nearest
    (float32 distance, int64 row), ascending, ties by row. Returns the number filled, ``min(p, C)``."""
    return _scan_range(q, A, 0, A.shape[0], p, topd, topc)


@nb.njit(parallel=True, **_OPTS)
def scan_top_chunks(q, A, p, n_chunks, topd, topc):
    """:func:`scan_top` with the rows split into ``n_chunks`` contiguous chunks scanned in parallel
    (numba threads; ``numba.set_num_threads`` caps them), then the chunks' top-p merged.

    The same answer as :func:`scan_top` (ties by row, as chunks are merged in row order)."""
    C = A.shape[0]
    cd = np.empty((n_chunks, p), np.float32)
    cc = np.empty((n_chunks, p), np.int64)
    fill = np.empty(n_chunks, np.int64)
    for t in nb.prange(n_chunks):
        fill[t] = _scan_range(q, A, C * t // n_chunks, C * (t + 1) // n_chunks, p, cd[t], cc[t])
    filled = 0
    for t in range(n_chunks):
        for i in range(fill[t]):
            filled = topk_insert(cd[t, i], cc[t, i], filled, p, topd, topc)
    return filled


@nb.njit(parallel=True, **_OPTS)
def scan_batch(Q, A, p, out_cls, out_dist):
    """:func:`scan_top` of each row of ``Q (n, D)`` (queries in parallel) into ``out_cls/out_dist (n, p)``."""
    for i in nb.prange(Q.shape[0]):
        scan_top(Q[i], A, p, out_dist[i], out_cls[i])


def exact_filter_numpy(Q: np.ndarray, A: np.ndarray, p: int, buf: np.ndarray | None = None) -> np.ndarray:
    """Reference exact filter in plain numpy: ``(n, p) int64`` nearest rows of ``A`` by L1, ascending.

    ``buf`` is an optional preallocated ``(C, d) float32`` work array (the fastest numpy form: one
    subtract, one abs, one row sum, all in place, then ``argpartition``).
    """
    C = A.shape[0]
    if buf is None:
        buf = np.empty_like(A)
    out = np.empty((Q.shape[0], p), dtype=np.int64)
    s = np.empty(C, dtype=np.float32)
    for i, q in enumerate(Q):
        np.subtract(A, q, out=buf)
        np.abs(buf, out=buf)
        buf.sum(axis=1, out=s)
        idx = np.argpartition(s, p - 1)[:p] if p < C else np.arange(C)
        out[i] = idx[np.argsort(s[idx], kind="stable")]
    return out
