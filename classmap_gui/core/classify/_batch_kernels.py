"""Compiled (numba) kernels of ClassMap's batch filter-and-refine.

A batch of n queries does the same arithmetic as n single queries (``_classmap_kernels``; every
score bit-identical, see there), organised for the cache instead of per query:

* embedding: :func:`embed_batch` — blocks of queries against the d reference rows, one reference
  row against four queries per pass (the block's rows and the references stay in L2);
* filter: :func:`filter_batch_t` — the blocked weighted-L1 scan over ``ET (d, C)``, queries in
  parallel (numba threads, ``nogil``);
* refine: :func:`group_by_row` inverts the ``(n, k)`` lists of classifier rows to evaluate into
  per-row query lists (a counting sort; rows whose output the embedding already holds are copied
  from ``F``), :func:`eval_grouped` reads each needed weight row once per batch and applies it to
  all its queries, four per pass (rows split over threads by their share of the work), and
  :func:`rank_batch` orders each query's candidates exactly as the single-query refine does.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from ._classmap_kernels import BLOCK, filter_one, rank, stop_point
from ._lane_dot import dot1, dot4

_EXACT = dict(nogil=True, fastmath={"nnan", "ninf", "nsz", "arcp"}, cache=True, boundscheck=False)
#: queries per embedding block (their rows and the d reference rows fit in L2)
QBLOCK = 32


@nb.njit(parallel=True, **_EXACT)
def embed_batch(X, W, b, refs, F):
    """``F[q, j] = W[refs[j]] · X[q] + b[refs[j]]`` for ``X (n, D)``, ``F (n, d)``."""
    n = X.shape[0]
    m = refs.shape[0]
    n_blocks = (n + QBLOCK - 1) // QBLOCK
    for blk in nb.prange(n_blocks):
        q0 = blk * QBLOCK
        q1 = min(n, q0 + QBLOCK)
        for j in range(m):
            r = refs[j]
            br = b[r]
            q = q0
            while q + 4 <= q1:
                s0, s1, s2, s3 = dot4(W, r, r, r, r, X, q, q + 1, q + 2, q + 3)
                F[q, j] = s0 + br
                F[q + 1, j] = s1 + br
                F[q + 2, j] = s2 + br
                F[q + 3, j] = s3 + br
                q += 4
            while q < q1:
                F[q, j] = dot1(W, r, X, q) + br
                q += 1


@nb.njit(parallel=True, **_EXACT)
def filter_batch_t(F, ET, alpha, p, out_cls, out_dist):
    """:func:`~._classmap_kernels.filter_one` of every row of ``F (n, d)`` into ``out_cls/out_dist (n, p)``."""
    n = F.shape[0]
    n_chunks = min(n, 64)
    for ch in nb.prange(n_chunks):
        acc = np.empty(BLOCK, np.float32)
        for q in range(ch * n // n_chunks, (ch + 1) * n // n_chunks):
            filter_one(F[q], ET, alpha, p, acc, out_dist[q], out_cls[q])


@nb.njit(**_EXACT)
def group_by_row(rows, refpos, F, R):
    """Invert ``rows (n, k)`` (classifier rows each query needs) into per-row query lists.

    Entries whose classifier is a reference get their output from ``F (n, d)`` into ``R (n, k)``
    now. Returns ``(starts (K + 1,), queries, slots)``: row ``r``'s queries are
    ``queries[starts[r]:starts[r + 1]]`` (in query order) and their outputs go to ``R.flat[slots]``.
    """
    n, k = rows.shape
    K = refpos.shape[0]
    starts = np.zeros(K + 1, np.int64)
    for q in range(n):
        for i in range(k):
            r = rows[q, i]
            rp = refpos[r]
            if rp >= 0:
                R[q, i] = F[q, rp]
            else:
                starts[r + 1] += 1
    for r in range(K):
        starts[r + 1] += starts[r]
    total = starts[K]
    queries = np.empty(total, np.int64)
    slots = np.empty(total, np.int64)
    pos = starts[:K].copy()
    for q in range(n):
        for i in range(k):
            r = rows[q, i]
            if refpos[r] < 0:
                j = pos[r]
                queries[j] = q
                slots[j] = q * k + i
                pos[r] += 1
    return starts, queries, slots


@nb.njit(parallel=True, **_EXACT)
def eval_grouped(X, W, b, starts, queries, slots, R):
    """``R.flat[slots[g]] = W[r] · X[queries[g]] + b[r]`` for each row r and its queries (see
    :func:`group_by_row`); each weight row is read once and applied to four queries per pass."""
    K = starts.shape[0] - 1
    total = starts[K]
    Rf = R.reshape(R.size)
    n_chunks = max(1, min(256, total // 16))
    bounds = np.searchsorted(starts, (np.arange(n_chunks + 1) * total) // n_chunks)
    bounds[0] = 0
    bounds[n_chunks] = K
    for ch in nb.prange(n_chunks):
        for r in range(bounds[ch], bounds[ch + 1]):
            g = starts[r]
            e = starts[r + 1]
            br = b[r]
            while g + 4 <= e:
                s0, s1, s2, s3 = dot4(W, r, r, r, r, X, queries[g], queries[g + 1], queries[g + 2], queries[g + 3])
                Rf[slots[g]] = s0 + br
                Rf[slots[g + 1]] = s1 + br
                Rf[slots[g + 2]] = s2 + br
                Rf[slots[g + 3]] = s3 + br
                g += 4
            while g < e:
                Rf[slots[g]] = dot1(W, r, X, queries[g]) + br
                g += 1


@nb.njit(parallel=True, **_EXACT)
def rank_batch(cands, R, refpos, mode, t, out_cls, out_score, out_eval):
    """Per query: the refine's stop point (mode 3) and evaluations, and the candidates ordered by
    response, exactly as :func:`~._classmap_kernels.refine_one` given the same responses ``R (n, p)``."""
    n, p = cands.shape
    for q in nb.prange(n):
        n_done, n_eval = stop_point(cands[q], R[q], p, refpos, mode, t)
        rank(cands[q], R[q], p, n_done, out_cls[q], out_score[q])
        out_eval[q] = n_eval


def refine_ova_batch(X, W, b, F, refpos, cands, mode, t, out_cls, out_score, out_eval):
    """Refine of a batch grouped by candidate class (linear one-vs-all, mode 2 or 3).

    Mode 3 scores every candidate of the batch (grouped work is cheaper than stopping per query),
    but counts, ranks and reports only what the single-query scan would have evaluated.
    """
    R = np.empty(cands.shape, np.float32)
    starts, queries, slots = group_by_row(cands, refpos, F, R)
    eval_grouped(X, W, b, starts, queries, slots, R)
    rank_batch(cands, R, refpos, mode, t, out_cls, out_score, out_eval)


def eval_rows(X, W, b, rows, F, refpos):
    """``R (n, k) float32`` = outputs of classifier ``rows (n, k)`` on ``X (n, D)``, grouped by row
    (references' outputs taken from ``F``); the all-pairs vote's pair classifiers."""
    R = np.empty(rows.shape, np.float32)
    starts, queries, slots = group_by_row(np.ascontiguousarray(rows, np.int64), refpos, F, R)
    eval_grouped(X, W, b, starts, queries, slots, R)
    return R
