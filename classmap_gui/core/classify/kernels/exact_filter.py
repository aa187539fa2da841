"""The exact weighted-L1 top-p filter of ClassMap: one kernel family for one query and for many (numba).

ClassMap's filter ranks classes by ``sum_j alpha_j |f_j - E[c, j]|`` and keeps the p nearest. Every
exact filter of the package is this module: the live single query (:func:`filter_one`), the batch
(:func:`filter_batch_t`, which the exact filter index, :class:`..filters.exact.ExactFilter`, runs) and, in numpy,
its twin :func:`..classmap.ops.filter_exact` that the exported ``predict.py`` inlines. All give
bit-identical distances and the same lists (ties: the lower class first); so does :mod:`.codes`,
which prefilters a batch on byte codes and computes the distances it keeps with this module's arithmetic.

One arithmetic: the distance of class ``c`` is ``sum_j |alpha_j f_j - alpha_j E[c, j]|`` (``alpha >=
0``: the weighted L1, three operations a term) added in ``j`` order, vectorised across classes over the
scaled, transposed embeddings ``ET (d, C)`` = :func:`transpose_embeddings`; the kernels that produce a
number are compiled without reassociation or FMA contraction. Both paths share the scaled query
(:func:`scale_query`), the tile of ``TILE`` classes (:func:`.lane_dot.l1_tile`, four queries at once:
``l1_tile4``) with the last tile overlapping the one before instead of a scalar tail, and
:func:`tail_distances` below one tile. They differ only in how the p nearest are kept: one query keeps a
running top-p and skips whole tiles (:func:`insert_tile`; nothing allocated, for live video), a batch
keeps every distance and selects under a bound from group minima (:func:`select_top`; cheaper per query).

Where the time goes (hand-pose: 2430 classes, d = 45, p = 15; 1000 queries, one thread): L1 scan
3.8 ms (109 M terms, at the vector units' limit), selection 0.9 ms.
"""
from __future__ import annotations

import numba as nb
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from .lane_dot import TILE, l1_tile, l1_tile4
from .threads import even_bounds, run_split
from .topk import kth_upper_bound, le_mask16, topk_insert

_OPTS = dict(nogil=True, fastmath=True, cache=True, boundscheck=False)
#: kernels whose sums must not be reordered or fused (see the module docstring)
_EXACT = dict(nogil=True, fastmath={"nnan", "ninf", "nsz", "arcp"}, cache=True, boundscheck=False)

__all__ = ["TILE", "filter_batch", "filter_batch_t", "filter_one", "filter_scratch", "padded_width",
           "scale_query", "select_top", "tail_distances", "transpose_embeddings"]


# ---------------------------------------------------------------- shared: layout, scaled query, tail
def transpose_embeddings(E: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """``E (C, d)``, ``alpha (d,) >= 0`` -> ``ET (d, C) float32`` = ``alpha_j * E[c, j]`` at ``[j, c]``,
    C-contiguous: the layout the filter kernels scan (each product rounded once, as the kernels
    round ``alpha_j * f_j``)."""
    alpha = np.asarray(alpha, np.float32)
    if np.any(alpha < 0):
        raise ValueError("ClassMap filter weights alpha must be >= 0")
    return np.ascontiguousarray(np.asarray(E, np.float32).T * alpha[:, None])


@nb.njit(**_EXACT)
def scale_query(fq, alpha, fs):
    """``fs[j] = alpha[j] * fq[j]``: the query in the filter's alpha-scaled space."""
    for j in range(fq.shape[0]):
        fs[j] = alpha[j] * fq[j]


@nb.njit(**_EXACT)
def tail_distances(fs, ET, c0, n_t, dist):
    """``dist[:n_t]`` for classes ``c0..c0+n_t`` (fewer than a tile) by the same operations as ``l1_tile``."""
    d = ET.shape[0]
    for c in range(n_t):
        s = np.float32(0.0)
        for j in range(d):
            s += abs(fs[j] - ET[j, c0 + c])
        dist[c] = s


# ---------------------------------------------------------------- one query: a running top-p
def filter_scratch(d: int) -> np.ndarray:
    """The filter's per-query scratch (:func:`filter_one`): the scaled query and one tile of distances."""
    return np.empty(d + TILE, np.float32)


@nb.njit(**_OPTS)
def _tile_min(dist, n_t):
    """The smallest of ``dist[:n_t]`` (vectorised; a minimum does not depend on the order taken)."""
    m = dist[0]
    for c in range(1, n_t):
        m = min(m, dist[c])
    return m


@nb.njit(**_EXACT)
def insert_tile(dist, n_t, c0, filled, p, topd, topc):
    """Offer classes ``c0..c0+n_t`` with distances ``dist[:n_t]`` to the running top-p; returns the fill.

    A tile whose nearest class is not below the current p-th is skipped whole (most tiles, once the
    list is full); inside a tile the p-th is kept in a register. Same decisions as offering each
    class to ``topk_insert`` in order."""
    if filled == p and not _tile_min(dist, n_t) < topd[p - 1]:
        return filled
    worst = topd[p - 1]
    for c in range(n_t):
        s = dist[c]
        if filled < p or s < worst:
            filled = topk_insert(s, c0 + c, filled, p, topd, topc)
            if filled == p:
                worst = topd[p - 1]
    return filled


@nb.njit(**_EXACT)
def filter_one(fq, ET, alpha, p, acc, topd, topc):
    """Weighted L1 from ``fq (d,)`` to every class of ``ET (d, C)`` (alpha-scaled, see
    :func:`transpose_embeddings`); the ``p`` nearest into ``topd/topc[:p]`` ascending (ties: lower
    class first). ``acc`` = :func:`filter_scratch` ``(d)``. Returns the number filled, ``min(p, C)``.

    Tiles of ``TILE`` classes go through :func:`.lane_dot.l1_tile` (sums in registers); the last
    ``C mod TILE`` classes through one more tile ending at class C (overlapping the one before, whose
    classes are not offered twice), or below ``TILE`` classes :func:`tail_distances` (the same
    operations, scalar: the same bits)."""
    d, C = ET.shape
    fs = acc[:d]
    dist = acc[d:d + TILE]
    scale_query(fq, alpha, fs)
    filled = 0
    for c0 in range(0, C, TILE):
        n_t = min(TILE, C - c0)
        if n_t == TILE:
            l1_tile(fs, ET, c0, dist)
            filled = insert_tile(dist, n_t, c0, filled, p, topd, topc)
        elif C >= TILE:
            # the last tile overlaps the one before; only its new classes are offered
            l1_tile(fs, ET, C - TILE, dist)
            filled = insert_tile(dist[TILE - n_t:], n_t, c0, filled, p, topd, topc)
        else:
            tail_distances(fs, ET, c0, n_t, dist)
            filled = insert_tile(dist, n_t, c0, filled, p, topd, topc)
    return filled


# ---------------------------------------------------------------- a batch: all distances, then a bounded selection
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
    what :func:`~.single.filter_one` gives it alone: four queries share each tile of ``ET``
    (:func:`.lane_dot.l1_tile4`), all their distances are kept, then :func:`select_top`."""
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
    run_split(filter_range, even_bounds(len(F)), F, ET, alpha, p, out_cls, out_dist)



def filter_batch(F, E, alpha, p, out_cls, out_dist):
    """Filter of a batch: ``F (n, d)`` query embeddings, ``E (C, d)`` class embeddings -> ``out_cls
    (n, p)`` nearest classes / ``out_dist`` their distances (queries in parallel; same answer as
    :func:`filter_one` per query). :func:`filter_batch_t` with a kept transpose skips that step."""
    alpha = np.ascontiguousarray(alpha, np.float32)
    filter_batch_t(np.ascontiguousarray(F, np.float32), transpose_embeddings(E, alpha), alpha, p, out_cls, out_dist)
