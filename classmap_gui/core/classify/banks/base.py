"""What all classifier banks share: input checks, the gathered dot product, top-k, ``predict``.

A *bank* is a set of binary classifiers evaluated together: after ``fit(X (n, D) float32, y (n,))``
it has ``classes_`` (C,), ``decision_function(X) -> (n, C) float32`` scoring every class,
``decision_function_subset(X, classes (n, k) int64) -> (n, k) float32`` scoring only the listed
class *indices* (columns of ``decision_function``) per query, and ``n_classifiers_`` (binary classifiers
evaluated by a brute-force query).

Banks follow scikit-learn's estimator contract (``check_estimator`` passes) except, on purpose:
``decision_function`` is ``(n, C)`` also for two classes. Scoring is pure (no attribute changes), as
scikit-learn asks: the cost of a prediction is computed by the caller from what it asked to be
evaluated (:class:`~.result.Prediction`), so concurrent queries never share a counter.

Banks are built by name with :func:`classmap_gui.core.registry.make_bank`.
"""
from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np

from sklearn.exceptions import NotFittedError as SklearnNotFittedError
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from ...guards.constraints import Interval
from ...errors import ConfigError, NotFittedError
from .ranking_ops import top_k  # noqa: F401  (re-exported: every bank's scores are ranked with it)

# ---------------------------------------------------------------- constraints the banks share (``_parameter_constraints``)
#: SVM cost; the bounds keep a typo from a degenerate or never-ending solve
C_COST = [Interval(Real, 1e-8, 1e8, closed="both")]
#: ridge penalty
ALPHA = [Interval(Real, 1e-12, 1e12, closed="both")]
TOL = [Interval(Real, 1e-12, 1.0, closed="both")]
MAX_ITER = [Interval(Integral, 1, 1_000_000, closed="both")]
#: worker threads (-1: all cores); the registry bounds it by this machine's cores
N_JOBS = [Integral, None]
RANDOM_STATE = ["random_state"]


class BankNotFittedError(NotFittedError, SklearnNotFittedError):
    """A bank used before ``fit``: both our NotFittedError and scikit-learn's."""


class BankMixin:
    """What every stacked bank shares: ``predict`` from its scores, and the not-fitted check."""

    def features_for(self, name: str, params: dict) -> tuple[str, dict]:
        """The feature map ``(name, params)`` training builds for this bank: the requested one.

        Banks whose scoring needs a particular map (the compressive CNN sketch) override this, so
        training asks every bank the same question instead of special-casing one."""
        return name, dict(params)

    def predict(self, X) -> np.ndarray:
        """The best-scoring class label per row, ``(n,)``."""
        scores = self.decision_function(X)  # raises BankNotFittedError before classes_ is touched
        return self.classes_[np.argmax(scores, axis=1)]

    def _check_fitted(self) -> None:
        if not hasattr(self, "classes_"):
            raise BankNotFittedError(f"this {type(self).__name__} is not trained yet; call fit first")


def fit_input(est: Any, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    """Check training data the scikit-learn way (clear messages for sparse, complex, NaN, 1-D X, 2-D or
    continuous y; sets ``n_features_in_``): returns ``X (n, D)`` C-contiguous float32 and ``y (n,)``."""
    X, y = validate_data(est, X, y, dtype=np.float32, order="C")
    check_classification_targets(y)
    return X, y


def predict_input(est: Any, X: Any) -> np.ndarray:
    """Check query data against a fitted bank: ``(n, D)`` C-contiguous float32, D = ``n_features_in_``."""
    if not hasattr(est, "classes_"):
        raise BankNotFittedError(f"this {type(est).__name__} is not trained yet; call fit first")
    return validate_data(est, X, dtype=np.float32, order="C", reset=False)


def as_features(X: Any, n_features: int | None = None, what: str = "bank") -> np.ndarray:
    """``X`` as a C-contiguous ``(n, D) float32`` array; ConfigError when the shape is wrong."""
    X = np.ascontiguousarray(X, dtype=np.float32)
    if X.ndim != 2:
        raise ConfigError(f"{what}: expected a 2-D feature matrix (n, D), got shape {X.shape}")
    if n_features is not None and X.shape[1] != n_features:
        raise ConfigError(f"{what}: features have {X.shape[1]} columns, the bank was trained on {n_features}")
    # checked in row chunks: X may be a memory-mapped matrix larger than RAM (core/train/encode.py)
    rows = max(1, (16 << 20) // max(1, 4 * X.shape[1]))
    if not all(np.isfinite(X[a:a + rows]).all() for a in range(0, X.shape[0], rows)):
        raise ConfigError(f"{what}: the feature matrix holds NaN or infinite values")
    return X


def as_class_index(classes: Any, n: int, n_classes: int, what: str = "bank") -> np.ndarray:
    """``classes`` as ``(n, k) int64`` column indices in ``[0, n_classes)``."""
    classes = np.asarray(classes)
    if classes.ndim == 1:
        classes = np.broadcast_to(classes, (n, classes.shape[0]))
    if classes.ndim != 2 or classes.shape[0] != n:
        raise ConfigError(f"{what}: classes must be (n, k) = ({n}, k), got {classes.shape}")
    if classes.dtype.kind not in "iu":
        raise ConfigError(f"{what}: classes must be integer indices, got {classes.dtype}")
    classes = classes.astype(np.int64, copy=False)
    if classes.size and (classes.min() < 0 or classes.max() >= n_classes):
        raise ConfigError(f"{what}: class indices outside [0, {n_classes})")
    return classes


def row_chunks(n: int, per_row: int, budget: int = 1 << 22) -> tuple[range, int]:
    """``(start indices, rows per chunk)`` so that ``rows * per_row`` stays near ``budget`` elements."""
    step = max(1, budget // max(1, per_row))
    return range(0, n, step), step


def gathered_dot(X: np.ndarray, W: np.ndarray, b: np.ndarray, index: np.ndarray, *,
                 compiled: bool | None = None) -> np.ndarray:
    """``out[i, j] = X[i] @ W[index[i, j]] + b[index[i, j]]`` for ``X (n, D)``, ``W (M, D)``, ``index (n, k)``.

    Batches of at least ``kernels.subset.MIN_ROWS`` rows use the compiled kernel (reads each named
    weight row once); smaller ones, or ``compiled=False``, gather the rows of ``W`` in row chunks
    (bounded memory) and do one batched matmul per chunk. No Python loop over classifiers either way.
    Returns ``(n, k) float32``.
    """
    from ..kernels import subset as kern

    n, k = index.shape
    out = np.empty((n, k), np.float32)
    if n == 0 or k == 0:
        return out
    if compiled is None:
        compiled = kern.HAVE_NUMBA and n >= kern.MIN_ROWS
    if compiled:
        kern.subset_dot(np.ascontiguousarray(X, np.float32), np.ascontiguousarray(W, np.float32),
                        np.ascontiguousarray(b, np.float32), np.ascontiguousarray(index, np.int64), out)
        return out
    starts, step = row_chunks(n, k * W.shape[1])
    for s in starts:
        e = min(n, s + step)
        Wg = W[index[s:e]]  # (m, k, D)
        np.matmul(Wg, X[s:e, :, None], out=out[s:e, :, None])
        out[s:e] += b[index[s:e]]
    return out
