"""Compiled (numba) kernels of ClassMap's batch filter-and-refine.

A batch of n queries does the same arithmetic as n single queries (``_classmap_kernels``; every
score bit-identical, see there), organised for the cache instead of per query:

* embedding: :func:`embed_batch` — blocks of queries against the d reference rows, three reference
  rows against four queries per pass (:func:`dot3x4`; the block's rows and the references stay in L2);
* filter: :func:`filter_batch_t` — the weighted-L1 scan over ``ET (d, C)`` in tiles of 64 classes
  shared by four queries (the last tile overlapping the one before: no scalar tail), all distances
  kept, then the top-p from the few classes under a bound from group minima (:func:`select_top`; the
  same list as the single query's running top-p);
* refine: :func:`group_by_row` inverts the ``(n, k)`` lists of classifier rows to evaluate into
  per-row query lists (a counting sort; rows whose output the embedding already holds are copied
  from ``F``), :func:`eval_grouped` reads each needed weight row once per batch and applies it to
  all its queries, four per pass (rows split over threads by their share of the work), and
  :func:`rank_batch` orders each query's candidates exactly as the single-query refine does.

Threads: each kernel is a serial ``nogil`` function over a range of queries (or weight rows) and
:func:`run_split` runs contiguous ranges on a small thread pool, ``numba.get_num_threads()`` of them
(``numba.set_num_threads`` caps it). Not ``prange``: inside numba's parallel region the same L1 loop
compiled without vectorising (measured 4x slower at 2430 classes, one thread).

Where the time goes (hand-pose: 2430 classes, D = 1764, d = 45, p = 15; 1000 queries, one thread,
loaded machine, best of 15): embedding 1.8 ms (79 M multiply-adds), L1 scan 3.8 ms (109 M terms, at
the vector units' limit: three operations a term), selection 0.9 ms, grouped refine 1.7 ms warm /
about 3 ms with the weight rows cold (memory-bound: 15 000 rows of 7 KB read), the rest < 0.2 ms.
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numba as nb
import numpy as np
from numba import types
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic

from ._classmap_kernels import rank, scale_query, stop_point, tail_distances, transpose_embeddings
from ._lane_dot import TILE, _check, _emit_dots, _row_ptr, dot1, dot4, l1_tile, l1_tile4
from ._topk import kth_upper_bound, le_mask16, topk_insert

_OPTS = dict(nogil=True, fastmath=True, cache=True, boundscheck=False)
_EXACT = dict(nogil=True, fastmath={"nnan", "ninf", "nsz", "arcp"}, cache=True, boundscheck=False)
#: queries per embedding block (their rows and the d reference rows fit in L2)
QBLOCK = 32


def _dot_block(n_a: int, n_b: int, doc: str):
    """An intrinsic ``(A, i_0..i_{n_a-1}, B, j_0..j_{n_b-1}) -> (float32,) * (n_a n_b)``: every product
    ``A[i] · B[j]`` in one pass, ``i`` major, each exactly as :func:`dot1` (:mod:`._lane_dot`'s emitter,
    which loads each row vector once per column step and shares it between its pairs)."""

    def typer(typingctx, A, *idx):
        _check(A, idx[n_a])
        B = idx[n_a]
        sig = types.UniTuple(types.float32, n_a * n_b)(A, *(types.int64,) * n_a, B, *(types.int64,) * n_b)

        def codegen(context, builder, signature, args):
            D = None
            rows_a = []
            for t in range(n_a):
                pa, D = _row_ptr(context, builder, A, args[0], args[1 + t])
                rows_a.append(pa)
            rows_b = [_row_ptr(context, builder, B, args[1 + n_a], args[2 + n_a + t])[0] for t in range(n_b)]
            vals = _emit_dots(builder, [(pa, pb) for pa in rows_a for pb in rows_b], D)
            return context.make_tuple(builder, signature.return_type, vals)

        return sig, codegen

    # numba's @intrinsic needs the typer's parameters spelled out (a *args typer mis-lowers), so the
    # signature is written for this block size
    params = ", ".join(["typingctx", "A"] + [f"i{t}" for t in range(n_a)] + ["B"] + [f"j{t}" for t in range(n_b)])
    ns = {"typer": typer}
    exec(f"def f({params}):\n    return typer(typingctx, A, {', '.join([f'i{t}' for t in range(n_a)] + ['B'] + [f'j{t}' for t in range(n_b)])})", ns)
    fn = ns["f"]
    fn.__doc__ = doc
    return intrinsic(fn)


dot2x4 = _dot_block(2, 4, """The eight products ``A[i] · B[j]`` for ``i`` in ``(i0, i1)``, ``j`` in ``(j0..j3)``, ``i0``
first: ``(i0·j0, i0·j1, i0·j2, i0·j3, i1·j0, ...)``, each exactly as :func:`dot1`.""")
dot3x4 = _dot_block(3, 4, """The twelve products ``A[i] · B[j]`` for ``i`` in ``(i0, i1, i2)``, ``j`` in ``(j0..j3)``, ``i``
major, each exactly as :func:`dot1`: seven row streams feed 24 multiply-adds per column step, 24 of the
32 vector registers holding sums (the batch embedding: three reference rows against four queries, the
fewest loads per multiply-add that fit the registers).""")


_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def run_split(fn, bounds, *args) -> None:
    """``fn(*args, lo, hi)`` for consecutive ``bounds`` pairs, one range per thread (``fn`` releases the GIL)."""
    global _pool
    ranges = [(int(bounds[i]), int(bounds[i + 1])) for i in range(len(bounds) - 1) if bounds[i + 1] > bounds[i]]
    if len(ranges) <= 1:
        for lo, hi in ranges:
            fn(*args, lo, hi)
        return
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=max(2, nb.config.NUMBA_NUM_THREADS),
                                       thread_name_prefix="classmap-batch")
    futures = [_pool.submit(fn, *args, lo, hi) for lo, hi in ranges[1:]]
    fn(*args, *ranges[0])                                   # the calling thread takes the first range
    for f in futures:
        f.result()


def _even(n: int, parts: int | None = None) -> np.ndarray:
    parts = max(1, min(n, parts or nb.get_num_threads()))
    return (np.arange(parts + 1) * n) // parts


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
    run_split(embed_range, _even(len(X)), X, W, b, refs, F)


#: classes per group of the batch filter's selection bound
GROUP = 16
#: the selection bound may exceed the group minima's p-th smallest by this many float32 steps (0.8 %):
#: a few more classes offered, half the passes of the exact order statistic (:func:`kth_upper_bound`)
BOUND_SLACK = 1 << 16


def padded_width(C: int) -> int:
    """Columns of the batch filter's distance rows: ``GROUP * ceil(C / GROUP)`` (the tail is +inf)."""
    return GROUP * ((C + GROUP - 1) // GROUP)


@nb.njit(**_OPTS)
def _group_minima(dist, G, gm):
    """``gm[g] = min_i dist[g + i G]`` over the ``GROUP`` rows of ``dist (GROUP * G,)`` seen as ``(GROUP, G)``:
    whole-row vector minima (a minimum is exact in any order)."""
    for g in range(G):
        gm[g] = dist[g]
    for i in range(1, GROUP):
        base = i * G
        for g in range(G):
            gm[g] = min(gm[g], dist[base + g])


#: at most this many classes under the bound are ranked by counting (branch-free); more are inserted
RANK_MAX = 64


@nb.njit(**_EXACT)
def select_top(dist, C, p, gm, cv, cc, topd, topc):
    """The p nearest of the distances ``dist[:C]`` into ``topd/topc`` (ascending, ties by the lower class):
    the same list as offering every class in order to the running top-p (:func:`topk_insert`).

    ``dist`` is padded to :func:`padded_width` with +inf and read as ``GROUP`` rows of ``G`` classes;
    group ``g`` holds the strided classes ``g, g + G, g + 2G, ...`` (on hand-pose and glyph-pose
    neighbouring indices are neighbouring poses of one shape, and the near classes of a query are
    mostly such neighbours: strided groups scatter them, so the bound below is tight). Bound: with
    ``gm`` the group minima, their p-th smallest ``U`` (distances are sums of absolute values, never
    negative) has p groups each holding a class at most ``U``, so the p nearest classes are all at
    most ``U``, and at most :func:`kth_upper_bound`'s slightly larger bound alike. One scan in class
    order, sixteen classes per compare (:func:`le_mask16`), collects the classes under the bound (about
    p of 2430 on hand-pose) into ``cv/cc (padded width,)`` scratch; up to ``RANK_MAX`` of them are
    placed by their rank (how many come before them by distance, then class: a branch-free count),
    more are offered in class order to :func:`topk_insert`. ``gm (G,)`` scratch. Returns the fill,
    ``min(p, C)``."""
    G = gm.shape[0]
    bound = np.float32(np.inf)
    _group_minima(dist, G, gm)
    if G > p:
        bound = kth_upper_bound(gm, p - 1, BOUND_SLACK)
    k = 0
    for c0 in range(0, C, GROUP):
        mask = le_mask16(dist, c0, bound)
        if mask == 0:
            continue
        if c0 + GROUP > C:
            mask &= (1 << (C - c0)) - 1                     # the +inf padding is never a class
        while mask != 0:
            i = trailing_zeros(mask)
            cv[k] = dist[c0 + i]
            cc[k] = c0 + i
            k += 1
            mask &= mask - 1
    if k <= RANK_MAX:
        for i in range(k):
            v = cv[i]
            r = 0
            for j in range(i):                              # earlier classes: before v when not larger
                r += cv[j] <= v
            for j in range(i + 1, k):                       # later classes: only when smaller
                r += cv[j] < v
            if r < p:
                topd[r] = v
                topc[r] = cc[i]
        return min(k, p)
    filled = 0
    for i in range(k):
        if filled < p or cv[i] < topd[p - 1]:
            filled = topk_insert(cv[i], cc[i], filled, p, topd, topc)
    return filled


@nb.njit(**_EXACT)
def filter_range(F, ET, alpha, p, out_cls, out_dist, lo, hi):
    """The filter of rows ``lo..hi`` of ``F (n, d)`` into ``out_cls/out_dist (n, p)``, each query getting
    what :func:`~._classmap_kernels.filter_one` gives it alone: four queries share each tile of ``ET``
    (:func:`._lane_dot.l1_tile4`), all their distances are kept, then :func:`select_top`."""
    d, C = ET.shape
    Cp = ((C + GROUP - 1) // GROUP) * GROUP
    G = Cp // GROUP
    FS = np.empty((4, d), np.float32)
    DIST = np.empty((4, Cp), np.float32)
    for t in range(4):
        for c in range(C, Cp):
            DIST[t, c] = np.inf
    gm = np.empty(G, np.float32)
    cv = np.empty(Cp, np.float32)
    cc = np.empty(Cp, np.int64)
    q = lo
    while q < hi:
        m = min(4, hi - q)
        for t in range(m):
            scale_query(F[q + t], alpha, FS[t])
        if m == 4:
            for c0 in range(0, C, TILE):
                if c0 + TILE <= C:
                    l1_tile4(FS, ET, c0, DIST)
                elif C >= TILE:
                    # the last tile overlaps the one before it: its classes get the same bits again,
                    # vectorised, instead of a scalar tail (1.5 of the 6.9 ms of 1000 hand-pose queries)
                    l1_tile4(FS, ET, C - TILE, DIST)
                else:
                    for t in range(4):
                        tail_distances(FS[t], ET, c0, C - c0, DIST[t, c0:])
        else:
            for t in range(m):
                for c0 in range(0, C, TILE):
                    if c0 + TILE <= C:
                        l1_tile(FS[t], ET, c0, DIST[t, c0:])
                    elif C >= TILE:
                        l1_tile(FS[t], ET, C - TILE, DIST[t, C - TILE:])
                    else:
                        tail_distances(FS[t], ET, c0, C - c0, DIST[t, c0:])
        for t in range(m):
            select_top(DIST[t], C, p, gm, cv, cc, out_dist[q + t], out_cls[q + t])
        q += m


def filter_batch_t(F, ET, alpha, p, out_cls, out_dist) -> None:
    """The exact filter of every row of ``F (n, d)`` against ``ET (d, C)``, queries split over threads."""
    run_split(filter_range, _even(len(F)), F, ET, alpha, p, out_cls, out_dist)

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


@nb.njit(**_EXACT)
def eval_range(X, W, b, starts, queries, slots, Rf, lo, hi):
    """``Rf[slots[g]] = W[r] · X[queries[g]] + b[r]`` for weight rows ``r`` in ``lo..hi`` and their
    queries (see :func:`group_by_row`): each row read once, applied to four queries per pass."""
    for r in range(lo, hi):
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
    ordered by response, exactly as :func:`~._classmap_kernels.refine_one` given the same
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


def filter_batch(F, E, alpha, p, out_cls, out_dist):
    """Filter of a batch: ``F (n, d)`` query embeddings, ``E (C, d)`` class embeddings -> ``out_cls
    (n, p)`` nearest classes / ``out_dist`` their distances (queries in parallel; same answer as
    :func:`filter_one` per query). :func:`filter_batch_t` with a kept transpose skips that step."""
    alpha = np.ascontiguousarray(alpha, np.float32)
    filter_batch_t(np.ascontiguousarray(F, np.float32), transpose_embeddings(E, alpha), alpha, p, out_cls, out_dist)
