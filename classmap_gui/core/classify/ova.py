"""`OneVsAllBank`: one binary classifier per class, all stacked so that scoring every class is one BLAS call.

Trainers:

* ``liblinear`` — exact squared-hinge linear SVM per class (scikit-learn's ``LinearSVC``, the same
  solution as ``LinearSVC`` fitted on ``y == c``), classes trained in parallel threads (liblinear
  releases the GIL). Solver cost grows with n·C; good up to some hundreds of classes. Memory: the
  data is converted to float64 once, and liblinear keeps its own copy (~16 bytes per non-zero) per
  class being trained at the same time, so for large n·D prefer ``ridge``.
* ``ridge`` — regularised least squares to ±1 targets for *all* classes in one linear solve: the
  Gram matrix ``Xcᵀ Xc`` (D×D, or the dual n×n when n < D) is accumulated in row chunks (float32
  GEMM, float64 sums) and solved once in float64 for every class at the same time. This is the
  trainer that scales to thousands of classes.
* ``rbf`` — kernel SVM per class (scikit-learn's ``SVC``) with one shared ``gamma``; the union of the
  support vectors is kept once, so brute-force scoring is one kernel matrix plus one GEMM, while a
  subset query computes kernels only against the support vectors of the classifiers it names —
  there one classifier evaluation genuinely costs, as in the paper's face experiment.
"""
from __future__ import annotations

import os
import warnings

import numpy as np
from joblib import Parallel, delayed
from scipy import sparse
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC, LinearSVC

from ..errors import ConfigError, DataError
from ..progress import ProgressFn, StopFn, check_stop, report
from ..store import check_array, register
from .banks import (BankMixin, as_class_index, fit_input, gathered_dot, predict_input, register_bank,
                    row_chunks)

TRAINERS = ("liblinear", "ridge", "rbf")


def effective_jobs(n_jobs: int | None) -> int:
    """joblib's meaning of ``n_jobs`` as a positive worker count."""
    cpus = os.cpu_count() or 1
    if n_jobs is None:
        return 1
    if n_jobs < 0:
        return max(1, cpus + 1 + n_jobs)
    return max(1, int(n_jobs))


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


def _fit_linear_svc(X, target, params) -> tuple[np.ndarray, float, int]:
    svc = LinearSVC(**params).fit(X, target)
    return svc.coef_[0], float(svc.intercept_[0]), int(np.max(svc.n_iter_))


def _fit_svc(X, target, params) -> tuple[np.ndarray, np.ndarray, float, int]:
    svc = SVC(kernel="rbf", **params).fit(X, target)
    return svc.support_.astype(np.int64), svc.dual_coef_[0], float(svc.intercept_[0]), int(np.max(svc.n_iter_))


def fit_parallel(fn, X, targets_of, n_tasks: int, params: dict, n_jobs, progress: ProgressFn,
                 should_stop: StopFn, stage: str) -> list:
    """``[fn(X, targets_of(i), params) for i in range(n_tasks)]`` in threads, in batches so that
    progress is reported and ``should_stop`` honoured between batches."""
    workers = effective_jobs(n_jobs)
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
                progress: ProgressFn = None, should_stop: StopFn = None) -> tuple[np.ndarray, np.ndarray]:
    """Ridge regression of ±1 one-vs-all targets on ``X (n, D) float32``, all classes at once.

    Minimises ``‖X W + 1 bᵀ − T‖² + alpha ‖W‖²`` (intercept not penalised) where
    ``T[i, c] = +1 if y_i == c else −1``. Centres ``X`` and ``T``; accumulates ``Xcᵀ Xc`` (primal,
    n ≥ D) or ``Xc Xcᵀ`` (dual, n < D) in float64 and solves once.

    numpy's matmul and ``linalg.solve`` replace scipy's ``ssyrk`` and ``linalg.solve(assume_a="pos")``:
    scipy's f2py BLAS/LAPACK wrappers hold the GIL for the whole call (measured: a 2 s syrk froze
    the app's UI thread for 2 s, numpy's matmul for 16 ms at the same speed).
    Returns ``coef (C, D) float32``, ``intercept (C,) float32``.
    """
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
        G[np.diag_indices(D)] += alpha
        check_stop(should_stop)
        W = np.linalg.solve(G, 2.0 * B.T)  # (D, C)
    else:
        Xc = (X - mu32).astype(np.float64)
        K = Xc @ Xc.T
        K[np.diag_indices(n)] += alpha
        T = np.full((n, C), -1.0)
        T[np.arange(n), y_idx] = 1.0
        T -= ymean
        check_stop(should_stop)
        A = np.linalg.solve(K, T)  # (n, C)
        W = Xc.T @ A
    report(progress, 1.0, "ridge: solved")
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


@register("one-vs-all")
class OneVsAllBank(BankMixin, ClassifierMixin, BaseEstimator):
    """One binary classifier per class, stacked.

    Parameters: ``trainer`` ("liblinear" | "ridge" | "rbf"); ``C`` (SVM cost, liblinear/rbf);
    ``alpha`` (ridge penalty); ``gamma`` (rbf: "scale", "auto" or a float); ``tol``, ``max_iter``
    (liblinear/rbf solvers); ``class_weight`` (None or "balanced", liblinear/rbf); ``n_jobs``
    (threads training classes in parallel; -1 = all cores); ``random_state``.

    Fitted: ``classes_ (C,)``, ``n_features_in_``; linear trainers: ``coef_ (C, D) float32``,
    ``intercept_ (C,) float32``; rbf: ``support_vectors_ (S, D) float32`` (union over classes),
    ``dual_coef_ (C, S) float32`` (zero where a vector is not a support vector of that class),
    ``intercept_ (C,) float32``, ``gamma_`` (float). ``n_evaluations_`` counts binary classifier
    evaluations since fit/load.
    """

    _store_exclude = ("n_evaluations_",)

    def __init__(self, trainer: str = "liblinear", C: float = 1.0, alpha: float = 1.0, gamma="scale",
                 tol: float = 1e-4, max_iter: int = 1000, class_weight=None, n_jobs: int | None = -1,
                 random_state=None):
        self.trainer = trainer
        self.C = C
        self.alpha = alpha
        self.gamma = gamma
        self.tol = tol
        self.max_iter = max_iter
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.random_state = random_state

    # ------------------------------------------------------------ training
    def fit(self, X, y, *, progress: ProgressFn = None, should_stop: StopFn = None) -> "OneVsAllBank":
        """Train all classifiers on ``X (n, D) float32``, labels ``y (n,)``; returns ``self``."""
        if self.trainer not in TRAINERS:
            raise ConfigError(f"one-vs-all bank: trainer must be one of {', '.join(TRAINERS)}, not {self.trainer!r}")
        X, y = fit_input(self, X, y)
        classes, y_idx = encode_labels(y)
        if len(y_idx) != len(X):
            raise DataError(f"{len(y_idx)} labels for {len(X)} feature rows")
        C = len(classes)
        if self.class_weight not in (None, "balanced"):
            raise ConfigError("one-vs-all bank: class_weight must be None or 'balanced' (each binary problem is "
                              f"weighted on its own), not {self.class_weight!r}")
        for attr in ("coef_", "support_vectors_", "dual_coef_", "gamma_", "n_iter_"):
            self.__dict__.pop(attr, None)
        if self.trainer == "liblinear":
            params = dict(C=self.C, tol=self.tol, max_iter=self.max_iter, class_weight=self.class_weight,
                          random_state=self.random_state)
            X64 = X.astype(np.float64)  # liblinear works in float64: convert once, not once per class
            res = fit_parallel(_fit_linear_svc, X64, lambda c: y_idx == c, C, params, self.n_jobs, progress,
                               should_stop, "one-vs-all: liblinear")
            self.coef_ = np.ascontiguousarray(np.stack([r[0] for r in res]), dtype=np.float32)
            self.intercept_ = np.array([r[1] for r in res], np.float32)
            self.n_iter_ = max(r[2] for r in res)
        elif self.trainer == "ridge":
            self.coef_, self.intercept_ = ridge_solve(X, y_idx, C, float(self.alpha), progress=progress,
                                                      should_stop=should_stop)
            self.n_iter_ = 1  # one direct solve
        else:
            self._fit_rbf(X, y_idx, C, progress, should_stop)
        self.classes_ = classes
        self.n_features_in_ = int(X.shape[1])
        self.n_evaluations_ = 0
        return self

    def _fit_rbf(self, X, y_idx, C, progress, should_stop) -> None:
        D = X.shape[1]
        if self.gamma == "scale":
            var = float(X.var())
            gamma = 1.0 / (D * var) if var > 0 else 1.0
        elif self.gamma == "auto":
            gamma = 1.0 / D
        else:
            try:
                gamma = float(self.gamma)
            except (TypeError, ValueError):
                raise ConfigError(f"rbf bank: gamma must be 'scale', 'auto' or a number, not {self.gamma!r}") from None
        params = dict(C=self.C, gamma=gamma, tol=max(self.tol, 1e-3), max_iter=-1,
                      class_weight=self.class_weight, random_state=self.random_state)
        res = fit_parallel(_fit_svc, X.astype(np.float64), lambda c: y_idx == c, C, params, self.n_jobs, progress, should_stop,
                           "one-vs-all: rbf SVM")
        sup = np.concatenate([r[0] for r in res])
        owner = np.repeat(np.arange(C), [len(r[0]) for r in res])
        sv_index = np.unique(sup)
        dual = np.zeros((C, len(sv_index)), np.float32)
        dual[owner, np.searchsorted(sv_index, sup)] = np.concatenate([r[1] for r in res])
        self.support_vectors_ = np.ascontiguousarray(X[sv_index])
        self.dual_coef_ = dual
        self.intercept_ = np.array([r[2] for r in res], np.float32)
        self.gamma_ = float(gamma)
        self.n_iter_ = max(r[3] for r in res)

    # ------------------------------------------------------------ scoring
    @property
    def n_classifiers_(self) -> int:
        self._check_fitted()
        return len(self.classes_)

    def reset_evaluations(self) -> None:
        self.n_evaluations_ = 0

    def decision_function(self, X) -> np.ndarray:
        """Scores of every class, ``(n, C) float32``: one GEMM (linear) or one kernel + one GEMM (rbf)."""
        X = predict_input(self, X)
        if hasattr(self, "coef_"):
            out = X @ self.coef_.T
        else:
            out = rbf_kernel(X, self.support_vectors_, self.gamma_, self._sv_sq()) @ self.dual_coef_.T
        out += self.intercept_
        self.n_evaluations_ = getattr(self, "n_evaluations_", 0) + out.size
        return out

    def decision_function_subset(self, X, classes) -> np.ndarray:
        """Scores of only the listed classifiers: ``classes (n, k) int`` column indices -> ``(n, k) float32``.

        Equal to ``decision_function(X)[i, classes[i]]`` but costs n·k evaluations, which are
        added to ``n_evaluations_``.
        """
        X = predict_input(self, X)
        classes = as_class_index(classes, len(X), len(self.classes_), "one-vs-all bank")
        if hasattr(self, "coef_"):
            out = gathered_dot(X, self.coef_, self.intercept_, classes)
        else:
            out = self._rbf_subset(X, classes)
        self.n_evaluations_ = getattr(self, "n_evaluations_", 0) + classes.size
        return out

    def _sv_sq(self) -> np.ndarray:
        sq = self.__dict__.get("_sv_sq_cache")
        if sq is None or len(sq) != len(self.support_vectors_):
            sq = np.einsum("ij,ij->i", self.support_vectors_, self.support_vectors_)
            self._sv_sq_cache = sq
        return sq

    def _rbf_subset(self, X, classes) -> np.ndarray:
        n, k = classes.shape
        out = np.empty((n, k), np.float32)
        starts, step = row_chunks(n, k * max(1, self.dual_coef_.shape[1]), 1 << 21)
        for s in starts:
            e = min(n, s + step)
            idx = classes[s:e]
            # kernels only against support vectors some named classifier uses
            cols = np.flatnonzero(np.any(self.dual_coef_[np.unique(idx)] != 0, axis=0))
            K = rbf_kernel(X[s:e], self.support_vectors_[cols], self.gamma_, self._sv_sq()[cols])  # (m, s')
            dual = self.dual_coef_[:, cols][idx]  # (m, k, s')
            np.matmul(dual, K[:, :, None], out=out[s:e, :, None])
        out += self.intercept_[classes]
        return out

    # ------------------------------------------------------------ store hooks
    def _validate_state(self) -> None:
        classes = check_array("classes_", self.classes_, ndim=1)
        C, D = len(classes), int(self.n_features_in_)
        if C < 2 or D < 1:
            raise ValueError(f"a bank needs ≥ 2 classes and ≥ 1 feature, has {C} and {D}")
        check_array("intercept_", self.intercept_, dtype=np.float32, shape=(C,))
        if hasattr(self, "coef_"):
            check_array("coef_", self.coef_, dtype=np.float32, shape=(C, D))
        else:
            sv = check_array("support_vectors_", self.support_vectors_, dtype=np.float32, ndim=2)
            if sv.shape[1] != D:
                raise ValueError(f"support_vectors_ has {sv.shape[1]} columns, expected {D}")
            check_array("dual_coef_", self.dual_coef_, dtype=np.float32, shape=(C, len(sv)))
            if not (isinstance(self.gamma_, float) and self.gamma_ > 0):
                raise ValueError(f"gamma_ must be a positive number, got {self.gamma_!r}")

    def _after_load(self) -> None:
        self.n_evaluations_ = 0


register_bank("ova-liblinear", OneVsAllBank, "one-vs-all linear SVMs (liblinear), classes in parallel",
              trainer="liblinear")
register_bank("ova-ridge", OneVsAllBank, "one-vs-all ridge regression, all classes in one solve (scales to "
              "thousands of classes)", trainer="ridge")
register_bank("ova-rbf", OneVsAllBank, "one-vs-all kernel (RBF) SVMs, for small problems", trainer="rbf")
