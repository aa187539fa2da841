"""All-pairs banks: one linear classifier per pair of classes, with voting — for small class counts.

One class per trainer: :class:`AllPairsSVM` (liblinear squared-hinge SVMs) and :class:`AllPairsRidge`
(ridge regression per pair); :class:`AllPairsBank` is their shared scoring. Models saved before the
split hold ``"all-pairs"`` with a ``trainer`` parameter, mapped onto these by the registry.

C(C−1)/2 classifiers are stacked in ``coef_ (P, D) float32`` so that brute-force scoring is one GEMM;
votes are then counted with two small matrix products against the pair/class incidence matrices
(no Python loop over pairs). Ties are broken by the summed confidences, scaled below one vote
(scikit-learn's ``ovr_decision_function`` rule).
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from ...guards.constraints import validate_params
from ...errors import ConfigError, DataError
from ...progress import ProgressFn, StopFn
from ...guards.arrays import check_array
from .base import (ALPHA, C_COST, MAX_ITER, N_JOBS, RANDOM_STATE, TOL, BankMixin, as_class_index, fit_input,
                    gathered_dot, predict_input, row_chunks)
from .solvers import encode_labels, fit_linear_svc, fit_parallel, ridge_solve

MAX_CLASSES = 200  # 19 900 pairs; beyond this use a one-vs-all bank


def vote(pair_scores: np.ndarray, ci: np.ndarray, cj: np.ndarray, n_cols: int) -> np.ndarray:
    """Votes + tie-break confidences per column from pairwise scores.

    ``pair_scores (n, m)``: positive means column ``ci[m]`` beats column ``cj[m]`` (``ci``, ``cj``:
    ``(m,)`` column indices, the same pairs for every row). Returns ``(n, n_cols) float32``.
    """
    m = pair_scores.shape[1]
    Ei = np.zeros((m, n_cols), np.float32)
    Ej = np.zeros((m, n_cols), np.float32)
    Ei[np.arange(m), ci] = 1
    Ej[np.arange(m), cj] = 1
    win = (pair_scores > 0).astype(np.float32)
    votes = win @ Ei + (1 - win) @ Ej
    conf = pair_scores.astype(np.float32) @ (Ei - Ej)
    return (votes + conf / (3 * (np.abs(conf) + 1))).astype(np.float32)


class AllPairsBank(BankMixin, ClassifierMixin, BaseEstimator):
    """What the all-pairs banks share: C(C−1)/2 linear classifiers, one per pair of classes, voting.

    Fitted: ``classes_ (C,)``, ``pairs_ (P, 2) int64`` column index pairs ``(i, j)`` with i < j
    (positive score: i wins), ``coef_ (P, D) float32``, ``intercept_ (P,) float32``.
    ``decision_function`` returns votes + tie-break per class ``(n, C) float32``. A subclass names its
    ``penalty`` parameter and trains one pair in ``_pair_task``.
    """

    #: ``{spec type: {"keys": the settings export_spec writes}}``: predict.py requires each (read by the export)
    exports = {"all-pairs": {"keys": ("n_classes",)}}

    penalty: str | None = None

    def fit(self, X, y, *, progress: ProgressFn = None, should_stop: StopFn = None) -> "AllPairsBank":
        """Train C(C−1)/2 classifiers on ``X (n, D) float32``, labels ``y (n,)``; returns ``self``."""
        validate_params(self)
        X, y = fit_input(self, X, y)
        classes, y_idx = encode_labels(y)
        if len(y_idx) != len(X):
            raise DataError(f"{len(y_idx)} labels for {len(X)} feature rows")
        C = len(classes)
        if C > MAX_CLASSES:
            raise ConfigError(f"all-pairs bank: {C} classes make {C * (C - 1) // 2} classifiers; use a "
                              f"one-vs-all bank above {MAX_CLASSES} classes")
        pairs = np.stack(np.triu_indices(C, 1), axis=1).astype(np.int64)
        members = [np.flatnonzero(y_idx == c) for c in range(C)]
        pair_rows = [np.concatenate([members[i], members[j]]) for i, j in pairs]
        task, params = self._pair_task(X, y_idx, pairs, pair_rows)
        res = fit_parallel(task, X, lambda p: p, len(pairs), params, self.n_jobs, progress, should_stop,
                           "all-pairs: training")
        self.coef_ = np.ascontiguousarray(np.stack([r[0] for r in res]), dtype=np.float32)
        self.intercept_ = np.array([r[1] for r in res], np.float32)
        self.pairs_ = pairs
        self.n_iter_ = max(r[2] for r in res)
        self.classes_ = classes
        self.n_features_in_ = int(X.shape[1])
        return self

    def _pair_task(self, X, y_idx, pairs, pair_rows):  # pragma: no cover - abstract
        """``(task(_X, p, params) -> (w (D,), b, iterations), params)`` training pair ``p``."""
        raise NotImplementedError

    @property
    def n_classifiers_(self) -> int:
        """Binary classifiers a brute-force query evaluates: one per pair of classes."""
        self._check_fitted()
        return len(self.pairs_)

    def pair_decision_function(self, X) -> np.ndarray:
        """Raw pairwise scores ``(n, P) float32`` (one GEMM); positive: ``pairs_[p, 0]`` wins."""
        X = predict_input(self, X)
        out = X @ self.coef_.T
        out += self.intercept_
        return out

    def decision_function(self, X) -> np.ndarray:
        """Votes (+ a tie-break below one vote) per class, ``(n, C) float32``."""
        S = self.pair_decision_function(X)
        return vote(S, self.pairs_[:, 0], self.pairs_[:, 1], len(self.classes_))

    def decision_function_subset(self, X, classes) -> np.ndarray:
        """Votes among the candidates only: ``classes (n, k) int`` column indices -> ``(n, k) float32``.

        For each query, the k(k−1)/2 classifiers of pairs among its candidates are evaluated; column j of the result is candidate ``classes[i, j]``'s votes
        plus tie-break. This is the refine primitive "evaluate pairs among the top-p classes".
        """
        X = predict_input(self, X)
        C = len(self.classes_)
        classes = as_class_index(classes, len(X), C, "all-pairs bank")
        n, k = classes.shape
        a, b = np.triu_indices(k, 1)
        m = len(a)
        out = np.zeros((n, k), np.float32)
        if m == 0 or n == 0:
            return out
        lut = np.full((C, C), -1, np.int64)
        lut[self.pairs_[:, 0], self.pairs_[:, 1]] = np.arange(len(self.pairs_))
        lut[self.pairs_[:, 1], self.pairs_[:, 0]] = np.arange(len(self.pairs_))
        starts, step = row_chunks(n, m * self.coef_.shape[1])
        for s in starts:
            e = min(n, s + step)
            ci, cj = classes[s:e, a], classes[s:e, b]  # (r, m) candidate classes of each pair
            if np.any(ci == cj):
                raise ConfigError("all-pairs bank: a query lists the same candidate class twice")
            pidx = lut[ci, cj]
            sign = np.where(ci < cj, 1.0, -1.0).astype(np.float32)  # stored pairs are (low, high)
            S = gathered_dot(X[s:e], self.coef_, self.intercept_, pidx)
            S *= sign
            out[s:e] = vote(S, a, b, k)  # candidate positions a, b are the same for every row
        return out

    def validate_state(self) -> None:
        classes = check_array("classes_", self.classes_, ndim=1)
        C, D = len(classes), int(self.n_features_in_)
        P = C * (C - 1) // 2
        if C < 2 or D < 1:
            raise ValueError(f"a bank needs ≥ 2 classes and ≥ 1 feature, has {C} and {D}")
        pairs = check_array("pairs_", self.pairs_, dtype=np.int64, shape=(P, 2))
        if not np.array_equal(pairs, np.stack(np.triu_indices(C, 1), axis=1)):
            raise ValueError("pairs_ is not the list of all class pairs")
        check_array("coef_", self.coef_, dtype=np.float32, shape=(P, D))
        check_array("intercept_", self.intercept_, dtype=np.float32, shape=(P,))

    def export_spec(self, arrays: dict, prefix: str = "classifier") -> dict:
        """Settings for the exported ``predict.py`` (:mod:`classmap_gui.core.export.folder`); its arrays go into
        ``arrays`` under ``prefix``."""
        arrays[f"{prefix}.coef"] = np.ascontiguousarray(self.coef_, np.float32)
        arrays[f"{prefix}.intercept"] = np.ascontiguousarray(self.intercept_, np.float32)
        arrays[f"{prefix}.pairs"] = np.ascontiguousarray(self.pairs_, np.int64)
        return {"type": "all-pairs", "n_classes": int(len(self.classes_))}


class AllPairsSVM(AllPairsBank):
    """One linear SVM (liblinear, squared hinge) per pair of classes, voting.

    ``decision_function`` returns each class's votes plus a tie-break below one vote, ``(n, C) float32``;
    ``decision_function_subset(X, classes)`` evaluates only the pairs among the candidates (ClassMap's
    all-pairs-vote refine).

    Parameters
    ----------
    C : float, default=1.0
        SVM cost.
    tol : float, default=1e-4
        Solver tolerance.
    max_iter : int, default=1000
        Solver iterations.
    n_jobs : int or None, default=-1
        Threads training pairs in parallel (-1: all cores).
    random_state : int or None, default=None
        Seed of the solver.

    Attributes
    ----------
    classes_ : ndarray of shape (C,)
        The sorted labels.
    pairs_ : ndarray of shape (P, 2), int64
        Column index pairs ``(i, j)``, ``i < j``; a positive score means ``i`` wins.
    coef_ : ndarray of shape (P, D), float32
        Weights, one row per pair; ``intercept_`` (P,) float32 the biases.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from classmap_gui.core.classify import AllPairsSVM
    >>> X, y = load_digits(return_X_y=True)
    >>> bank = AllPairsSVM(C=0.1, random_state=0).fit(X.astype(np.float32), y)
    >>> bank.pairs_.shape, bank.decision_function(X[:2].astype(np.float32)).shape
    ((45, 2), (2, 10))
    """

    penalty = "C"
    _parameter_constraints: dict = {"C": C_COST, "tol": TOL, "max_iter": MAX_ITER, "n_jobs": N_JOBS,
                                    "random_state": RANDOM_STATE}

    def __init__(self, C: float = 1.0, tol: float = 1e-4, max_iter: int = 1000, n_jobs: int | None = -1,
                 random_state=None):
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _pair_task(self, X, y_idx, pairs, pair_rows):
        def task(_X, p, prm):
            rows = pair_rows[p]
            return fit_linear_svc(X[rows], y_idx[rows] == pairs[p, 0], prm)

        return task, dict(C=self.C, tol=self.tol, max_iter=self.max_iter, random_state=self.random_state)


class AllPairsRidge(AllPairsBank):
    """One ridge regression per pair of classes, voting. Parameters: ``alpha``, ``n_jobs``."""

    penalty = "alpha"
    _parameter_constraints: dict = {"alpha": ALPHA, "n_jobs": N_JOBS}

    def __init__(self, alpha: float = 1.0, n_jobs: int | None = -1):
        self.alpha = alpha
        self.n_jobs = n_jobs

    def _pair_task(self, X, y_idx, pairs, pair_rows):
        def task(_X, p, prm):
            rows = pair_rows[p]
            W, b = ridge_solve(X[rows], (y_idx[rows] != pairs[p, 0]).astype(np.int64), 2, float(self.alpha))
            return W[0], float(b[0]), 1

        return task, {}
