"""The HNSW graph walk over uint8 codes stored with each node's links, in numba: the ``codes`` walk of
:class:`..filters.graph.GraphFilterIndex`.

At 10^5 classes a faiss HNSW search is bound by memory latency, not arithmetic: expanding a node
reads its ~64 neighbours' float32 vectors from 64 random places (one cache miss each; a warm query
takes a third of a cold one). This walk keeps, for every node, its layer-0 neighbours' **codes in one
contiguous block** next to their ids (``inline (C * M0, Dc) uint8``, neighbour ``j`` of node ``c`` at
row ``c * M0 + j``), so an expansion is one sequential read the hardware prefetcher streams, and a
distance is one ``psadbw`` per 16 bytes (``kernels.ivf_lists.sad_row``). The codes are ``kernels.ivf_lists``'s: one
quantisation step for every dimension, so code L1 x step approximates L1; the walk ranks by codes and
the ``ef`` nodes it keeps are re-ranked by exact float32 L1 into the ``p`` returned (distances exact,
membership approximate, as with every filter index).

The graph is faiss's (built by ``IndexHNSWFlat`` in ``METRIC_L1``; its arrays ``offsets``,
``neighbors`` and ``cum_nneighbor_per_level`` are read, not changed): greedy descent through the upper
layers on the codes, then the layer-0 beam search of Malkov & Yashunin (2018, Alg. 2) with a
``ef``-wide result heap and a candidate heap. Every work buffer is per call, so threads may share an
index; a batch runs its queries in parallel (``prange``).
"""
from __future__ import annotations

import numba as nb
import numpy as np

from .ivf_lists import PAD, coded_query, pad_columns, sad_row
from .topk import topk_insert

_OPTS = dict(nogil=True, fastmath=True, cache=True, boundscheck=False)


@nb.njit(**_OPTS)
def _heap_push(hd, hi, n, d, i, sign):
    """Push ``(d, i)`` on the binary heap ``hd/hi[:n]`` (min-heap of ``sign * d``); returns ``n + 1``."""
    pos = n
    while pos > 0:
        parent = (pos - 1) >> 1
        if sign * hd[parent] <= sign * d:
            break
        hd[pos] = hd[parent]
        hi[pos] = hi[parent]
        pos = parent
    hd[pos] = d
    hi[pos] = i
    return n + 1


@nb.njit(**_OPTS)
def _heap_pop(hd, hi, n, sign):
    """Remove the top of the heap ``hd/hi[:n]`` (``n >= 1``); returns ``n - 1``."""
    n -= 1
    d = hd[n]
    i = hi[n]
    pos = 0
    while True:
        child = 2 * pos + 1
        if child >= n:
            break
        if child + 1 < n and sign * hd[child + 1] < sign * hd[child]:
            child += 1
        if sign * hd[child] >= sign * d:
            break
        hd[pos] = hd[child]
        hi[pos] = hi[child]
        pos = child
    if n > 0:
        hd[pos] = d
        hi[pos] = i
    return n


@nb.njit(**_OPTS)
def _walk_one(f, alpha, lo, inv_step, codes, inline, ids0, data, offsets, neighbors, cum, entry,
              max_level, ef, p, topd, topc):
    """The ``p`` nearest rows of the unscaled query ``f (d,)`` into ``topd/topc[:p]`` (ascending exact L1).

    ``codes (C, Dc) uint8`` every node's code (the upper-layer descent), ``inline (C * M0, Dc) uint8``
    and ``ids0 (C, M0) int32`` the layer-0 neighbours' codes and ids (-1 ends a list), ``data (C, Dp)
    float32`` the padded alpha-scaled rows (the re-rank); the rest are faiss's graph arrays."""
    Dp = data.shape[1]
    Dc = codes.shape[1]
    nb_ = Dc // 16
    M0 = ids0.shape[1]
    q, qc = coded_query(f, alpha, lo, inv_step, Dp, Dc)
    # greedy descent through the upper layers
    cur = entry
    dcur = sad_row(qc, 0, codes, cur * Dc, nb_)
    for level in range(max_level, 0, -1):
        changed = True
        while changed:
            changed = False
            b0 = offsets[cur] + cum[level]
            b1 = offsets[cur] + cum[level + 1]
            for j in range(b0, b1):
                v = neighbors[j]
                if v < 0:
                    break
                dv = sad_row(qc, 0, codes, v * Dc, nb_)
                if dv < dcur:
                    cur = v
                    dcur = dv
                    changed = True
    # layer 0: beam search with ef results
    C = ids0.shape[0]
    seen = np.zeros((C + 7) >> 3, np.uint8)
    cap = 16 * ef + M0
    cand_d = np.empty(cap, np.int64)
    cand_i = np.empty(cap, np.int64)
    res_d = np.empty(ef, np.int64)
    res_i = np.empty(ef, np.int64)
    seen[cur >> 3] |= np.uint8(1 << (cur & 7))
    nc = _heap_push(cand_d, cand_i, 0, dcur, cur, 1)
    nr = _heap_push(res_d, res_i, 0, dcur, cur, -1)
    while nc > 0:
        dc = cand_d[0]
        c = cand_i[0]
        if nr == ef and dc > res_d[0]:
            break
        nc = _heap_pop(cand_d, cand_i, nc, 1)
        row = c * M0
        for j in range(M0):
            v = ids0[c, j]
            if v < 0:
                break
            bit = np.uint8(1 << (v & 7))
            if seen[v >> 3] & bit:
                continue
            seen[v >> 3] |= bit
            dv = sad_row(qc, 0, inline, (row + j) * Dc, nb_)
            if nr < ef or dv < res_d[0]:
                if nc < cap:
                    nc = _heap_push(cand_d, cand_i, nc, dv, v, 1)
                if nr == ef:
                    nr = _heap_pop(res_d, res_i, nr, -1)
                nr = _heap_push(res_d, res_i, nr, dv, v, -1)
    # exact re-rank of the ef kept
    hits = 0
    for t in range(nr):
        r = res_i[t]
        s = np.float32(0.0)
        for j in range(Dp):
            s += abs(q[j] - data[r, j])
        if hits < p or s < topd[p - 1]:
            hits = topk_insert(s, r, hits, p, topd, topc)
    return hits


@nb.njit(parallel=True, **_OPTS)
def walk_batch(F, alpha, lo, inv_step, codes, inline, ids0, data, offsets, neighbors, cum, entry,
               max_level, ef, out_cls, out_dist):
    """:func:`_walk_one` for every row of ``F (n, d) float32`` (in parallel) into ``out_cls (n, p) int64`` /
    ``out_dist (n, p) float32``; slots beyond what was found hold -1 / +inf."""
    n, p = out_cls.shape
    for r in nb.prange(n):
        topd = np.empty(p, np.float32)
        topc = np.empty(p, np.int64)
        hits = _walk_one(F[r], alpha, lo, inv_step, codes, inline, ids0, data, offsets, neighbors, cum,
                         entry, max_level, ef, p, topd, topc)
        for k in range(p):
            out_dist[r, k] = topd[k] if k < hits else np.float32(np.inf)
            out_cls[r, k] = topc[k] if k < hits else -1


@nb.njit(**_OPTS)
def walk_one(f, alpha, lo, inv_step, codes, inline, ids0, data, offsets, neighbors, cum, entry,
             max_level, ef, out_cls, out_dist):
    """One query (``out_*`` of shape ``(1, p)``), without the parallel loop's start-up."""
    p = out_cls.shape[1]
    hits = _walk_one(f, alpha, lo, inv_step, codes, inline, ids0, data, offsets, neighbors, cum,
                     entry, max_level, ef, p, out_dist[0], out_cls[0])
    for k in range(hits, p):
        out_dist[0, k] = np.float32(np.inf)
        out_cls[0, k] = -1


def walk_arrays(faiss, index, scaled: np.ndarray) -> tuple:
    """The arguments of :func:`walk_one` / :func:`walk_batch` between ``alpha`` and ``ef``, derived from a
    built faiss ``IndexHNSWFlat`` over the alpha-scaled rows ``scaled (C, d) float32``: the quantiser
    (``kernels.ivf_lists``'s: per-dimension offset, one step), every node's code, the layer-0 neighbours' ids and
    their codes in one block per node, the padded rows, faiss's graph arrays (``offsets``, ``neighbors``,
    ``cum_nneighbor_per_level``), its entry point and top layer."""
    h = index.hnsw
    C = len(scaled)
    lo = scaled.min(axis=0).astype(np.float32)
    span = float((scaled.max(axis=0) - lo).max())
    step = span / 255.0 if span > 0 else 1.0
    codes = pad_columns(np.clip(np.rint((scaled - lo) / np.float32(step)), 0, 255).astype(np.uint8), PAD, np.uint8)
    offsets = faiss.vector_to_array(h.offsets).astype(np.int64)
    neighbors = faiss.vector_to_array(h.neighbors).astype(np.int32)
    cum = faiss.vector_to_array(h.cum_nneighbor_per_level).astype(np.int64)
    ids0 = np.ascontiguousarray(neighbors[offsets[:C, None] + np.arange(int(cum[1]))[None]])
    inline = np.ascontiguousarray(codes[np.maximum(ids0, 0)].reshape(-1, codes.shape[1]))
    return (lo, np.float32(1.0 / step), codes, inline, ids0, pad_columns(scaled, PAD, np.float32), offsets, neighbors,
            cum, int(h.entry_point), int(h.max_level))


__all__ = ["walk_arrays", "walk_batch", "walk_one"]
