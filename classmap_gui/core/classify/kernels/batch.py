"""Compiled (numba) kernels of ClassMap's batch filter-and-refine.

A batch of n queries does the same arithmetic as n single queries (``kernels.single``; every
score bit-identical, see there), organised for the cache instead of per query:

* embedding: :func:`embed_batch` — blocks of queries against the d reference rows, three reference
  rows against four queries per pass (:func:`dot3x4`; the block's rows and the references stay in L2);
* filter: :func:`.exact_filter.filter_batch_t` (the one exact filter family);
* refine: :func:`group_by_row` inverts the ``(n, k)`` lists of classifier rows to evaluate into
  per-row query lists (a counting sort; rows whose output the embedding already holds are copied
  from ``F``), :func:`eval_grouped` reads each needed weight row once per batch and applies it to
  all its queries, four per pass (rows split over threads by their share of the work; the query
  rows prefetched ahead), and :func:`rank_batch` orders each query's candidates exactly as the
  single-query refine does. Grouping within blocks of queries that stay in L2 instead was slower
  (3.2 against 2.4 ms on the probe below): each block reads its classes' weight rows again, and
  candidate pairs are too sparse (p of C classes per query) for a block to reuse them.

Threads: each kernel is a serial ``nogil`` function over a range of queries (or weight rows) and
:func:`.threads.run_split` runs contiguous ranges on a small thread pool.

Where the time goes (hand-pose: 2430 classes, D = 1764, d = 45, p = 15; 1000 queries, one thread,
loaded machine, best of 15): embedding 1.8 ms (79 M multiply-adds), L1 scan 3.8 ms (109 M terms, at
the vector units' limit: three operations a term), selection 0.9 ms, grouped refine 1.7 ms warm /
about 3 ms with the weight rows cold (memory-bound: 15 000 rows of 7 KB read), the rest < 0.2 ms.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from .single import rank, stop_point
from .threads import even_bounds, run_split
from .lane_dot import dot1, dot2x4, dot3x4, dot4
from .prefetch import prefetch_row

_EXACT = dict(nogil=True, fastmath={"nnan", "ninf", "nsz", "arcp"}, cache=True, boundscheck=False)
#: queries per embedding block (their rows and the d reference rows fit in L2)
QBLOCK = 32


@nb.njit(**_EXACT)
def embed_range(X, W, b, refs, F, lo, hi):
    """``F[q, j] = W[refs[j]] · X[q] + b[refs[j]]`` for queries ``lo..hi`` of ``X (n, D)``, ``F (n, d)``:
    blocks of ``QBLOCK`` queries, three reference rows against four queries per pass (:func:`dot3x4`;
    with two rows per pass the loads from L2 outran the multiply-adds: measured 2.3 -> 1.9 ms per
    1000 hand-pose queries), the last one or two rows by :func:`dot2x4` / :func:`dot4`."""
    m = refs.shape[0]
    for q0 in range(lo, hi, QBLOCK):
        q1 = min(hi, q0 + QBLOCK)
        j = 0
        while j + 3 <= m:
            r0 = refs[j]
            r1 = refs[j + 1]
            r2 = refs[j + 2]
            b0 = b[r0]
            b1 = b[r1]
            b2 = b[r2]
            q = q0
            while q + 4 <= q1:
                s = dot3x4(W, r0, r1, r2, X, q, q + 1, q + 2, q + 3)
                for t in range(4):
                    F[q + t, j] = s[t] + b0
                    F[q + t, j + 1] = s[4 + t] + b1
                    F[q + t, j + 2] = s[8 + t] + b2
                q += 4
            while q < q1:
                F[q, j] = dot1(W, r0, X, q) + b0
                F[q, j + 1] = dot1(W, r1, X, q) + b1
                F[q, j + 2] = dot1(W, r2, X, q) + b2
                q += 1
            j += 3
        if j + 2 <= m:
            r0 = refs[j]
            r1 = refs[j + 1]
            b0 = b[r0]
            b1 = b[r1]
            q = q0
            while q + 4 <= q1:
                s8 = dot2x4(W, r0, r1, X, q, q + 1, q + 2, q + 3)
                for t in range(4):
                    F[q + t, j] = s8[t] + b0
                    F[q + t, j + 1] = s8[4 + t] + b1
                q += 4
            while q < q1:
                F[q, j] = dot1(W, r0, X, q) + b0
                F[q, j + 1] = dot1(W, r1, X, q) + b1
                q += 1
            j += 2
        if j < m:
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


def embed_batch(X, W, b, refs, F) -> None:
    """:func:`embed_range` over all queries, split over threads."""
    run_split(embed_range, even_bounds(len(X)), X, W, b, refs, F)


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


#: pairs ahead whose query rows :func:`eval_range` prefetches (three passes of four)
AHEAD = 12


@nb.njit(**_EXACT)
def eval_range(X, W, b, starts, queries, slots, Rf, lo, hi):
    """``Rf[slots[g]] = W[r] · X[queries[g]] + b[r]`` for weight rows ``r`` in ``lo..hi`` and their
    queries (see :func:`group_by_row`): each row read once, applied to four queries per pass. The
    query rows, read in the grouping's order (most of the traffic: one row per pair), are prefetched
    ``AHEAD`` pairs on, and the next weight row before its turn: the first lines of each
    (:func:`.prefetch.prefetch_row`: prefetching whole rows cost more load slots than it saved)."""
    end = starts[hi]
    for r in range(lo, hi):
        g = starts[r]
        e = starts[r + 1]
        br = b[r]
        if r + 1 < hi:
            prefetch_row(W, r + 1)
        while g + 4 <= e:
            for t in range(AHEAD, AHEAD + 4):
                if g + t < end:
                    prefetch_row(X, queries[g + t])
            s0, s1, s2, s3 = dot4(W, r, r, r, r, X, queries[g], queries[g + 1], queries[g + 2], queries[g + 3])
            Rf[slots[g]] = s0 + br
            Rf[slots[g + 1]] = s1 + br
            Rf[slots[g + 2]] = s2 + br
            Rf[slots[g + 3]] = s3 + br
            g += 4
        while g < e:
            if g + AHEAD < end:
                prefetch_row(X, queries[g + AHEAD])
            Rf[slots[g]] = dot1(W, r, X, queries[g]) + br
            g += 1


def eval_grouped(X, W, b, starts, queries, slots, R) -> None:
    """:func:`eval_range` over all rows, split over threads into ranges of equal work (pairs)."""
    K = len(starts) - 1
    total = int(starts[K])
    parts = max(1, min(nb.get_num_threads(), total // 64))
    bounds = np.searchsorted(starts, (np.arange(parts + 1) * total) // parts)
    bounds[0], bounds[-1] = 0, K
    run_split(eval_range, bounds, X, W, b, starts, queries, slots, R.reshape(-1))


@nb.njit(**_EXACT)
def rank_range(cands, R, refpos, mode, t, out_cls, out_score, out_eval, lo, hi):
    """Per query ``lo..hi``: the refine's stop point (mode 3) and evaluations, and the candidates
    ordered by response, exactly as :func:`~.single.refine_one` given the same
    responses ``R (n, p)``."""
    p = cands.shape[1]
    for q in range(lo, hi):
        n_done, n_eval = stop_point(cands[q], R[q], p, refpos, mode, t)
        rank(cands[q], R[q], p, n_done, out_cls[q], out_score[q])
        out_eval[q] = n_eval


def rank_batch(cands, R, refpos, mode, t, out_cls, out_score, out_eval) -> None:
    """:func:`rank_range` over all queries (one thread: it is a small share of the work)."""
    rank_range(cands, R, refpos, mode, t, out_cls, out_score, out_eval, 0, len(cands))


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
