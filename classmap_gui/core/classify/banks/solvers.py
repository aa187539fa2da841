"""Trainers and linear algebra the classifier banks share: label encoding, parallel per-classifier
fitting, one ridge solve for all classes, the RBF kernel.

One-vs-all and all-pairs banks both train many small binary problems and both can solve ridge
regression for several targets at once; these live here so neither bank imports the other's
internals.
"""
from __future__ import annotations

import warnings

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from scipy import sparse
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC, LinearSVC

from ...errors import ConfigError, DataError
from ...progress import ProgressFn, StopFn, check_stop, report


def encode_labels(y) -> tuple[np.ndarray, np.ndarray]:
    """``(classes (C,), y_index (n,) int64)`` with a DataError for fewer than two classes."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise DataError(f"labels must be 1-D, got shape {y.shape}")
    classes, y_idx = np.unique(y, return_inverse=True)
    if len(classes) < 2:
        raise DataError(f"training a classifier bank needs at least 2 classes, got "
                        f"{'one class' if len(classes) == 1 else 'no samples'}")
    return classes, y_idx.astype(np.int64)


def fit_linear_svc(X, target, params) -> tuple[np.ndarray, float, int]:
    """One squared-hinge linear SVM (``LinearSVC(**params)``) on boolean ``target``: ``(w (D,), b, iterations)``."""
    svc = LinearSVC(**params).fit(X, target)
    return svc.coef_[0], float(svc.intercept_[0]), int(np.max(svc.n_iter_))


def fit_svc(X, target, params) -> tuple[np.ndarray, np.ndarray, float, int]:
    """One RBF SVM (``SVC(kernel="rbf", **params)``): ``(support indices, dual coefficients, b, iterations)``."""
    svc = SVC(kernel="rbf", **params).fit(X, target)
    return svc.support_.astype(np.int64), svc.dual_coef_[0], float(svc.intercept_[0]), int(np.max(svc.n_iter_))


def fit_parallel(fn, X, targets_of, n_tasks: int, params: dict, n_jobs, progress: ProgressFn,
                 should_stop: StopFn, stage: str) -> list:
    """``[fn(X, targets_of(i), params) for i in range(n_tasks)]`` in threads, in batches so that
    progress is reported and ``should_stop`` honoured between batches."""
    workers = max(1, effective_n_jobs(n_jobs))
    batch = max(1, 2 * workers)
    out: list = []
    # liblinear stopping at max_iter still gives a usable classifier; its warning, once per class,
    # would only flood the terminal (raise max_iter for a tighter optimum).
    with warnings.catch_warnings(), Parallel(n_jobs=workers, prefer="threads") as par:
        warnings.simplefilter("ignore", ConvergenceWarning)
        for s in range(0, n_tasks, batch):
            check_stop(should_stop)
            e = min(n_tasks, s + batch)
            out.extend(par(delayed(fn)(X, targets_of(i), params) for i in range(s, e)))
            report(progress, e / n_tasks, stage)
    return out


def ridge_solve(X: np.ndarray, y_idx: np.ndarray, n_classes: int, alpha: float, *, chunk: int = 4096,
                statistics: dict | None = None, progress: ProgressFn = None,
                should_stop: StopFn = None) -> tuple[np.ndarray, np.ndarray]:
    """Ridge regression of ±1 one-vs-all targets on ``X (n, D) float32``, all classes at once.

    Minimises ``‖X W + 1 bᵀ − T‖² + alpha ‖W‖²`` (intercept not penalised) where
    ``T[i, c] = +1 if y_i == c else −1``. Centres ``X`` and ``T``; accumulates ``Xcᵀ Xc`` (primal,
    n ≥ D) or ``Xc Xcᵀ`` (dual, n < D) in float64 and solves once.

    numpy's matmul and ``linalg.solve`` replace scipy's ``ssyrk`` and ``linalg.solve(assume_a="pos")``:
    scipy's f2py BLAS/LAPACK wrappers hold the GIL for the whole call (measured: a 2 s syrk froze
    the app's UI thread for 2 s, numpy's matmul for 16 ms at the same speed).
    Returns ``coef (C, D) float32``, ``intercept (C,) float32``. ``statistics``: a dict filled with what a new
    class's classifier needs later (:mod:`.ridge_stats`): ``gram`` the centred Gram matrix packed
    (``(D (D + 1) / 2,) float32``, the dual solve forms it for this), ``mean (D,) float64``, ``n``.
    """
    from .ridge_stats import pack

    n, D = X.shape
    C = n_classes
    mu = X.mean(axis=0, dtype=np.float64)
    mu32 = mu.astype(np.float32)
    counts = np.bincount(y_idx, minlength=C).astype(np.float64)
    ymean = 2.0 * counts / n - 1.0  # mean of the ±1 targets per class
    if alpha <= 0:
        raise ConfigError(f"ridge bank: alpha must be positive, got {alpha}")
    if n >= D:
        G = np.zeros((D, D), np.float64)
        B = np.zeros((C, D), np.float64)  # Xcᵀ T, transposed; T's column means vanish against centred X
        for s in range(0, n, chunk):
            check_stop(should_stop)
            e = min(n, s + chunk)
            Xc = X[s:e] - mu32
            G += Xc.T @ Xc
            onehot = sparse.csr_matrix((np.ones(e - s, np.float32), (y_idx[s:e], np.arange(e - s))), shape=(C, e - s))
            B += onehot @ Xc
            report(progress, 0.9 * e / n, "ridge: Gram matrix")
        if statistics is not None:
            statistics["gram"] = pack(G)
        G[np.diag_indices(D)] += alpha
        check_stop(should_stop)
        W = np.linalg.solve(G, 2.0 * B.T)  # (D, C)
    else:
        Xc = (X - mu32).astype(np.float64)
        if statistics is not None:
            statistics["gram"] = pack(Xc.T @ Xc)
        K = Xc @ Xc.T
        K[np.diag_indices(n)] += alpha
        T = np.full((n, C), -1.0)
        T[np.arange(n), y_idx] = 1.0
        T -= ymean
        check_stop(should_stop)
        A = np.linalg.solve(K, T)  # (n, C)
        W = Xc.T @ A
    report(progress, 1.0, "ridge: solved")
    if statistics is not None:
        statistics.update(mean=mu, n=int(n))
    b = ymean - mu @ W
    return np.ascontiguousarray(W.T, dtype=np.float32), b.astype(np.float32)


def rbf_kernel(X: np.ndarray, S: np.ndarray, gamma: float, s_sq: np.ndarray | None = None) -> np.ndarray:
    """``exp(-gamma ‖x − s‖²)`` for ``X (n, D)``, ``S (m, D)`` float32 -> ``(n, m) float32``, via one GEMM."""
    if s_sq is None:
        s_sq = np.einsum("ij,ij->i", S, S)
    K = X @ S.T
    K *= -2.0
    K += np.einsum("ij,ij->i", X, X)[:, None]
    K += s_sq[None, :]
    np.maximum(K, 0.0, out=K)
    K *= -gamma
    np.exp(K, out=K)
    return K
