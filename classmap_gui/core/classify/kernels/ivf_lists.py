"""An inverted-file (IVF) index for L1 nearest rows, in numba: ClassMap's sublinear filter step.

The alpha-scaled class embeddings ``A (C, d) float32`` are split by k-means into ``nlist`` lists;
a query scans only the ``nprobe`` lists whose centroids are nearest, on uint8 codes, and re-ranks
the best of those codes with exact float32 L1:

* build (:meth:`IVFLists.build`): Lloyd k-means (squared L2, GEMM; ``features.clustering.lloyd``)
  places the centroids, then each row goes to its nearest centroid **by L1** (the search metric);
  rows are stored contiguously in list order, zero-padded to a multiple of 16 columns, as float32
  and as uint8 codes with one quantisation step for all dimensions (so code L1 x step approximates
  L1; a per-dimension step would break that);
* search (:func:`_ivf_one`, one compiled ``nogil`` call per query): code SAD to the (coded)
  centroids, the ``nprobe`` nearest lists by a counting sort (more when they hold fewer than p rows),
  a uint8 SAD scan of those lists keeping the ``R`` best codes, an exact float32 re-rank of those
  ``R``. Distances returned are exact; membership is approximate (recall measured by
  ``classmap bench scale``, which also chooses nlist, nprobe and R on validation queries).

The row SAD is a numba ``@intrinsic`` (:func:`sad_row`): one ``psadbw`` per 16 bytes on x86,
portable LLVM vector IR elsewhere; numba's own loop is scalar-ish and several times slower. All
work buffers are per call, so threads may search one index at once.
"""
from __future__ import annotations

import platform

import numba as nb
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from ...features.clustering import lloyd
from .topk import topk_insert

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


#: x86 has an instruction for the byte SAD (``psadbw``); elsewhere the portable pattern below is used
_X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")


@intrinsic
def sad_row(typingctx, a, ia, b, ib, nblocks):
    """``sum |a.flat[ia:ia+16n] - b.flat[ib:ib+16n]|`` of two C-contiguous uint8 arrays, n = ``nblocks``, as int64.

    On x86 each 16-byte block is one ``psadbw`` (``llvm.x86.sse2.psad.bw``) added into a vector
    accumulator, reduced once per row: measured at C = 10^5, d = 45 (3 blocks a row), the whole
    query 22 % faster than reducing each block, which in turn is twice numba's scalar loop.
    Elsewhere each block is zext/sub/abs/``vector.reduce.add`` (portable IR). The caller keeps
    the bytes in bounds (codes are padded to a multiple of 16).
    """
    sig = types.int64(a, types.intp, b, types.intp, types.intp)

    def codegen(context, builder, signature, args):
        aa, ia_, bb, ib_, n_ = args
        A = context.make_array(signature.args[0])(context, builder, aa)
        B = context.make_array(signature.args[2])(context, builder, bb)
        i64 = ir.IntType(64)
        vty = ir.VectorType(ir.IntType(8), 16)
        accty = ir.VectorType(i64, 2) if _X86 else i64

        def block(off):  # the SAD of one 16-byte block at block offset ``off`` (accty)
            va = builder.load(builder.bitcast(builder.gep(A.data, [builder.add(ia_, off)]), vty.as_pointer()), align=1)
            vb = builder.load(builder.bitcast(builder.gep(B.data, [builder.add(ib_, off)]), vty.as_pointer()), align=1)
            if _X86:
                fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(accty, [vty, vty]),
                                                    "llvm.x86.sse2.psad.bw")
                return builder.call(fn, [va, vb])
            wty = ir.VectorType(ir.IntType(32), 16)
            diff = builder.sub(builder.zext(va, wty), builder.zext(vb, wty))
            zero = ir.Constant(wty, None)
            absd = builder.select(builder.icmp_signed("<", diff, zero), builder.sub(zero, diff), diff)
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(32), [wty]),
                                                "llvm.vector.reduce.add.v16i32")
            return builder.zext(builder.call(fn, [absd]), i64)

        acc = cgutils.alloca_once_value(builder, ir.Constant(accty, None))
        # rows of up to 64 codes (d <= 64) are straight-line code; a runtime loop leaves ~15 % on the table
        unrolled = builder.icmp_unsigned("<=", n_, ir.Constant(i64, 4))
        with builder.if_else(unrolled) as (short, long_):
            with short:
                for k in range(4):
                    with builder.if_then(builder.icmp_unsigned(">", n_, ir.Constant(i64, k))):
                        builder.store(builder.add(builder.load(acc), block(ir.Constant(i64, 16 * k))), acc)
            with long_:
                with cgutils.for_range(builder, n_) as loop:
                    part = block(builder.mul(loop.index, ir.Constant(i64, 16)))
                    builder.store(builder.add(builder.load(acc), part), acc)
        total = builder.load(acc)
        if _X86:
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [accty]),
                                                "llvm.vector.reduce.add.v2i64")
            total = builder.call(fn, [total])
        return total

    return sig, codegen


@nb.njit(**_OPTS)
def sad_rows(qc, X, lo, hi, out):
    """Sum of absolute differences of uint8 codes ``qc (D,)`` and ``X[lo:hi] (n, D)`` into ``out (n,) uint32``.

    ``X`` is C-contiguous with ``D`` a multiple of 16.
    """
    D = X.shape[1]
    nblocks = D // 16
    for r in range(lo, hi):
        out[r - lo] = np.uint32(sad_row(qc, 0, X, r * D, nblocks))


@nb.njit(**_OPTS)
def _scan_lists(qc, codes, starts, order, t0, t1, need, rows, R, candd, candr, filled):
    """SAD-scan lists ``order[t0:t1]`` into the code pool ``candd/candr[:filled]`` (capped at ``R``),
    stopping once ``rows`` (running count) reaches ``need``; returns ``(filled, rows)``.

    Each row's SAD is compared as soon as it is computed (measured ~10 % faster than writing a
    list's SADs to a buffer and selecting in a second pass)."""
    uw = candd[R - 1] if filled == R else np.uint32(0xFFFFFFFF)
    D = codes.shape[1]
    nblocks = D // 16
    for t in range(t0, t1):
        l = order[t]
        a = starts[l]
        b = starts[l + 1]
        for r in range(a, b):
            s = np.uint32(sad_row(qc, 0, codes, r * D, nblocks))
            if s < uw:
                filled = topk_insert(s, r, filled, R, candd, candr)
                if filled == R:
                    uw = candd[R - 1]
        rows += b - a
        if rows >= need:
            break
    return filled, rows


@nb.njit(**_OPTS)
def _nearest_lists(dist, nprobe, order):
    """The ``nprobe`` smallest of ``dist (nlist,) uint32`` into ``order[:nprobe]``, nearest first; returns the count.

    A counting sort on ``dist >> shift`` (shift sized so there are about two bins per list) instead
    of a running insertion: with nprobe ~70 of ~1000 lists the insertion's shifting cost as much as
    the centroid distances themselves. Lists that share the last bin are taken by index and lists
    in one bin keep index order, so the order is ascending up to a bin's width.
    """
    n = dist.shape[0]
    top = np.uint32(0)
    for l in range(n):
        if dist[l] > top:
            top = dist[l]
    shift = 0
    while (top >> shift) > 2 * n:
        shift += 1
    bins = (top >> shift) + 1
    first = np.zeros(bins + 1, np.int64)
    for l in range(n):
        first[(dist[l] >> shift) + 1] += 1
    for b in range(1, bins + 1):
        first[b] += first[b - 1]
    for l in range(n):
        b = dist[l] >> shift
        pos = first[b]
        if pos < nprobe:
            order[pos] = l
        first[b] = pos + 1
    return min(nprobe, n)


@nb.njit(**_OPTS)
def _ivf_one(f, alpha, lo, inv_step, cent_codes, codes, data, ids, starts, p, nprobe, R, topd, topc):
    """IVF search of one unscaled query ``f (d,) float32``: ``topd/topc[:p]`` = exact L1 and class id, ascending.

    ``cent_codes (nlist, Dc) uint8``, ``data (C, D) float32`` and ``codes (C, Dc) uint8`` are
    padded, list-ordered; list ``l`` is rows ``starts[l]:starts[l+1]`` with class ids ``ids``.
    Ranks the lists by code SAD to their centroids, scans the ``nprobe`` nearest (more if they hold
    fewer than ``p`` rows), keeps the ``R`` best code distances, re-ranks them exactly. Returns the
    number of hits (``p`` unless C < p).
    """
    nlist = cent_codes.shape[0]
    q, qc = coded_query(f, alpha, lo, inv_step, data.shape[1], codes.shape[1])
    cdist = np.empty(nlist, np.uint32)
    candd = np.empty(R, np.uint32)
    candr = np.empty(R, np.int64)
    sad_rows(qc, cent_codes, 0, nlist, cdist)
    need = min(p, codes.shape[0])
    order = np.empty(nlist, np.int64)
    m = _nearest_lists(cdist, nprobe, order)
    filled, rows = _scan_lists(qc, codes, starts, order, 0, m, codes.shape[0] + 1, 0, R, candd, candr, 0)
    if rows < need:  # the probed lists hold fewer than p classes: take further lists, nearest first
        _nearest_lists(cdist, nlist, order)  # the same first m lists, then the rest by distance
        filled, rows = _scan_lists(qc, codes, starts, order, m, nlist, need, rows, R, candd, candr, filled)
    return _rerank(q, data, ids, candr, filled, p, 0, topd, topc)


@nb.njit(**_OPTS)
def coded_query(f, alpha, lo, inv_step, D, Dc):
    """The alpha-scaled query ``(D,) float32`` and its uint8 code ``(Dc,)``, zero-padded."""
    q = np.zeros(D, np.float32)
    qc = np.zeros(Dc, np.uint8)
    for j in range(f.shape[0]):
        q[j] = f[j] * alpha[j]
        c = np.floor((q[j] - lo[j]) * inv_step + np.float32(0.5))
        qc[j] = np.uint8(min(np.float32(255.0), max(np.float32(0.0), c)))
    return q, qc


@nb.njit(**_OPTS)
def _rerank(q, data, ids, candr, filled, p, hits, topd, topc):
    """Exact L1 of the rows ``candr[:filled]`` inserted into ``topd/topc[:hits]`` (capped at p); returns the count."""
    D = data.shape[1]
    worst = topd[p - 1] if hits == p else np.float32(np.inf)
    for i in range(filled):
        r = candr[i]
        s = np.float32(0.0)
        for j in range(D):
            s += abs(q[j] - data[r, j])
        if s < worst:
            hits = topk_insert(s, ids[r], hits, p, topd, topc)
            if hits == p:
                worst = topd[p - 1]
    return hits


@nb.njit(parallel=True, **_OPTS)
def _scan_split(f, alpha, lo, inv_step, codes, data, ids, p, R, threads, topd, topc):
    """One query against an index of ONE list (the quantised exact scan) on ``threads`` threads: each thread
    SAD-scans a contiguous share of the rows keeping its ``R`` best codes, then the union (a superset of
    the one-thread pool) is re-ranked exactly into ``topd/topc[:p]``. Returns the number of hits. With one
    thread it is :func:`_ivf_one`'s scan, row for row."""
    C = codes.shape[0]
    q, qc = coded_query(f, alpha, lo, inv_step, data.shape[1], codes.shape[1])
    T = max(1, min(threads, C // max(R, 1)))
    step = -(-C // T)
    candd = np.empty((T, R), np.uint32)
    candr = np.empty((T, R), np.int64)
    filled = np.zeros(T, np.int64)
    for t in nb.prange(T):
        bounds = np.array([t * step, min(C, (t + 1) * step)], np.int64)
        filled[t] = _scan_lists(qc, codes, bounds, np.zeros(1, np.int64), 0, 1, C + 1, 0, R, candd[t], candr[t], 0)[0]
    hits = 0
    for t in range(T):
        hits = _rerank(q, data, ids, candr[t], filled[t], p, hits, topd, topc)
    return hits


@nb.njit(parallel=True, **_OPTS)
def _ivf_batch(F, alpha, lo, inv_step, cent_codes, codes, data, ids, starts, p, nprobe, R, out_cls, out_dist):
    for i in nb.prange(F.shape[0]):
        _ivf_one(F[i], alpha, lo, inv_step, cent_codes, codes, data, ids, starts, p, nprobe, R,
                 out_dist[i], out_cls[i])


@nb.njit(parallel=True, **_OPTS)
def _assign_l1(A, cent, out):
    """``out[i]`` = the centroid nearest to row ``A[i]`` by L1."""
    for i in nb.prange(A.shape[0]):
        best = np.float32(np.inf)
        bl = 0
        for l in range(cent.shape[0]):
            s = np.float32(0.0)
            for j in range(A.shape[1]):
                s += abs(A[i, j] - cent[l, j])
            if s < best:
                best = s
                bl = l
        out[i] = bl


class IVFLists:
    """The lists of an IVF index over ``A (C, d) float32`` and the padded arrays its search reads.

    ``centroids (nlist, d) float32``; ``starts (nlist + 1,) int64`` list boundaries in the
    list-ordered rows; ``ids (C,) int64`` row of ``A`` (the class) at each list-ordered position.
    Derived: ``data (C, D) float32``, ``codes (C, D) uint8`` (list order) and ``cent_codes
    (nlist, D) uint8``, padded to D = d rounded up to 16; the quantiser ``lo (d,)`` and ``step``
    (one for all dimensions, so code L1 x step approximates L1 for rows and centroids alike).
    """

    def __init__(self, A: np.ndarray, centroids: np.ndarray, starts: np.ndarray, ids: np.ndarray):
        self.centroids, self.starts, self.ids = centroids, starts, ids
        rows = A[ids]
        self.lo = A.min(axis=0).astype(np.float32) if A.size else np.zeros(A.shape[1], np.float32)
        span = float((A.max(axis=0) - self.lo).max()) if A.size else 0.0
        self.step = span / 255.0 if span > 0 else 1.0
        self.data = pad_columns(rows, PAD, np.float32)
        self.codes = pad_columns(self.encode(rows), PAD, np.uint8)
        self.cent_codes = pad_columns(self.encode(centroids), PAD, np.uint8)
        # the arguments every search passes unchanged (a numba call checks each argument's type)
        self._fixed = (self.lo, np.float32(1.0 / self.step), self.cent_codes, self.codes, self.data, self.ids,
                       self.starts)

    def encode(self, X: np.ndarray) -> np.ndarray:
        """uint8 codes ``round((X - lo) / step)`` clipped to 0..255 of rows ``X (n, d)``."""
        return np.clip(np.rint((X - self.lo) / np.float32(self.step)), 0, 255).astype(np.uint8)

    @property
    def nlist(self) -> int:
        """Number of inverted lists (coarse centroids)."""
        return self.centroids.shape[0]

    @classmethod
    def build(cls, A: np.ndarray, nlist: int, n_iter: int, rng: np.random.Generator) -> "IVFLists":
        """k-means (squared L2, ``n_iter`` Lloyd passes) into ``min(nlist, C)`` lists, rows assigned by L1."""
        C = A.shape[0]
        nlist = min(int(nlist), C)
        cent = np.ascontiguousarray(lloyd(A, nlist, int(n_iter), rng, None, None), dtype=np.float32)
        assign = np.empty(C, np.int64)
        _assign_l1(A, cent, assign)
        ids = np.argsort(assign, kind="stable").astype(np.int64)
        starts = np.zeros(nlist + 1, np.int64)
        starts[1:] = np.cumsum(np.bincount(assign, minlength=nlist))
        return cls(A, cent, starts, ids)

    def search(self, F: np.ndarray, alpha: np.ndarray, p: int, nprobe: int, R: int,
               out_cls: np.ndarray, out_dist: np.ndarray) -> None:
        """Nearest ``p`` rows of each unscaled query ``F (n, d) float32`` (scaled by ``alpha`` inside)
        into C-contiguous ``out_cls (n, p) int64`` / ``out_dist (n, p) float32``; ``p <= C``."""
        args = (alpha, *self._fixed, p, max(1, min(int(nprobe), self.nlist)), max(p, int(R)))
        if F.shape[0] == 1 and self.nlist == 1:  # the quantised exact scan: one query on every thread
            _scan_split(F[0], alpha, self.lo, self._fixed[1], self.codes, self.data, self.ids, p, max(p, int(R)),
                        nb.get_num_threads(), out_dist[0], out_cls[0])
        elif F.shape[0] == 1:
            _ivf_one(F[0], *args, out_dist[0], out_cls[0])
        else:
            _ivf_batch(F, *args, out_cls, out_dist)
