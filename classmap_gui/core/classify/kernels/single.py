"""Compiled (numba) kernels of ClassMap's filter-and-refine classification.

Why numba: one query of a 2430-class, 1764-dimensional linear bank costs about 0.2 ms by
brute force (one BLAS ``sgemv``), and a plain numpy ClassMap query (gather d rows, a GEMV,
``np.abs(E - f) @ alpha`` with its ``(C, d)`` temporary, ``argpartition``, a second gather)
costs about the same: Python call overhead and temporaries eat the 16x fewer operations.
Here the embedding dot products, the weighted-L1 filter fused with a running top-p selection
(:func:`.exact_filter.filter_one`: no ``(C,)`` or ``(C, d)`` temporaries) and the refine dot
products run in compiled calls over buffers the caller preallocates, so a query allocates nothing.

One arithmetic for every path: the single query (here) and the batch (``kernels.batch``) must give
bit-identical scores, so no kernel that produces a number lets the compiler reorder sums. Dot
products are :mod:`.lane_dot`'s fixed-order vector kernels; the filter is :mod:`.exact_filter`
(one family for one query and many). The refine ranking is one shared insertion sort.

Conventions: ``W (K, D) float32`` stacked linear classifiers and ``b (K,) float32`` biases;
``refs (d,) int64`` reference classifier rows, ``alpha (d,) float32`` weights, ``E (C, d)
float32`` class embeddings, ``refpos (K,) int64`` = position of a classifier among the
references or -1 (so a reference that is also a candidate is not evaluated twice); ``ET (d, C)``
the class embeddings scaled by alpha and transposed (:func:`.exact_filter.transpose_embeddings`).
Refine modes: 2 = best OVA response among the top p, 3 = OVA + threshold (stop at the first
candidate in filter order with response >= t). Mode 1 (all-pairs vote) runs in numpy.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from .lane_dot import dot1, dot4
from .codes import codes_one
from .exact_filter import filter_one

#: kernels whose sums must not be reordered or fused (see the module docstring)
_EXACT = dict(nogil=True, fastmath={"nnan", "ninf", "nsz", "arcp"}, cache=True, boundscheck=False)


@nb.njit(**_EXACT)
def embed_one(x2, W, b, refs, fq):
    """``fq[j] = W[refs[j]] · x + b[refs[j]]`` for the one query ``x2 (1, D)``, four rows per pass."""
    m = refs.shape[0]
    j = 0
    while j + 4 <= m:
        r0, r1, r2, r3 = refs[j], refs[j + 1], refs[j + 2], refs[j + 3]
        s0, s1, s2, s3 = dot4(W, r0, r1, r2, r3, x2, 0, 0, 0, 0)
        fq[j] = s0 + b[r0]
        fq[j + 1] = s1 + b[r1]
        fq[j + 2] = s2 + b[r2]
        fq[j + 3] = s3 + b[r3]
        j += 4
    while j < m:
        fq[j] = dot1(W, refs[j], x2, 0) + b[refs[j]]
        j += 1


@nb.njit(**_EXACT)
def embed_filter_one(x2, W, b, refs, alpha, ET, p, fq, acc, topd, topc):
    """Embedding + filter of one query ``x2 (1, D)``: fills ``fq (d,)`` and ``topc[:m]``; returns m."""
    embed_one(x2, W, b, refs, fq)
    return filter_one(fq, ET, alpha, p, acc, topd, topc)


@nb.njit(**_EXACT)
def embed_codes_one(x2, W, b, refs, alpha, ET, CT, lo, hi, inv_s, SUB, ES, width, gamma, p, fq, scratch, topd, topc):
    """:func:`embed_filter_one` with the filter through the byte codes (:func:`.codes.codes_one`: the
    same list, a quarter of the filter's time at 2430 classes); returns m."""
    embed_one(x2, W, b, refs, fq)
    return codes_one(fq, ET, alpha, CT, lo, hi, inv_s, SUB, ES, width, gamma, p, scratch, topd, topc)


@nb.njit(**_EXACT)
def rank(topc, resp, m, n_done, out_cls, out_score):
    """Order candidates ``topc[:m]`` (filter order) by refine score into ``out_cls/out_score``:
    the first ``n_done`` (evaluated, responses ``resp``) by descending response (ties: filter
    order), then the rest in filter order with NaN."""
    for i in range(n_done):
        out_cls[i] = topc[i]
        out_score[i] = resp[i]
        k = i
        while k > 0 and out_score[k - 1] < out_score[k]:
            tmp_s = out_score[k - 1]
            out_score[k - 1] = out_score[k]
            out_score[k] = tmp_s
            tmp_c = out_cls[k - 1]
            out_cls[k - 1] = out_cls[k]
            out_cls[k] = tmp_c
            k -= 1
    for i in range(n_done, m):
        out_cls[i] = topc[i]
        out_score[i] = np.nan


@nb.njit(**_EXACT)
def stop_point(topc, resp, m, refpos, mode, t):
    """``(n_done, n_eval)``: candidates a refine evaluates in filter order (mode 3 stops at the first
    response >= t) and how many of them are not references (evaluated by the refine itself)."""
    n_done = m
    if mode == 3:
        for i in range(m):
            if resp[i] >= t:
                n_done = i + 1
                break
    n_eval = 0
    for i in range(n_done):
        if refpos[topc[i]] < 0:
            n_eval += 1
    return n_done, n_eval


@nb.njit(**_EXACT)
def refine_one(x2, W, b, fq, refpos, topc, m, mode, t, resp, out_cls, out_score):
    """Refine (mode 2 or 3) of one query ``x2 (1, D)`` over candidates ``topc[:m]`` in filter order.

    A candidate whose classifier is a reference reuses ``fq`` (no second evaluation). Mode 2 scores
    the candidates four rows per pass; mode 3 one at a time, stopping at the first response >= t.
    ``out_cls/out_score (>= m,)`` as :func:`rank`. Returns the evaluations made here.
    """
    if mode == 2:
        # the non-references' positions gathered into out_cls (scratch until rank() overwrites it)
        n_g = 0
        for i in range(m):
            rp = refpos[topc[i]]
            if rp >= 0:
                resp[i] = fq[rp]
            else:
                out_cls[n_g] = i
                n_g += 1
        g = 0
        while g + 4 <= n_g:
            i0, i1, i2, i3 = out_cls[g], out_cls[g + 1], out_cls[g + 2], out_cls[g + 3]
            c0, c1, c2, c3 = topc[i0], topc[i1], topc[i2], topc[i3]
            s0, s1, s2, s3 = dot4(W, c0, c1, c2, c3, x2, 0, 0, 0, 0)
            resp[i0] = s0 + b[c0]
            resp[i1] = s1 + b[c1]
            resp[i2] = s2 + b[c2]
            resp[i3] = s3 + b[c3]
            g += 4
        while g < n_g:
            i = out_cls[g]
            resp[i] = dot1(W, topc[i], x2, 0) + b[topc[i]]
            g += 1
    else:
        for i in range(m):
            c = topc[i]
            rp = refpos[c]
            resp[i] = fq[rp] if rp >= 0 else dot1(W, c, x2, 0) + b[c]
            if mode == 3 and resp[i] >= t:
                break
    n_done, n_eval = stop_point(topc, resp, m, refpos, mode, t)
    rank(topc, resp, m, n_done, out_cls, out_score)
    return n_eval
