"""One-vs-all banks: one binary classifier per class, all stacked so that scoring every class is one BLAS call.

One class per trainer, each with only its own parameters and its penalty named once (``penalty``):

* :class:`OneVsAllSVM` — exact squared-hinge linear SVM per class (scikit-learn's ``LinearSVC``, the
  same solution as ``LinearSVC`` fitted on ``y == c``), classes trained in parallel threads (liblinear
  releases the GIL). Solver cost grows with n·C; good up to some hundreds of classes. Memory: the
  data is converted to float64 once, and liblinear keeps a copy per class in training: for large n·D, ridge.
* :class:`OneVsAllRidge` — regularised least squares to ±1 targets for *all* classes in one linear
  solve: the Gram matrix ``Xcᵀ Xc`` (D×D, or the dual n×n when n < D) is accumulated in row chunks
  (float32 GEMM, float64 sums) and solved once in float64 for every class at the same time. This is
  the trainer that scales to thousands of classes.
* :class:`OneVsAllRBF` — kernel SVM per class (``SVC``), one shared ``gamma``, the support vectors' union kept
  once: brute force is one kernel matrix and one GEMM, a subset query kernels only the named classifiers' support
  vectors — there one classifier evaluation genuinely costs, as in the paper's face experiment.

Models saved before the split (``"one-vs-all"`` with a ``trainer``) load as these (``store.type_names.saved_type``).
"""
from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from ...guards.constraints import Interval, StrOptions, validate_params
from ...errors import ConfigError, DataError
from ...progress import ProgressFn, StopFn
from ...guards.arrays import check_array
from .base import (ALPHA, C_COST, MAX_ITER, N_JOBS, RANDOM_STATE, TOL, BankMixin, as_class_index, fit_input,
                    gathered_dot, predict_input, row_chunks)
from .solvers import encode_labels, fit_linear_svc, fit_parallel, fit_svc, rbf_kernel, ridge_solve

#: each binary problem is weighted on its own: only None or "balanced" make sense
CLASS_WEIGHT = [StrOptions({"balanced"}), None]


class OneVsAllBank(BankMixin, ClassifierMixin, BaseEstimator):
    """What the one-vs-all banks share: one binary classifier per class, stacked, and a linear bank's scoring.

    Fitted: ``classes_ (C,)``, ``n_features_in_``; linear banks: ``coef_ (C, D) float32``, ``intercept_
    (C,) float32``. Scoring changes nothing: a prediction's cost is computed by whoever asks for the
    scores (brute force: ``n_classifiers_`` per query). A subclass names its ``penalty`` parameter
    (training chooses it; ClassMap's ``reference_penalty`` scales it) and trains in ``_train``.
    """

    #: the parameter that is this bank's penalty (``selection.is_stronger`` says which way is stronger)
    penalty: str | None = None

    def fit(self, X, y, *, progress: ProgressFn = None, should_stop: StopFn = None) -> "OneVsAllBank":
        """Train all classifiers on ``X (n, D) float32``, labels ``y (n,)``; returns ``self``."""
        validate_params(self)
        X, y = fit_input(self, X, y)
        classes, y_idx = encode_labels(y)
        if len(y_idx) != len(X):
            raise DataError(f"{len(y_idx)} labels for {len(X)} feature rows")
        for attr in ("coef_", "support_vectors_", "dual_coef_", "gamma_", "n_iter_", "_sv_sq_cache", "gram_", "mean_",
                     "n_samples_seen_"):
            self.__dict__.pop(attr, None)
        self._train(X, y_idx, len(classes), progress, should_stop)
        self.classes_ = classes
        self.n_features_in_ = int(X.shape[1])
        return self

    def _train(self, X, y_idx, C, progress, should_stop) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # ------------------------------------------------------------ scoring
    @property
    def n_classifiers_(self) -> int:
        """Binary classifiers a brute-force query evaluates: one per class."""
        self._check_fitted()
        return len(self.classes_)

    def decision_function(self, X) -> np.ndarray:
        """Scores of every class, ``(n, C) float32``: one GEMM (linear) or one kernel + one GEMM (rbf)."""
        X = predict_input(self, X)
        if hasattr(self, "coef_"):
            out = X @ self.coef_.T
        else:
            out = rbf_kernel(X, self.support_vectors_, self.gamma_, self.support_sq_norms()) @ self.dual_coef_.T
        out += self.intercept_
        return out

    def decision_function_subset(self, X, classes) -> np.ndarray:
        """Scores of only the listed classifiers: ``classes (n, k) int`` column indices -> ``(n, k) float32``.

        Equal to ``decision_function(X)[i, classes[i]]`` but costs only n·k evaluations.
        """
        X = predict_input(self, X)
        classes = as_class_index(classes, len(X), len(self.classes_), "one-vs-all bank")
        if hasattr(self, "coef_"):
            out = gathered_dot(X, self.coef_, self.intercept_, classes)
        else:
            out = self._rbf_subset(X, classes)
        return out

    def support_sq_norms(self) -> np.ndarray:
        """``(S,)`` squared norms of the support vectors, set by fit / load (scoring stays pure)."""
        sq = self.__dict__.get("_sv_sq_cache")
        if sq is None or len(sq) != len(self.support_vectors_):  # support vectors assigned by hand
            sq = np.einsum("ij,ij->i", self.support_vectors_, self.support_vectors_)
        return sq

    def after_load(self) -> None:
        if hasattr(self, "support_vectors_"):
            self._sv_sq_cache = np.einsum("ij,ij->i", self.support_vectors_, self.support_vectors_)

    def _rbf_subset(self, X, classes) -> np.ndarray:
        n, k = classes.shape
        out = np.empty((n, k), np.float32)
        starts, step = row_chunks(n, k * max(1, self.dual_coef_.shape[1]), 1 << 21)
        for s in starts:
            e = min(n, s + step)
            idx = classes[s:e]
            # kernels only against support vectors some named classifier uses
            cols = np.flatnonzero(np.any(self.dual_coef_[np.unique(idx)] != 0, axis=0))
            K = rbf_kernel(X[s:e], self.support_vectors_[cols], self.gamma_, self.support_sq_norms()[cols])  # (m, s')
            dual = self.dual_coef_[:, cols][idx]  # (m, k, s')
            np.matmul(dual, K[:, :, None], out=out[s:e, :, None])
        out += self.intercept_[classes]
        return out

    # ------------------------------------------------------------ store hooks
    def validate_state(self) -> None:
        classes = check_array("classes_", self.classes_, ndim=1)
        C, D = len(classes), int(self.n_features_in_)
        if C < 2 or D < 1:
            raise ValueError(f"a bank needs ≥ 2 classes and ≥ 1 feature, has {C} and {D}")
        check_array("intercept_", self.intercept_, dtype=np.float32, shape=(C,))
        if getattr(self, "gram_", None) is not None:   # a ridge bank's kept statistics (ridge_stats)
            from .ridge_stats import packed_size

            check_array("gram_", self.gram_, dtype=np.float32, shape=(packed_size(D),))
            check_array("mean_", self.mean_, dtype=np.float64, shape=(D,))
            n = self.n_samples_seen_   # weighted rows (add_class's weight) can make it fractional
            if not (isinstance(n, (int, float)) and not isinstance(n, bool) and np.isfinite(n) and n >= C):
                raise ValueError(f"n_samples_seen_ must be a number of rows of at least {C}")
        if hasattr(self, "coef_"):
            check_array("coef_", self.coef_, dtype=np.float32, shape=(C, D))
        else:
            sv = check_array("support_vectors_", self.support_vectors_, dtype=np.float32, ndim=2)
            if sv.shape[1] != D:
                raise ValueError(f"support_vectors_ has {sv.shape[1]} columns, expected {D}")
            check_array("dual_coef_", self.dual_coef_, dtype=np.float32, shape=(C, len(sv)))
            if not (isinstance(self.gamma_, float) and self.gamma_ > 0):
                raise ValueError(f"gamma_ must be a positive number, got {self.gamma_!r}")

    def export_spec(self, arrays: dict, prefix: str = "classifier") -> dict:
        """Settings for the exported ``predict.py`` (:mod:`classmap_gui.core.export.folder`); its arrays go into
        ``arrays`` under ``prefix``."""
        if getattr(self, "coef_", None) is not None:
            arrays[f"{prefix}.coef"] = np.ascontiguousarray(self.coef_, np.float32)
            arrays[f"{prefix}.intercept"] = np.ascontiguousarray(self.intercept_, np.float32)
            return {"type": "linear-ova"}
        arrays[f"{prefix}.support_vectors"] = np.ascontiguousarray(self.support_vectors_, np.float32)
        arrays[f"{prefix}.dual_coef"] = np.ascontiguousarray(self.dual_coef_, np.float32)
        arrays[f"{prefix}.intercept"] = np.ascontiguousarray(self.intercept_, np.float32)
        return {"type": "rbf-ova", "gamma": float(self.gamma_)}


class OneVsAllSVM(OneVsAllBank):
    """One-vs-all linear SVMs (liblinear, squared hinge), classes in parallel threads.

    Brute force is one matrix product: ``decision_function(X)`` scores every class at once, and
    ``decision_function_subset(X, classes)`` scores only the classifiers asked for (ClassMap's refine).

    Parameters
    ----------
    C : float, default=1.0
        SVM cost: larger fits the training data more closely.
    tol : float, default=1e-4
        Solver tolerance.
    max_iter : int, default=1000
        Solver iterations.
    class_weight : None or "balanced", default=None
        Class weights.
    n_jobs : int or None, default=-1
        Threads training classes in parallel (-1: all cores).
    random_state : int or None, default=None
        Seed of the solver.

    Attributes
    ----------
    classes_ : ndarray of shape (C,)
        The sorted labels; column ``j`` of ``decision_function`` is ``classes_[j]``.
    coef_ : ndarray of shape (C, D), float32
        The weights; ``intercept_`` (C,) float32 the biases.
    n_classifiers_ : int
        C, the evaluations brute force spends per query.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from classmap_gui.core.classify import OneVsAllSVM
    >>> X, y = load_digits(return_X_y=True)
    >>> bank = OneVsAllSVM(C=0.1, random_state=0).fit(X.astype(np.float32), y)
    >>> bank.decision_function(X[:2].astype(np.float32)).shape
    (2, 10)
    """

    #: ``{spec type: {"keys": the settings export_spec writes}}``: predict.py requires each (read by the export)
    exports = {"linear-ova": {"keys": ()}}

    penalty = "C"
    _parameter_constraints: dict = {"C": C_COST, "tol": TOL, "max_iter": MAX_ITER, "class_weight": CLASS_WEIGHT,
                                    "n_jobs": N_JOBS, "random_state": RANDOM_STATE}

    def __init__(self, C: float = 1.0, tol: float = 1e-4, max_iter: int = 1000, class_weight=None,
                 n_jobs: int | None = -1, random_state=None):
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _train(self, X, y_idx, C, progress, should_stop) -> None:
        params = dict(C=self.C, tol=self.tol, max_iter=self.max_iter, class_weight=self.class_weight,
                      random_state=self.random_state)
        X64 = X.astype(np.float64)  # liblinear works in float64: convert once, not once per class
        res = fit_parallel(fit_linear_svc, X64, lambda c: y_idx == c, C, params, self.n_jobs, progress,
                           should_stop, "one-vs-all: liblinear")
        self.coef_ = np.ascontiguousarray(np.stack([r[0] for r in res]), dtype=np.float32)
        self.intercept_ = np.array([r[1] for r in res], np.float32)
        self.n_iter_ = max(r[2] for r in res)


class OneVsAllRidge(OneVsAllBank):
    """One-vs-all ridge regression to ±1 targets, every class in one linear solve (scales to thousands of
    classes; also from a memory-mapped feature matrix, in row chunks).

    Parameters
    ----------
    alpha : float, default=1.0
        Ridge penalty: larger gives smoother classifiers.
    n_jobs : int or None, default=-1
        Kept for the bank interface; the solve is one BLAS call, threaded by BLAS itself.
    keep_statistics : {"auto", "always", "never"}, default="auto"
        Keep the training rows' statistics so that :meth:`add_class` can add a class without retraining;
        "auto" keeps them where they cost at most a fifth of the weights (thousands of classes:
        :func:`.ridge_stats.worth_keeping`).

    Attributes
    ----------
    classes_ : ndarray of shape (C,)
        The sorted labels.
    coef_ : ndarray of shape (C, D), float32
        The weights; ``intercept_`` (C,) float32 the biases.
    n_classifiers_ : int
        C, the evaluations brute force spends per query.
    gram_, mean_, n_samples_seen_ :
        Kept training statistics (``keep_statistics``): the centred Gram matrix's upper triangle
        ``(D (D + 1) / 2,) float32``, the feature mean ``(D,) float64``, the row count; what :meth:`add_class`
        solves a new class's classifier from (:mod:`.ridge_stats`). Absent when not kept.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from classmap_gui.core.classify import OneVsAllRidge
    >>> X, y = load_digits(return_X_y=True)
    >>> bank = OneVsAllRidge(alpha=10.0).fit(X.astype(np.float32), y)
    >>> bank.coef_.shape, bank.coef_.dtype
    ((10, 64), dtype('float32'))
    >>> bank.decision_function_subset(X[:2].astype(np.float32), np.array([[0, 3], [1, 2]])).shape
    (2, 2)
    """

    #: ``{spec type: {"keys": the settings export_spec writes}}``: predict.py requires each (read by the export)
    exports = {"linear-ova": {"keys": ()}}

    penalty = "alpha"
    _parameter_constraints: dict = {"alpha": ALPHA, "n_jobs": N_JOBS,
                                    "keep_statistics": [StrOptions({"auto", "always", "never"})]}

    def __init__(self, alpha: float = 1.0, n_jobs: int | None = -1, keep_statistics: str = "auto"):
        self.alpha = alpha
        self.n_jobs = n_jobs
        self.keep_statistics = keep_statistics

    def _train(self, X, y_idx, C, progress, should_stop) -> None:
        from .ridge_stats import worth_keeping

        keep = self.keep_statistics == "always" or (self.keep_statistics == "auto" and worth_keeping(C, X.shape[1]))
        stats: dict | None = {} if keep else None
        self.coef_, self.intercept_ = ridge_solve(X, y_idx, C, self.solve_alpha(), statistics=stats, progress=progress,
                                                  should_stop=should_stop)
        self.n_iter_ = 1  # one direct solve
        if stats is not None:
            self.gram_, self.mean_, self.n_samples_seen_ = stats["gram"], stats["mean"], stats["n"]

    def add_class(self, label, X, *, weight: float = 1.0, progress: ProgressFn = None,
                  should_stop: StopFn = None) -> "OneVsAllRidge":
        """Add class ``label`` from its rows ``X (m, D) float32`` (each ``weight`` rows), without retraining: its
        classifier in closed form from the kept statistics (:mod:`.ridge_stats`) with ``X`` added — the column a
        from-scratch solve on the training rows plus ``X`` would give it. The other classes' weights are **not**
        changed (there ``X`` would be their negatives too); ``X`` joins the statistics, a later class's negatives.
        ConfigError where the bank keeps no statistics (retrain)."""
        from .ridge_stats import RidgeStatistics, pack

        self._check_fitted()
        X = predict_input(self, X)
        if len(X) == 0:
            raise DataError(f"add_class: class {label!r} has no examples")
        if label in set(np.asarray(self.classes_).tolist()):
            raise ConfigError(f"add_class: class {label!r} exists already")
        stats = RidgeStatistics.of_bank(self).with_rows(X, weight=weight)
        w, b = stats.classifier(X, self.solve_alpha(), weight)
        self._set_classes(np.vstack([np.asarray(self.coef_, np.float32), w[None]]),
                          np.append(self.intercept_, b), np.append(self.classes_, label))
        self.gram_, self.mean_, self.n_samples_seen_ = pack(stats.gram), stats.mean, stats.n
        return self

    def solve_alpha(self) -> float:   # the penalty a class added later is solved with
        return float(self.alpha)

    def new_classifier(self, X, weight: float = 1.0) -> tuple[np.ndarray, np.float32]:
        """``(w (D,), b)``: what :meth:`add_class` would give a class of rows ``X`` (on the bank's scale), not added."""
        from .ridge_stats import RidgeStatistics

        X = predict_input(self, X)
        return RidgeStatistics.of_bank(self).with_rows(X, weight=weight).classifier(X, self.solve_alpha(), weight)

    def remove_class(self, label, X=None, weight: float = 1.0) -> "OneVsAllRidge":
        """Take class ``label`` out (the undo of :meth:`add_class`); ``X`` (of ``weight``): the rows it was added with,
        out of the kept statistics again (None: they stay, as negatives every later class sees)."""
        from .ridge_stats import RidgeStatistics, pack

        self._check_fitted()
        where = np.flatnonzero(np.asarray(self.classes_) == label)
        if len(where) != 1 or len(self.classes_) <= 2:
            raise ConfigError(f"remove_class: {label!r} is not a class of this bank, or is one of its last two")
        keep = np.arange(len(self.classes_)) != where[0]
        self._set_classes(np.asarray(self.coef_, np.float32)[keep], self.intercept_[keep], self.classes_[keep])
        if X is not None and getattr(self, "gram_", None) is not None:
            stats = RidgeStatistics.of_bank(self).with_rows(predict_input(self, X), sign=-1, weight=weight)
            self.gram_, self.mean_, self.n_samples_seen_ = pack(stats.gram), stats.mean, stats.n
        return self

    def _set_classes(self, coef, intercept, classes) -> None:
        self.coef_ = np.ascontiguousarray(coef, np.float32)
        self.intercept_ = np.asarray(intercept, np.float32)
        self.classes_ = np.asarray(classes)


class OneVsAllRBF(OneVsAllBank):
    """One-vs-all kernel (RBF) SVMs with one shared ``gamma``, for small problems.

    Parameters: ``C``, ``tol``, ``max_iter``, ``class_weight``, ``n_jobs``, ``random_state`` as
    :class:`OneVsAllSVM`; ``gamma`` the kernel width ("scale", "auto" or a number).

    Fitted: ``support_vectors_ (S, D) float32`` (union over classes), ``dual_coef_ (C, S) float32`` (zero
    where a vector is not a support vector of that class), ``intercept_ (C,) float32``, ``gamma_`` (float).
    """

    #: ``{spec type: {"keys": the settings export_spec writes}}``: predict.py requires each (read by the export)
    exports = {"rbf-ova": {"keys": ("gamma",)}}

    penalty = "C"
    _parameter_constraints: dict = {"C": C_COST, "gamma": [Interval(Real, 1e-12, 1e12, closed="both"),
                                                            StrOptions({"scale", "auto"})],
                                    "tol": TOL, "max_iter": MAX_ITER, "class_weight": CLASS_WEIGHT,
                                    "n_jobs": N_JOBS, "random_state": RANDOM_STATE}

    def __init__(self, C: float = 1.0, gamma="scale", tol: float = 1e-4, max_iter: int = 1000, class_weight=None,
                 n_jobs: int | None = -1, random_state=None):
        self.C = C
        self.gamma = gamma
        self.tol = tol
        self.max_iter = max_iter
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _train(self, X, y_idx, C, progress, should_stop) -> None:
        D = X.shape[1]
        if self.gamma == "scale":
            var = float(X.var())
            gamma = 1.0 / (D * var) if var > 0 else 1.0
        elif self.gamma == "auto":
            gamma = 1.0 / D
        else:
            gamma = float(self.gamma)
        params = dict(C=self.C, gamma=gamma, tol=max(self.tol, 1e-3), max_iter=-1,
                      class_weight=self.class_weight, random_state=self.random_state)
        res = fit_parallel(fit_svc, X.astype(np.float64), lambda c: y_idx == c, C, params, self.n_jobs, progress, should_stop,
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
        self._sv_sq_cache = np.einsum("ij,ij->i", self.support_vectors_, self.support_vectors_)
