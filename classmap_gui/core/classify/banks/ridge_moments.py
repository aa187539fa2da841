"""The ridge one-vs-all bank from sufficient statistics: one pass over a (memory-mapped) feature matrix.

The product's ridge bank (``solvers.ridge_solve``) minimises ``‖X W + 1 bᵀ − T‖² + α‖W‖²`` with
``T[i, c] = ±1``. Everything that needs is in the moments of the data: the Gram matrix ``Xᵀ X``,
the feature sum, and per class the feature sum and count (``Xcᵀ T = 2 (S_c − n_c μ)`` for centred
``Xc``). So the bank at 10^5 classes is trained without a one-hot (or any n x C) matrix:

* :func:`ridge_moments` reads row chunks (a memory map, or a ``.npy`` path the workers open
  themselves), and per chunk computes its Gram matrix and its per-class sums (rows grouped by class
  with ``np.add.reduceat``); chunks run through ``joblib.Parallel`` (Dask workers inside
  ``parallel_backend("dask")``) and their results are added **in chunk order**, so the sums do not
  depend on where a chunk ran. Rows are shifted by a fixed vector first (the first chunk's mean), so
  float32 chunk products keep their precision; the shift is removed exactly when solving.
* :meth:`RidgeMoments.path` diagonalises the centred Gram matrix once (``Vᵀ Λ V``); then the
  weights for any penalty are ``W = 2 (B V) diag(1 / (λ + α)) Vᵀ`` and validation scores for many
  penalties cost one GEMM each, without forming ``W``: choosing the penalty on a validation part
  and refitting on all training rows (moments add) costs two eigendecompositions.

The decision function is the ridge bank's (``x · w_c + b_c`` with ``b_c = ȳ_c − μ · w_c``); weights
agree with ``OneVsAllRidge()`` to float32 rounding (tests hold them equal).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ...errors import ConfigError, DataError
from ...progress import ProgressFn, StopFn, check_stop, report

#: rows per moment task
CHUNK_ROWS = 8192
#: classes per block when forming weights or scoring (a (rows, block) score block stays small)
CLASS_BLOCK = 8192


def rows_of(source, rows: np.ndarray) -> np.ndarray:
    """``source[rows]`` as an in-memory float32 array; ``source`` is an array or a ``.npy`` path (mapped,
    read, unmapped: no mapping outlives the task)."""
    if isinstance(source, (str, os.PathLike)):
        mm = np.load(source, mmap_mode="r")
        try:
            return np.asarray(mm[rows], np.float32)
        finally:
            del mm
    return np.asarray(source[rows], np.float32)


def _chunk_moments(source, rows: np.ndarray, y: np.ndarray, shift: np.ndarray):
    """One task: ``(n, total (D,), gram (D, D) float64, classes (k,), sums (k, D) float64)`` of the shifted rows.
    ``y`` must be sorted (rows grouped by class)."""
    X = rows_of(source, rows)
    X -= shift.astype(np.float32)
    gram = (X.T @ X).astype(np.float64)  # float32 GEMM (X.T @ X: numpy calls syrk), summed in float64
    starts = np.flatnonzero(np.r_[True, y[1:] != y[:-1]])
    sums = np.add.reduceat(X.astype(np.float64), starts, axis=0) if len(X) else np.zeros((0, X.shape[1]))
    return len(X), X.sum(axis=0, dtype=np.float64), gram, y[starts].astype(np.int64), sums


@dataclass
class RidgeMoments:
    """Sufficient statistics of ridge one-vs-all training rows, about a fixed ``shift (D,)``:
    ``n``, ``total (D,)`` = Σ(x − shift), ``gram (D, D)`` = Σ(x − shift)(x − shift)ᵀ, ``class_sums (C, D)``
    = Σ over class c of (x − shift), ``counts (C,)``; all float64 (counts int64). Moments of disjoint
    row sets about the same shift add (``+``)."""

    shift: np.ndarray
    n: int
    total: np.ndarray
    gram: np.ndarray
    class_sums: np.ndarray
    counts: np.ndarray

    def __add__(self, other: "RidgeMoments") -> "RidgeMoments":
        if not np.array_equal(self.shift, other.shift) or self.class_sums.shape != other.class_sums.shape:
            raise ConfigError("ridge moments can only be added with the same shift and class count")
        return RidgeMoments(self.shift, self.n + other.n, self.total + other.total, self.gram + other.gram,
                            self.class_sums + other.class_sums, self.counts + other.counts)

    @property
    def mean(self) -> np.ndarray:
        """``(D,) float64`` mean of the rows."""
        return self.shift + self.total / self.n

    def solve(self, alpha: float) -> tuple[np.ndarray, np.ndarray]:
        """``(coef (C, D) float32, intercept (C,) float32)`` of the ridge bank with penalty ``alpha`` by one
        Cholesky solve of the centred Gram matrix (``solvers.ridge_solve``'s system, from the moments): for a
        few penalties at large D each solve costs a fraction of :meth:`path`'s eigendecomposition (D = 9600:
        about 1/20)."""
        from scipy.linalg import solve

        if not alpha > 0:
            raise ConfigError(f"ridge bank: alpha must be positive, got {alpha}")
        if self.n < 1 or (self.counts == 0).any():
            raise DataError(f"ridge bank: classes {np.flatnonzero(self.counts == 0)[:10].tolist()} have no training rows")
        m = self.total / self.n
        G = self.gram - self.n * np.outer(m, m)
        G[np.diag_indices_from(G)] += float(alpha)
        W = solve(G, 2.0 * (self.class_sums - self.counts[:, None] * m[None]).T, assume_a="pos",
                  overwrite_a=True, check_finite=False)  # (D, C)
        b = (2.0 * self.counts / self.n - 1.0) - self.mean @ W
        return np.ascontiguousarray(W.T, np.float32), b.astype(np.float32)

    def path(self) -> "RidgePath":
        """Diagonalise the centred Gram matrix once; the returned :class:`RidgePath` gives weights and
        validation scores for any penalty."""
        if self.n < 1 or (self.counts == 0).any():
            missing = np.flatnonzero(self.counts == 0)[:10].tolist()
            raise DataError(f"ridge bank: classes {missing} have no training rows")
        m = self.total / self.n
        G = self.gram - self.n * np.outer(m, m)
        lam, V = np.linalg.eigh((G + G.T) / 2)
        lam = np.maximum(lam, 0.0)
        C, D = self.class_sums.shape
        P = np.empty((C, D), np.float32)  # (class_sums - n_c m) V: Xcᵀ T / 2 in the eigenbasis
        V32 = V.astype(np.float32)  # float32 GEMMs at C x D x D (4x float64's speed; rounding ~1e-6 relative)
        for s in range(0, C, CLASS_BLOCK):
            e = min(C, s + CLASS_BLOCK)
            np.matmul((self.class_sums[s:e] - self.counts[s:e, None] * m[None]).astype(np.float32), V32, out=P[s:e])
        ymean = (2.0 * self.counts / self.n - 1.0).astype(np.float64)
        return RidgePath(self.mean, lam, V, P, ymean)


@dataclass
class RidgePath:
    """The ridge bank for every penalty: ``mean (D,)``, eigenvalues ``lam (D,)`` and vectors ``V (D, D)`` of
    the centred Gram matrix, ``P (C, D) float32`` = centred class sums in that basis, ``ymean (C,)``."""

    mean: np.ndarray
    lam: np.ndarray
    V: np.ndarray
    P: np.ndarray
    ymean: np.ndarray

    def weights(self, alpha: float, out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(coef (C, D) float32, intercept (C,) float32)`` of the ridge bank with penalty ``alpha``;
        ``coef`` is written into ``out`` when given (e.g. a ``.npy`` memory map)."""
        if not alpha > 0:
            raise ConfigError(f"ridge bank: alpha must be positive, got {alpha}")
        C, D = self.P.shape
        coef = np.empty((C, D), np.float32) if out is None else out
        Vt = np.ascontiguousarray(self.V.T, np.float32)
        s = (2.0 / (self.lam + float(alpha))).astype(np.float32)
        b = np.empty(C, np.float64)
        for a in range(0, C, CLASS_BLOCK):
            e = min(C, a + CLASS_BLOCK)
            W = (self.P[a:e] * s) @ Vt
            coef[a:e] = W
            b[a:e] = self.ymean[a:e] - W.astype(np.float64) @ self.mean
        return coef, b.astype(np.float32)

    def weight_rows(self, alpha: float, rows) -> tuple[np.ndarray, np.ndarray]:
        """``(coef (k, D) float32, intercept (k,) float32)`` of classes ``rows`` only, penalty ``alpha``."""
        rows = np.asarray(rows, np.int64)
        s = (2.0 / (self.lam + float(alpha))).astype(np.float32)
        W = (self.P[rows] * s) @ np.ascontiguousarray(self.V.T, np.float32)
        return W, (self.ymean[rows] - W.astype(np.float64) @ self.mean).astype(np.float32)

    def top_k(self, X: np.ndarray, alphas, k: int = 1, should_stop: StopFn = None) -> dict[float, np.ndarray]:
        """``{alpha: (n, k) int64}`` the ``k`` best-scoring classes of rows ``X (n, D)`` under each penalty,
        best first — the brute-force answers of each candidate bank, without forming its weights."""
        Q = (np.asarray(X, np.float64) - self.mean) @ self.V  # (n, D)
        out = {}
        for alpha in alphas:
            check_stop(should_stop)
            Qa = np.ascontiguousarray(Q * (2.0 / (self.lam + float(alpha))), np.float32)
            out[float(alpha)] = top_k_linear(Qa, self.P, self.ymean.astype(np.float32), k)
        return out


def top_k_linear(X: np.ndarray, W: np.ndarray, b: np.ndarray, k: int, block: int = CLASS_BLOCK) -> np.ndarray:
    """The ``k`` largest of ``X @ W.T + b`` per row, ``(n, k) int64`` best first, computed in class blocks
    (``W (C, D)`` may be a memory map; the ``(n, block)`` score block is all that is held)."""
    from .ranking_ops import top_k

    X = np.ascontiguousarray(X, np.float32)
    n, C = len(X), W.shape[0]
    k = min(int(k), C)
    best_s = np.full((n, k), -np.inf, np.float32)
    best_c = np.zeros((n, k), np.int64)
    for a in range(0, C, block):
        e = min(C, a + block)
        S = X @ np.asarray(W[a:e], np.float32).T
        S += b[a:e]
        idx, val = top_k(S, k)
        cs = np.concatenate([best_s, val], 1)
        cc = np.concatenate([best_c, idx + a], 1)
        j, v = top_k(cs, k)
        best_s, best_c = v, np.take_along_axis(cc, j, 1)
    return best_c


def ridge_moments(X, y_idx: np.ndarray, n_classes: int, *, rows: np.ndarray | None = None,
                  shift: np.ndarray | None = None, chunk: int = CHUNK_ROWS, n_jobs: int | None = 1,
                  progress: ProgressFn = None, should_stop: StopFn = None) -> RidgeMoments:
    """Moments of the rows ``rows`` (default all) of ``X`` with class indices ``y_idx`` (one per row of
    ``rows``, in ``[0, n_classes)``).

    ``X``: ``(N, D) float32`` array or memory map, or the path of a ``.npy`` file (what Dask workers
    are given: each opens the file itself). ``shift``: the vector rows are taken about (default: the
    mean of the first chunk); moments to be added must share it. Chunks run through
    ``joblib.Parallel(n_jobs)`` (the active backend decides where) and are summed in chunk order."""
    from joblib import Parallel, delayed

    if isinstance(X, (str, os.PathLike)):
        head = np.load(X, mmap_mode="r")
        N, D = head.shape
        del head
    else:
        N, D = X.shape
    rows = np.arange(N, dtype=np.int64) if rows is None else np.asarray(rows, np.int64)
    y_idx = np.asarray(y_idx, np.int64)
    if y_idx.shape != rows.shape:
        raise DataError(f"ridge moments: {len(y_idx)} labels for {len(rows)} rows")
    if len(rows) == 0:
        raise DataError("ridge moments: no training rows")
    if y_idx.min() < 0 or y_idx.max() >= n_classes:
        raise DataError(f"ridge moments: class indices outside [0, {n_classes})")
    order = np.argsort(y_idx, kind="stable")  # group by class; keep file order within a class
    rows, y_idx = rows[order], y_idx[order]
    if shift is None:
        shift = rows_of(X, np.sort(rows[:chunk])).mean(axis=0, dtype=np.float64)
    shift = np.asarray(shift, np.float64)
    mom = RidgeMoments(shift, 0, np.zeros(D), np.zeros((D, D)), np.zeros((n_classes, D)),
                       np.bincount(y_idx, minlength=n_classes).astype(np.int64))
    starts = range(0, len(rows), chunk)
    tasks = (delayed(_chunk_moments)(X, rows[s:s + chunk], y_idx[s:s + chunk], shift) for s in starts)
    with Parallel(n_jobs=n_jobs, prefer="threads", return_as="generator") as par:
        for i, (n, total, gram, cls, sums) in enumerate(par(tasks)):  # ordered: sums independent of the backend
            mom.n += n
            mom.total += total
            mom.gram += gram
            mom.class_sums[cls] += sums
            report(progress, min(1.0, (i + 1) * chunk / len(rows)), "ridge: moments")
            check_stop(should_stop)
    return mom


def ova_ridge_bank(coef: np.ndarray, intercept: np.ndarray, alpha: float):
    """A fitted ``OneVsAllRidge(alpha=alpha)`` holding ``coef (C, D) float32`` (kept as
    given: a memory map stays one) and ``intercept (C,) float32``; classes ``0..C-1``."""
    from .ova import OneVsAllRidge

    bank = OneVsAllRidge(alpha=float(alpha))
    bank.coef_ = coef
    bank.intercept_ = np.asarray(intercept, np.float32)
    bank.classes_ = np.arange(coef.shape[0], dtype=np.int64)
    bank.n_features_in_ = int(coef.shape[1])
    bank.n_iter_ = 1
    return bank


__all__ = ["CHUNK_ROWS", "RidgeMoments", "RidgePath", "ova_ridge_bank", "ridge_moments", "rows_of", "top_k_linear"]
