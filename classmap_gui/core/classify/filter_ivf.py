"""An inverted-file (IVF) index for L1 nearest rows, in numba: ClassMap's sublinear filter step.

The alpha-scaled class embeddings ``A (C, d) float32`` are split by k-means into ``nlist`` lists;
a query scans only the ``nprobe`` lists whose centroids are nearest, on uint8 codes, and re-ranks
the best of those codes with exact float32 L1:

* build (:meth:`IVFLists.build`): Lloyd k-means (squared L2, GEMM; ``features._clustering.lloyd``)
  places the centroids, then each row goes to its nearest centroid **by L1** (the search metric);
  rows are stored contiguously in list order, zero-padded to a multiple of 16 columns, as float32
  and as uint8 codes with one quantisation step for all dimensions (so code L1 x step approximates
  L1; a per-dimension step would break that);
* search (:func:`_ivf_one`, one compiled ``nogil`` call per query): L1 to the centroids, the
  ``nprobe`` nearest lists (more when they hold fewer than p rows), a branch-free uint8 SAD scan of
  those lists keeping the ``R`` best codes, an exact float32 re-rank of those ``R``. Distances
  returned are exact; membership is approximate (recall measured by ``classmap bench scale``).

The SAD of 16 bytes is a numba ``@intrinsic`` emitting portable LLVM vector IR (zext, sub, abs,
``vector.reduce.add``) that x86 compiles to one ``psadbw``; numba's own loop is scalar-ish and half
as fast. All work buffers are per call, so threads may search one index at once.
"""
from __future__ import annotations

import numba as nb
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from ..features._clustering import lloyd
from ._topk import topk_insert
from .filter_exact import PAD, pad_columns

_OPTS = dict(nogil=True, fastmath=True, cache=True, boundscheck=False)


@nb.njit(**_OPTS)
def _l1_rows(q, X, lo, hi, out):
    """``out[r - lo] = L1(q, X[r])`` for rows ``lo..hi`` (branch-free, vectorised over columns)."""
    D = X.shape[1]
    for r in range(lo, hi):
        s = np.float32(0.0)
        for j in range(D):
            s += abs(q[j] - X[r, j])
        out[r - lo] = s


@intrinsic
def _sad16(typingctx, a, ia, b, ib):
    """``sum |a.flat[ia:ia+16] - b.flat[ib:ib+16]|`` of two C-contiguous uint8 arrays, as int32.

    Portable LLVM vector IR (zext, sub, abs, vector.reduce.add), which x86 compiles to one
    ``psadbw``. The caller keeps the 16 bytes in bounds (codes are padded to a multiple of 16).
    """
    sig = types.int32(a, types.intp, b, types.intp)

    def codegen(context, builder, signature, args):
        aa, ia_, bb, ib_ = args
        A = context.make_array(signature.args[0])(context, builder, aa)
        B = context.make_array(signature.args[2])(context, builder, bb)
        vty = ir.VectorType(ir.IntType(8), 16)
        va = builder.load(builder.bitcast(builder.gep(A.data, [ia_]), vty.as_pointer()), align=1)
        vb = builder.load(builder.bitcast(builder.gep(B.data, [ib_]), vty.as_pointer()), align=1)
        wty = ir.VectorType(ir.IntType(32), 16)
        diff = builder.sub(builder.zext(va, wty), builder.zext(vb, wty))
        zero = ir.Constant(wty, [0] * 16)
        absd = builder.select(builder.icmp_signed("<", diff, zero), builder.sub(zero, diff), diff)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(32), [wty]),
                                            "llvm.vector.reduce.add.v16i32")
        return builder.call(fn, [absd])

    return sig, codegen


@nb.njit(**_OPTS)
def sad_rows(qc, X, lo, hi, out):
    """Sum of absolute differences of uint8 codes ``qc (D,)`` and ``X[lo:hi] (n, D)`` into ``out (n,) uint32``.

    ``X`` is C-contiguous with ``D`` a multiple of 16.
    """
    D = X.shape[1]
    for r in range(lo, hi):
        s = np.int32(0)
        base = r * D
        for j in range(0, D, 16):
            s += _sad16(qc, j, X, base + j)
        out[r - lo] = np.uint32(s)


@nb.njit(**_OPTS)
def _scan_lists(qc, codes, starts, order, t0, t1, need, rows, ubuf, R, candd, candr, filled):
    """SAD-scan lists ``order[t0:t1]`` into the code pool ``candd/candr[:filled]`` (capped at ``R``),
    stopping once ``rows`` (running count) reaches ``need``; returns ``(filled, rows)``."""
    uw = candd[R - 1] if filled == R else np.uint32(0xFFFFFFFF)
    for t in range(t0, t1):
        l = order[t]
        a = starts[l]
        b = starts[l + 1]
        sad_rows(qc, codes, a, b, ubuf)
        for i in range(b - a):
            s = ubuf[i]
            if s < uw:
                filled = topk_insert(s, a + i, filled, R, candd, candr)
                if filled == R:
                    uw = candd[R - 1]
        rows += b - a
        if rows >= need:
            break
    return filled, rows


@nb.njit(**_OPTS)
def _ivf_one(f, alpha, lo, inv_step, cent, codes, data, ids, starts, maxlen, p, nprobe, R, topd, topc):
    """IVF search of one unscaled query ``f (d,) float32``: ``topd/topc[:p]`` = exact L1 and class id, ascending.

    ``cent (nlist, D)``, ``data (C, D) float32`` and ``codes (C, Dc) uint8`` are padded, list-ordered;
    list ``l`` is rows ``starts[l]:starts[l+1]`` with class ids ``ids``. Probes the ``nprobe`` lists
    with the nearest centroids (more if they hold fewer than ``p`` rows), keeps the ``R`` best code
    distances, re-ranks them exactly. Returns the number of hits (``p`` unless C < p).
    """
    nlist, D = cent.shape
    d = f.shape[0]
    q = np.zeros(D, np.float32)
    qc = np.zeros(codes.shape[1], np.uint8)
    for j in range(d):
        q[j] = f[j] * alpha[j]
        c = np.floor((q[j] - lo[j]) * inv_step + np.float32(0.5))
        qc[j] = np.uint8(min(np.float32(255.0), max(np.float32(0.0), c)))
    fbuf = np.empty(nlist, np.float32)
    ubuf = np.empty(maxlen, np.uint32)
    cd = np.empty(nprobe, np.float32)
    co = np.empty(nprobe, np.int64)
    candd = np.empty(R, np.uint32)
    candr = np.empty(R, np.int64)
    _l1_rows(q, cent, 0, nlist, fbuf)
    m = 0
    for l in range(nlist):
        m = topk_insert(fbuf[l], l, m, nprobe, cd, co)
    need = min(p, codes.shape[0])
    filled, rows = _scan_lists(qc, codes, starts, co, 0, m, codes.shape[0] + 1, 0, ubuf, R, candd, candr, 0)
    if rows < need:  # the probed lists hold fewer than p classes: take further lists, nearest first
        order = np.argsort(fbuf)
        filled, rows = _scan_lists(qc, codes, starts, order, m, nlist, need, rows, ubuf, R, candd, candr, filled)
    hits = 0
    worst = np.float32(np.inf)
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
def _ivf_batch(F, alpha, lo, inv_step, cent, codes, data, ids, starts, maxlen, p, nprobe, R, out_cls, out_dist):
    for i in nb.prange(F.shape[0]):
        _ivf_one(F[i], alpha, lo, inv_step, cent, codes, data, ids, starts, maxlen, p, nprobe, R,
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
    Derived: ``data (C, D) float32`` and ``codes (C, D) uint8`` (list order, padded to D = d rounded
    up to 16), the quantiser ``lo (d,)`` and ``step`` (one for all dimensions).
    """

    def __init__(self, A: np.ndarray, centroids: np.ndarray, starts: np.ndarray, ids: np.ndarray):
        self.centroids, self.starts, self.ids = centroids, starts, ids
        rows = A[ids]
        self.lo = A.min(axis=0).astype(np.float32) if A.size else np.zeros(A.shape[1], np.float32)
        span = float((A.max(axis=0) - self.lo).max()) if A.size else 0.0
        self.step = span / 255.0 if span > 0 else 1.0
        codes = np.clip(np.rint((rows - self.lo) / np.float32(self.step)), 0, 255).astype(np.uint8)
        self.cent = pad_columns(centroids, PAD, np.float32)
        self.data = pad_columns(rows, PAD, np.float32)
        self.codes = pad_columns(codes, PAD, np.uint8)
        self.maxlen = max(int(np.diff(starts).max()), 1)

    @property
    def nlist(self) -> int:
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
        args = (alpha, self.lo, np.float32(1.0 / self.step), self.cent, self.codes, self.data, self.ids,
                self.starts, self.maxlen, p, max(1, min(int(nprobe), self.nlist)), max(p, int(R)))
        if F.shape[0] == 1:
            _ivf_one(F[0], *args, out_dist[0], out_cls[0])
        else:
            _ivf_batch(F, *args, out_cls, out_dist)
