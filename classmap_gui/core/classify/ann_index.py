"""A nearest-neighbour index for ClassMap's filter step at very many classes.

The filter ranks classes by the weighted L1 distance ``sum_i alpha_i |f_i - e_i|`` between the
query embedding ``f (d,)`` and each class embedding ``e``. With ``alpha > 0`` that is plain L1
between ``alpha * f`` and ``alpha * e``, so the index stores the alpha-scaled class embeddings
once and any L1 nearest-neighbour search serves the filter (the paper's closing suggestion: a
sublinear filter).

Methods (``FilterIndex(method=...)``):

* ``"exact"``: a fused numba scan (L1 + running top-p, no ``(C, d)`` temporary); exact.
* ``"hnsw"``: faiss ``IndexHNSWFlat`` with ``METRIC_L1`` (a graph index that computes the true
  L1 distance, so its top-p come back exactly ordered; only membership is approximate). Needs
  the optional extra ``classmap-studio[ann]`` (``faiss-cpu``).
* ``"ivf"``: an inverted-file index in numba (no extra dependency): the alpha-scaled embeddings
  are split by k-means into ``nlist`` lists; a query scans the ``nprobe`` lists with the nearest
  centroids on uint8 codes (one global quantisation step, so code L1 is proportional to L1), keeps
  the ``rerank * p`` best codes and re-ranks those with exact float32 L1. Distances returned are
  exact; membership is approximate. ~11x faster than the exact scan at 10^5 classes with
  recall@40 0.994 (docs/scale.md).
* ``"auto"`` (default): ``ivf`` from ``threshold`` classes on, else exact.

Why IVF by default: at C = 100 000, d = 45, p = 40 (``classmap bench scale``, single queries,
2 shared cores) it reaches recall@40 0.994 at ~11x lower latency than the exact numba scan
(0.06 ms against 0.66 ms; 0.991 at 12-13x with nprobe 72), where faiss HNSW (the best of faiss, hnswlib and
usearch for L1; the comparison table is in docs/scale.md) reaches 0.995 at ~4x and needs 10-20x
longer to build. HNSW computes ~1000 random-access distances per query; IVF scans ~8000 contiguous
48-byte codes. Figures, the variants tried and the command: docs/scale.md.

Saving: the model keeps only plain arrays. IVF saves its centroids, list bounds and class order
(checked on load; codes are re-derived). The HNSW graph (levels, neighbour lists, entry
point) is exported with :meth:`FilterIndex.state` into int arrays and re-imported into faiss with
every id range-checked (:meth:`FilterIndex.from_state`); no faiss blob and no pickle is ever read.
If faiss is missing at load time, the index falls back to the exact scan.
"""
from __future__ import annotations

import numba as nb
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from ..errors import ConfigError, ModelFormatError, NotFittedError

METHODS = ("auto", "exact", "hnsw", "ivf")
#: class count from which ``auto`` (and ClassMap's filter) uses the IVF index: below it the fused
#: exact scan is about as fast (bench scale: ~3x at 10^4 classes, ~11x at 10^5)
DEFAULT_THRESHOLD = 20_000
_OPTS = dict(nogil=True, fastmath=True, cache=True, boundscheck=False)


def have_faiss() -> bool:
    """True when ``faiss`` (faiss-cpu) can be imported."""
    try:
        import faiss  # noqa: F401
    except ImportError:
        return False
    return True


# ---------------------------------------------------------------- exact scan (numba)

@nb.njit(**_OPTS)
def _scan_top(q, A, p, topd, topc):
    """L1 from ``q (d,)`` to every row of ``A (C, d)``; ``topd/topc[:p]`` = p nearest, ascending."""
    C, d = A.shape
    filled = 0
    for c in range(C):
        s = np.float32(0.0)
        for j in range(d):
            s += abs(q[j] - A[c, j])
        if filled == p:
            if s >= topd[p - 1]:
                continue
            pos = p - 1
        else:
            pos = filled
            filled += 1
        while pos > 0 and topd[pos - 1] > s:
            topd[pos] = topd[pos - 1]
            topc[pos] = topc[pos - 1]
            pos -= 1
        topd[pos] = s
        topc[pos] = c
    return filled


@nb.njit(parallel=True, **_OPTS)
def _scan_batch(Q, A, p, out_cls, out_dist):
    for i in nb.prange(Q.shape[0]):
        _scan_top(Q[i], A, p, out_dist[i], out_cls[i])


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


# ---------------------------------------------------------------- IVF on uint8 codes (numba)
#: rows are zero-padded to a multiple of this many dimensions so the inner loops vectorise without a tail
_PAD = 16
#: default nprobe = this fraction of the lists (recall@40 ~0.995 at 10^5 classes on bench scale's data) ...
IVF_PROBE_FRACTION = 0.08
#: ... but at least enough lists to hold this many times p rows on average (small indexes probe more)
IVF_MIN_ROWS_PER_CANDIDATE = 50


@nb.njit(**_OPTS)
def _l1_rows(q, X, lo, hi, out):
    """``out[r - lo] = L1(q, X[r])`` for rows ``lo..hi`` (branch-free, vectorised over dimensions)."""
    D = X.shape[1]
    for r in range(lo, hi):
        s = np.float32(0.0)
        for j in range(D):
            s += abs(q[j] - X[r, j])
        out[r - lo] = s


@intrinsic
def _sad16(typingctx, a, ia, b, ib):
    """``sum |a.flat[ia:ia+16] - b.flat[ib:ib+16]|`` of two C-contiguous uint8 arrays, as int32.

    Written as portable LLVM vector IR (zext, sub, abs, vector.reduce.add), which x86 compiles to
    one ``psadbw``: twice the speed of the scalar-loop SAD numba emits. The caller keeps the 16
    bytes in bounds (codes are padded to a multiple of 16).
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
def _sad_rows(qc, X, lo, hi, out):
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
def _push(s, c, filled, k, topd, topc):
    """Insert ``(s, c)`` into the ascending list ``topd/topc[:filled]`` capped at ``k``; new fill count."""
    if filled == k:
        pos = k - 1
    else:
        pos = filled
        filled += 1
    while pos > 0 and topd[pos - 1] > s:
        topd[pos] = topd[pos - 1]
        topc[pos] = topc[pos - 1]
        pos -= 1
    topd[pos] = s
    topc[pos] = c
    return filled


@nb.njit(**_OPTS)
def _ivf_one(f, alpha, lo, inv_step, cdims, cent, codes, data, ids, starts, maxlen, p, nprobe, R, topd, topc):
    """IVF search of one unscaled query ``f (d,)``: ``topd/topc[:p]`` = exact L1 and class id, ascending.

    ``cent (nlist, D)``, ``data (C, D) float32`` and ``codes (C, D) uint8`` are padded, list-ordered;
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
    for t in range(cdims.shape[0]):
        j = cdims[t]
        c = np.floor((q[j] - lo[j]) * inv_step + np.float32(0.5))
        qc[t] = np.uint8(min(np.float32(255.0), max(np.float32(0.0), c)))
    fbuf = np.empty(nlist, np.float32)
    ubuf = np.empty(maxlen, np.uint32)
    cd = np.empty(nprobe, np.float32)
    co = np.empty(nprobe, np.int64)
    candd = np.empty(R, np.uint32)
    candr = np.empty(R, np.int64)
    _l1_rows(q, cent, 0, nlist, fbuf)
    m = 0
    worst = np.float32(np.inf)
    for l in range(nlist):
        s = fbuf[l]
        if s < worst:
            m = _push(s, l, m, nprobe, cd, co)
            if m == nprobe:
                worst = cd[nprobe - 1]
    filled = 0
    uw = np.uint32(0xFFFFFFFF)
    rows = 0
    for t in range(m):
        l = co[t]
        a = starts[l]
        b = starts[l + 1]
        rows += b - a
        _sad_rows(qc, codes, a, b, ubuf)
        for i in range(b - a):
            s = ubuf[i]
            if s < uw:
                filled = _push(s, a + i, filled, R, candd, candr)
                if filled == R:
                    uw = candd[R - 1]
    need = min(p, codes.shape[0])
    if rows < need:  # the probed lists hold fewer than p classes: take further lists, nearest first
        order = np.argsort(fbuf)
        for t in range(m, nlist):
            l = order[t]
            a = starts[l]
            b = starts[l + 1]
            _sad_rows(qc, codes, a, b, ubuf)
            for i in range(b - a):
                s = ubuf[i]
                if s < uw:
                    filled = _push(s, a + i, filled, R, candd, candr)
                    if filled == R:
                        uw = candd[R - 1]
            rows += b - a
            if rows >= need:
                break
    hits = 0
    worst = np.float32(np.inf)
    for i in range(filled):
        r = candr[i]
        s = np.float32(0.0)
        for j in range(D):
            s += abs(q[j] - data[r, j])
        if s < worst:
            hits = _push(s, ids[r], hits, p, topd, topc)
            if hits == p:
                worst = topd[p - 1]
    return hits


@nb.njit(parallel=True, **_OPTS)
def _ivf_batch(F, alpha, lo, inv_step, cdims, cent, codes, data, ids, starts, maxlen, p, nprobe, R, out_cls, out_dist):
    for i in nb.prange(F.shape[0]):
        _ivf_one(F[i], alpha, lo, inv_step, cdims, cent, codes, data, ids, starts, maxlen, p, nprobe, R,
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


def _kmeans_l2(X: np.ndarray, k: int, n_iter: int, rng: np.random.Generator) -> np.ndarray:
    """Lloyd's k-means (squared L2, GEMM distances in row chunks): ``(k, d) float32`` centroids.

    Used only to partition the scaled embeddings; the lists are then assigned by L1.
    """
    C = X.shape[0]
    cent = X[rng.choice(C, k, replace=False)].copy()
    assign = np.empty(C, np.int64)
    for _ in range(n_iter):
        c2 = np.einsum("ij,ij->i", cent, cent)
        for s in range(0, C, 8192):
            G = X[s:s + 8192] @ cent.T
            G *= -2
            G += c2
            assign[s:s + 8192] = G.argmin(axis=1)  # + x2 is constant per row
        counts = np.bincount(assign, minlength=k)
        sums = np.stack([np.bincount(assign, weights=X[:, j], minlength=k) for j in range(X.shape[1])], axis=1)
        empty = counts == 0
        cent = (sums / np.maximum(counts, 1)[:, None]).astype(np.float32)
        if empty.any():  # re-seed empty clusters on random points
            cent[empty] = X[rng.choice(C, int(empty.sum()), replace=False)]
    return cent


def _quantiser(scaled: np.ndarray) -> tuple[np.ndarray, float]:
    """``(lo (d,) float32, step)``: codes = round((x - lo) / step) in 0..255, one step for all dimensions
    (so code L1 * step approximates L1)."""
    lo = scaled.min(axis=0).astype(np.float32)
    span = float((scaled.max(axis=0) - lo).max()) if scaled.size else 0.0
    return lo, (span / 255.0 if span > 0 else 1.0)


def _pad(X: np.ndarray, D: int, dtype) -> np.ndarray:
    out = np.zeros((X.shape[0], D), dtype)
    out[:, :X.shape[1]] = X
    return out


# ---------------------------------------------------------------- the index

class FilterIndex:
    """Nearest classes by weighted L1: exact scan, IVF (numba) or faiss HNSW on alpha-scaled embeddings.

    Parameters (stored verbatim): ``method`` in ``auto|exact|hnsw|ivf``; ``threshold`` class count
    from which ``auto`` uses IVF; ``M`` graph degree, ``ef_construction``, ``ef_search`` (``None``:
    at least ``max(64, 1.6 p)`` per search) of HNSW; ``n_threads`` for building and batch search
    with faiss (``None``: faiss default = all cores); IVF: ``nlist`` lists (``None``: 3.2 sqrt(C)),
    ``nprobe`` lists scanned per query (``None``: 8% of the lists, and at least enough for
    ``50 p`` rows), ``rerank`` (``rerank * p`` code-nearest rows re-ranked exactly),
    ``n_iter`` k-means iterations, ``random_state`` for k-means.

    Learned: ``alpha_ (d,) float32``, ``scaled_ (C, d) float32`` = embeddings * alpha,
    ``method_`` (``"exact"``, ``"hnsw"`` or ``"ivf"``), ``n_classes_``; IVF: ``ivf_centroids_
    (nlist, d) float32``, ``ivf_starts_ (nlist + 1,) int64`` list boundaries, ``ivf_ids_ (C,) int64``
    class of each list-ordered row.
    """

    def __init__(self, method: str = "auto", threshold: int = DEFAULT_THRESHOLD, M: int = 24, ef_construction: int = 80,
                 ef_search: int | None = None, n_threads: int | None = None, nlist: int | None = None,
                 nprobe: int | None = None, rerank: int = 2, n_iter: int = 15, random_state: int | None = 0):
        self.method = method
        self.threshold = threshold
        self.M = M
        self.ef_construction = ef_construction
        self.ef_search = ef_search
        self.n_threads = n_threads
        self.nlist = nlist
        self.nprobe = nprobe
        self.rerank = rerank
        self.n_iter = n_iter
        self.random_state = random_state

    _PARAMS = ("method", "threshold", "M", "ef_construction", "ef_search", "n_threads", "nlist", "nprobe", "rerank",
               "n_iter", "random_state")

    def get_params(self) -> dict:
        return {k: getattr(self, k) for k in self._PARAMS}

    # ------------------------------------------------------------ fit
    def _resolve_method(self, C: int) -> str:
        if self.method not in METHODS:
            raise ConfigError(f"unknown filter index method {self.method!r}; choose one of {', '.join(METHODS)}")
        if self.method == "hnsw" and not have_faiss():
            raise ConfigError("the hnsw filter index needs faiss: pip install 'classmap-studio[ann]'")
        if self.method == "auto":
            return "ivf" if C >= int(self.threshold) else "exact"
        return self.method

    def fit(self, embeddings: np.ndarray, alpha: np.ndarray) -> "FilterIndex":
        """Index class embeddings ``(C, d) float32`` under weights ``alpha (d,) > 0``."""
        E = np.asarray(embeddings, dtype=np.float32)
        a = np.asarray(alpha, dtype=np.float32)
        if E.ndim != 2 or a.shape != (E.shape[1],):
            raise ConfigError(f"embeddings must be (C, d) and alpha (d,), got {E.shape} and {a.shape}")
        if not np.all(np.isfinite(E)) or not np.all(np.isfinite(a)) or np.any(a < 0):
            raise ConfigError("class embeddings and alpha must be finite, alpha >= 0")
        if int(self.M) < 2 or int(self.ef_construction) < 1:
            raise ConfigError(f"M must be >= 2 and ef_construction >= 1, got {self.M}, {self.ef_construction}")
        self.alpha_ = a.copy()
        self.scaled_ = np.ascontiguousarray(E * a)
        self.n_classes_ = E.shape[0]
        self.method_ = self._resolve_method(self.n_classes_)
        self._faiss = None
        if self.method_ == "hnsw":
            self._build_hnsw()
        elif self.method_ == "ivf":
            self._build_ivf()
        return self

    def _build_ivf(self) -> None:
        C = self.n_classes_
        nlist = int(self.nlist) if self.nlist is not None else int(round(3.2 * np.sqrt(C)))
        if not 1 <= nlist or int(self.rerank) < 1 or int(self.n_iter) < 0 or (self.nprobe is not None and int(self.nprobe) < 1):
            raise ConfigError(f"IVF needs nlist >= 1, nprobe >= 1, rerank >= 1, n_iter >= 0; got "
                              f"{self.nlist}, {self.nprobe}, {self.rerank}, {self.n_iter}")
        nlist = min(nlist, C)
        rng = np.random.default_rng(self.random_state)
        cent = _kmeans_l2(self.scaled_, nlist, int(self.n_iter), rng)
        assign = np.empty(C, np.int64)
        _assign_l1(self.scaled_, cent, assign)
        ids = np.argsort(assign, kind="stable").astype(np.int64)
        starts = np.zeros(nlist + 1, np.int64)
        starts[1:] = np.cumsum(np.bincount(assign, minlength=nlist))
        self.ivf_centroids_, self.ivf_starts_, self.ivf_ids_ = cent, starts, ids
        self._ivf_prepare()

    def _ivf_prepare(self) -> None:
        """Padded, list-ordered float rows and uint8 codes for the search kernel (derived, never saved)."""
        d = self.scaled_.shape[1]
        D = -(-d // _PAD) * _PAD
        lo, step = _quantiser(self.scaled_)
        rows = self.scaled_[self.ivf_ids_]
        # coded dimensions (all; coding only the widest-spread 32 of 45 lost recall at equal speed)
        nc = d
        cdims = np.arange(d, dtype=np.int64)
        codes = np.clip(np.rint((rows[:, cdims] - lo[cdims]) / np.float32(step)), 0, 255).astype(np.uint8)
        self._ivf = {"cent": _pad(self.ivf_centroids_, D, np.float32), "data": _pad(rows, D, np.float32),
                     "codes": _pad(codes, -(-nc // _PAD) * _PAD, np.uint8), "lo": lo, "cdims": cdims,
                     "inv_step": np.float32(1.0 / step),
                     "maxlen": max(int(np.diff(self.ivf_starts_).max()), 1)}

    def _ivf_nprobe(self, p: int) -> int:
        nlist = self.ivf_centroids_.shape[0]
        if self.nprobe is not None:
            return max(1, min(int(self.nprobe), nlist))
        by_rows = -(-IVF_MIN_ROWS_PER_CANDIDATE * p * nlist // max(self.n_classes_, 1))
        return max(1, min(nlist, max(int(np.ceil(IVF_PROBE_FRACTION * nlist)), by_rows)))

    def _build_hnsw(self) -> None:
        import faiss

        ix = faiss.IndexHNSWFlat(self.scaled_.shape[1], int(self.M), faiss.METRIC_L1)
        ix.hnsw.efConstruction = int(self.ef_construction)
        old = faiss.omp_get_max_threads()
        if self.n_threads is not None:
            faiss.omp_set_num_threads(int(self.n_threads))
        try:
            ix.add(self.scaled_)
        finally:
            faiss.omp_set_num_threads(old)
        self._faiss = ix

    # ------------------------------------------------------------ search
    def _check_fitted(self) -> None:
        if not hasattr(self, "scaled_"):
            raise NotFittedError("the filter index is not built yet: call fit(embeddings, alpha)")

    def search(self, F: np.ndarray, p: int, *, out_cls: np.ndarray | None = None,
               out_dist: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The ``p`` nearest classes of each query embedding.

        F : ``(n, d) float32`` query embeddings (unscaled, as ClassMap computes them).
        Returns ``(classes (n, p) int64, distances (n, p) float32)``, ascending weighted L1 distance
        (exact distances for both methods). Optional ``out_*`` arrays are filled and returned.
        With HNSW, a row may hold fewer than ``p`` real hits only if the graph is smaller than
        ``p``; such slots get class -1 and distance +inf.
        """
        self._check_fitted()
        F = np.asarray(F, dtype=np.float32)
        if F.ndim == 1:
            F = F[None]
        elif F.ndim != 2:
            raise ConfigError(f"query embeddings must be (n, d), got shape {F.shape}")
        n, d = F.shape
        if d != self.scaled_.shape[1]:
            raise ConfigError(f"query embeddings have {d} dimensions, the index {self.scaled_.shape[1]}")
        p = int(p)
        if not 1 <= p:
            raise ConfigError(f"p must be >= 1, got {p}")
        k = min(p, self.n_classes_)
        if out_cls is None:
            cls = np.empty((n, p), dtype=np.int64)
            dist = np.empty((n, p), dtype=np.float32)
        else:
            cls, dist = out_cls, out_dist
        if k < p:
            cls[:, k:] = -1
            dist[:, k:] = np.inf
        F = np.ascontiguousarray(F)
        Q = F * self.alpha_ if self.method_ != "ivf" else None
        if self.method_ == "hnsw" and self._faiss is not None:
            import faiss

            ix = self._faiss
            # per-call search parameters: no shared state is changed, so threads may search at once
            params = faiss.SearchParametersHNSW()
            params.efSearch = max(k, int(self.ef_search) if self.ef_search is not None else max(64, (8 * k + 4) // 5))
            I = np.empty((n, k), dtype=np.int64)
            D = np.empty((n, k), dtype=np.float32)
            # one query: one thread (waking an OpenMP team costs more than it saves)
            threads = 1 if n == 1 else self.n_threads
            old = faiss.omp_get_max_threads() if threads is not None else None
            if threads is not None:
                faiss.omp_set_num_threads(int(threads))
            try:
                ix.search_c(n, faiss.swig_ptr(Q), k, faiss.swig_ptr(D), faiss.swig_ptr(I), params)
            finally:
                if old is not None:
                    faiss.omp_set_num_threads(old)
            missing = I < 0
            if missing.any():
                D[missing] = np.inf
            cls[:, :k] = I
            dist[:, :k] = D
        elif self.method_ == "ivf":
            v = self._ivf
            tc = cls if k == p and cls.flags.c_contiguous else np.empty((n, k), dtype=np.int64)
            td = dist if k == p and dist.flags.c_contiguous else np.empty((n, k), dtype=np.float32)
            args = (self.alpha_, v["lo"], v["inv_step"], v["cdims"], v["cent"], v["codes"], v["data"], self.ivf_ids_,
                    self.ivf_starts_, v["maxlen"], k, self._ivf_nprobe(k), max(k, int(self.rerank) * k))
            if n == 1:
                _ivf_one(F[0], *args, td[0], tc[0])
            else:
                _ivf_batch(F, *args, tc, td)
            if tc is not cls:
                cls[:, :k] = tc
                dist[:, :k] = td
        else:
            tc = cls if k == p and cls.flags.c_contiguous else np.empty((n, k), dtype=np.int64)
            td = dist if k == p and dist.flags.c_contiguous else np.empty((n, k), dtype=np.float32)
            if n == 1:
                _scan_top(Q[0], self.scaled_, k, td[0], tc[0])
            else:
                _scan_batch(Q, self.scaled_, k, tc, td)
            if tc is not cls:
                cls[:, :k] = tc
                dist[:, :k] = td
        return cls, dist

    # ------------------------------------------------------------ state (safe save/load)
    def state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """``(json_scalars, arrays)`` that rebuild this index with :meth:`from_state`; plain arrays only."""
        self._check_fitted()
        meta = {"params": self.get_params(), "method_": self.method_, "n_classes_": int(self.n_classes_)}
        arrays = {"alpha_": self.alpha_, "scaled_": self.scaled_}
        if self.method_ == "hnsw" and self._faiss is not None:
            import faiss

            h = self._faiss.hnsw
            arrays.update({
                "hnsw_levels_": faiss.vector_to_array(h.levels).astype(np.int32),
                "hnsw_offsets_": faiss.vector_to_array(h.offsets).astype(np.int64),
                "hnsw_neighbors_": faiss.vector_to_array(h.neighbors).astype(np.int32),
                "hnsw_assign_probas_": faiss.vector_to_array(h.assign_probas).astype(np.float64),
                "hnsw_cum_nneighbor_per_level_": faiss.vector_to_array(h.cum_nneighbor_per_level).astype(np.int32),
            })
            meta.update({"hnsw_entry_point": int(h.entry_point), "hnsw_max_level": int(h.max_level)})
        elif self.method_ == "ivf":
            arrays.update({"ivf_centroids_": self.ivf_centroids_, "ivf_starts_": self.ivf_starts_,
                           "ivf_ids_": self.ivf_ids_})
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> "FilterIndex":
        """Rebuild from :meth:`state` output; every shape, dtype and graph id is checked first.

        An HNSW index saved where faiss existed loads as an exact scan where it does not.
        Raises :class:`ModelFormatError` for anything inconsistent.
        """
        try:
            params = dict(meta["params"])
            self = cls(**params)
            scaled = np.asarray(arrays["scaled_"])
            alpha = np.asarray(arrays["alpha_"])
            method = meta["method_"]
        except (KeyError, TypeError) as exc:
            raise ModelFormatError(f"filter index state is incomplete: {exc}") from exc
        if scaled.dtype != np.float32 or scaled.ndim != 2 or alpha.dtype != np.float32 or alpha.shape != (scaled.shape[1],):
            raise ModelFormatError(f"filter index arrays have wrong shapes/dtypes: scaled {scaled.dtype}{scaled.shape}, "
                                   f"alpha {alpha.dtype}{alpha.shape}")
        if method not in ("exact", "hnsw", "ivf") or int(meta.get("n_classes_", -1)) != scaled.shape[0]:
            raise ModelFormatError(f"filter index state names method {method!r} for {meta.get('n_classes_')} classes "
                                   f"but holds {scaled.shape[0]}")
        self.alpha_, self.scaled_ = alpha, np.ascontiguousarray(scaled)
        self.n_classes_ = scaled.shape[0]
        self._faiss = None
        self.method_ = "exact"
        if method == "hnsw" and have_faiss():
            self._faiss = _import_hnsw(self, meta, arrays)
            self.method_ = "hnsw"
        elif method == "ivf":
            _import_ivf(self, arrays)
            self.method_ = "ivf"
        return self


def _import_ivf(index: FilterIndex, arrays: dict[str, np.ndarray]) -> None:
    """Check the saved IVF lists against ``index.scaled_`` and prepare the search arrays."""
    C, d = index.scaled_.shape
    try:
        cent = np.asarray(arrays["ivf_centroids_"])
        starts = np.asarray(arrays["ivf_starts_"])
        ids = np.asarray(arrays["ivf_ids_"])
    except (KeyError, TypeError) as exc:
        raise ModelFormatError(f"filter index lists are incomplete: {exc}") from exc
    ok = (cent.dtype == np.float32 and cent.ndim == 2 and cent.shape[1] == d and 1 <= cent.shape[0] <= max(C, 1)
          and starts.dtype == np.int64 and starts.shape == (cent.shape[0] + 1,) and ids.dtype == np.int64
          and ids.shape == (C,))
    if ok:
        ok = (bool(np.all(np.isfinite(cent))) and starts[0] == 0 and starts[-1] == C and bool(np.all(np.diff(starts) >= 0))
              and (C == 0 or (ids.min() >= 0 and ids.max() < C and bool(np.all(np.bincount(ids, minlength=C) == 1)))))
    if not ok:
        raise ModelFormatError("the saved filter index lists are inconsistent (shapes, dtypes, list bounds or class ids); "
                               "re-save the model or delete its filter index to rebuild it")
    index.ivf_centroids_ = np.ascontiguousarray(cent)
    index.ivf_starts_ = np.ascontiguousarray(starts)
    index.ivf_ids_ = np.ascontiguousarray(ids)
    index._ivf_prepare()


def _import_hnsw(index: FilterIndex, meta: dict, arrays: dict[str, np.ndarray]):
    """A faiss IndexHNSWFlat(L1) holding ``index.scaled_`` and the saved graph, after range checks."""
    import faiss

    C, d = index.scaled_.shape
    try:
        levels = np.asarray(arrays["hnsw_levels_"])
        offsets = np.asarray(arrays["hnsw_offsets_"])
        neigh = np.asarray(arrays["hnsw_neighbors_"])
        probas = np.asarray(arrays["hnsw_assign_probas_"])
        cum = np.asarray(arrays["hnsw_cum_nneighbor_per_level_"])
        entry, max_level = int(meta["hnsw_entry_point"]), int(meta["hnsw_max_level"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelFormatError(f"filter index graph is incomplete: {exc}") from exc
    M = int(index.M)
    ok = (levels.dtype == np.int32 and levels.shape == (C,) and offsets.dtype == np.int64 and offsets.shape == (C + 1,)
          and neigh.dtype == np.int32 and neigh.ndim == 1 and cum.dtype == np.int32 and cum.ndim == 1
          and probas.dtype == np.float64 and probas.ndim == 1 and cum.shape[0] == probas.shape[0] + 1)
    if ok:
        ok = (C > 0 and offsets[0] == 0 and np.all(np.diff(offsets) >= 0) and offsets[-1] == neigh.shape[0]
              and levels.min() >= 1 and levels.max() <= probas.shape[0] and np.all(np.diff(cum) >= 0)
              and np.array_equal(np.diff(offsets), cum[levels]) and neigh.min() >= -1 and neigh.max() < C
              and 0 <= entry < C and max_level == levels[entry] - 1 and cum[0] == 0 and cum[1] == 2 * M)
    if not ok:
        raise ModelFormatError("the saved filter index graph is inconsistent (shapes, dtypes or ids out of range); "
                               "re-save the model or delete its filter index to rebuild it")
    ix = faiss.IndexHNSWFlat(d, M, faiss.METRIC_L1)
    ix.hnsw.efConstruction = int(index.ef_construction)
    ix.storage.add(index.scaled_)
    h = ix.hnsw
    faiss.copy_array_to_vector(probas, h.assign_probas)
    faiss.copy_array_to_vector(cum, h.cum_nneighbor_per_level)
    faiss.copy_array_to_vector(levels, h.levels)
    faiss.copy_array_to_vector(offsets.astype(np.uint64), h.offsets)
    faiss.copy_array_to_vector(neigh, h.neighbors)
    h.entry_point = entry
    h.max_level = max_level
    ix.ntotal = C
    return ix
