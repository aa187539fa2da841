"""Compressive classification: each class is the mean of random nonlinear features of its examples.

``CompressiveClassifier`` keeps one *class sketch* per class, ``z_k = mean_{x in class k} f(x)`` (with the
count ``N_k``), and labels a query ``x`` by ``argmax_k p_k <f(x), z_k>`` (the real part of the complex
inner product; ``f`` is stored as its real cos/sin pair so this is one real GEMM). With random Fourier
features of frequency std ``sigma`` the scores converge, as ``m`` grows, to the Parzen-window classifier
``p_k * mean_{x_i in class k} exp(-sigma^2 ||x - x_i||^2 / 2)`` (the paper's eq. 5), at rate ~1/sqrt(m).

There is no training in the usual sense: sketches are running means, so new examples (``partial_fit``),
a new class (``add_class``) or another site's sketches of the same map (``merge``) are folded in exactly,
without touching any other class. Input is a feature matrix ``(n, d)``; the map is ``"rff"`` (random
Fourier features of ``X``), ``"identity"`` (``X`` already holds the sketch features, e.g. a random CNN or
k-means features computed upstream) or a scikit-learn transformer.

The product's classifier-bank form of it is :class:`~.compressive_bank.CompressiveBank`; adding a class
to a whole trained model is :meth:`Recogniser.add_class`.
"""
from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.multiclass import check_classification_targets, unique_labels
from sklearn.utils.validation import check_is_fitted, validate_data

from ...guards.constraints import HasMethods, Interval, StrOptions, validate_params
from ...errors import ConfigError
from ...features.random_features import RandomFourierFeatures
from ...progress import check_stop, report
from ...guards.arrays import check_array

_BLOCK = 1 << 22  # elements of one (rows, D) feature block: 16 MB, so m = 10^5 still maps in blocks
MAPS = ("rff", "identity")
PRIORS = ("empirical", "uniform")


class CompressiveClassifier(ClassifierMixin, BaseEstimator):
    """Class sketches of random features; predict ``argmax_k p_k Re<f(x), z_k>``.

    Parameters
    ----------
    m : int, default=1000
        Random frequencies of the ``"rff"`` map (sketch width ``2m`` reals = ``m`` complex).
    sigma : float or "auto", default=2.0
        Frequency standard deviation of the ``"rff"`` map (kernel ``exp(-sigma^2 ||u-v||^2 / 2)``), or
        ``"auto"`` (1 / median pairwise distance of the first batch).
    map : "rff", "identity" or transformer, default="rff"
        ``"identity"``: ``X`` is already ``f(x)``; an unfitted scikit-learn transformer is cloned and fitted
        on the first batch (``m`` and ``sigma`` are then unused).
    priors : {"empirical", "uniform"}, default="empirical"
        ``p_k = N_k / N`` or ``1 / K``.
    random_state : int or None, default=None
        Seed of the random map.

    Attributes
    ----------
    classes_ : ndarray of shape (C,)
        The labels.
    sketches_ : ndarray of shape (C, D), float32
        Class means of ``f``.
    counts_ : ndarray of shape (C,), int64
        Examples per class.
    map_ : transformer or None
        The fitted map (None for identity).
    n_features_in_ : int
        The width of ``X``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from classmap_gui.core.classify import CompressiveClassifier
    >>> X, y = load_digits(return_X_y=True)
    >>> clf = CompressiveClassifier(m=500, sigma="auto", random_state=0).fit(X[:1500], y[:1500])
    >>> clf.sketches_.shape
    (10, 1000)
    >>> clf.score(X[1500:], y[1500:]) > 0.8
    True
    """

    _parameter_constraints: dict = {
        "m": [Interval(Integral, 2, 100_000, closed="both")],
        "sigma": [Interval(Real, 1e-12, 1e12, closed="both"), StrOptions({"auto"})],
        "map": [StrOptions(set(MAPS)), HasMethods(["fit", "transform"])],
        "priors": [StrOptions(set(PRIORS))],
        "random_state": ["random_state"],
    }

    def __init__(self, m: int = 1000, sigma=2.0, map="rff", priors: str = "empirical", random_state=None):
        self.m = m
        self.sigma = sigma
        self.map = map
        self.priors = priors
        self.random_state = random_state

    # ------------------------------------------------------------ observation phase
    def fit(self, X, y, *, progress=None, should_stop=None):
        """Sketch every class of ``X (n, d)`` / ``y (n,)`` from scratch; returns ``self``."""
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32])
        check_classification_targets(y)
        validate_params(self)
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        self.map_ = self._make_map(X)
        sums, counts = self._sums(X, y_idx, len(self.classes_), progress, should_stop)
        self.counts_ = counts
        self.sketches_ = (sums / np.maximum(counts, 1)[:, None]).astype(np.float32)
        return self

    def partial_fit(self, X, y, classes=None, *, progress=None, should_stop=None):
        """Fold a batch into the running class means; ``classes`` (all labels) is required on the first call."""
        first = self._first_partial_fit(classes)
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32], reset=first)
        check_classification_targets(y)
        if first:
            validate_params(self)
            self.map_ = self._make_map(X)
            self.counts_ = np.zeros(len(self.classes_), np.int64)
            self.sketches_ = np.zeros((len(self.classes_), self._width()), np.float32)
        y_idx = self._label_index(y)
        sums, counts = self._sums(X, y_idx, len(self.classes_), progress, should_stop)
        self._fold_in(np.arange(len(self.classes_)), sums, counts)
        return self

    def _first_partial_fit(self, classes) -> bool:
        """Whether this ``partial_fit`` call is the first (it sets ``classes_`` from ``classes`` then);
        ValueError when ``classes`` is missing on the first call or differs from the first call's."""
        if getattr(self, "classes_", None) is not None:
            if classes is not None and not np.array_equal(self.classes_, unique_labels(classes)):
                raise ValueError(f"classes={classes!r} is not the same as on the first call to partial_fit, "
                                 f"was {self.classes_!r}")
            return False
        if classes is None:
            raise ValueError("classes must be passed on the first call to partial_fit.")
        self.classes_ = unique_labels(classes)
        return True

    def add_class(self, label, X, *, progress=None, should_stop=None):
        """Append class ``label`` sketched from ``X (n, d)``; every other sketch stays bit-identical."""
        check_is_fitted(self, "sketches_")
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        if len(X) == 0:
            raise ConfigError(f"add_class: class {label!r} has no examples")
        if np.any(self.classes_ == label):
            raise ConfigError(f"add_class: class {label!r} exists already; use partial_fit to add examples to it")
        sums, counts = self._sums(X, np.zeros(len(X), np.int64), 1, progress, should_stop)
        new = np.asarray([label])
        if new.dtype.kind != self.classes_.dtype.kind:
            new = new.astype(object)
        self.classes_ = np.concatenate([self.classes_.astype(object) if new.dtype == object else self.classes_, new])
        self.counts_ = np.concatenate([self.counts_, counts])
        self.sketches_ = np.vstack([self.sketches_, (sums / counts[0]).astype(np.float32)])
        return self

    def merge(self, other: "CompressiveClassifier") -> "CompressiveClassifier":
        """A new classifier equal (to float tolerance) to sketching the union of both training sets.

        Both must use the same map (same parameters and the same drawn frequencies / fitted state).
        Classes are the sorted union of both label sets; shared classes are count-weighted means.
        """
        check_is_fitted(self, "sketches_")
        check_is_fitted(other, "sketches_")
        if self.n_features_in_ != other.n_features_in_ or not _same_map(self.map_, other.map_):
            raise ConfigError("merge: the two classifiers use different sketch maps (input width, m, sigma or "
                              "random_state differ); only sketches of one map can be merged")
        out = clone(self)
        out.n_features_in_ = self.n_features_in_
        if hasattr(self, "feature_names_in_"):
            out.feature_names_in_ = self.feature_names_in_
        out.map_ = self.map_
        out.classes_ = np.unique(np.concatenate([self.classes_, other.classes_]))
        out.counts_ = np.zeros(len(out.classes_), np.int64)
        out.sketches_ = np.zeros((len(out.classes_), self.sketches_.shape[1]), np.float32)
        for src in (self, other):
            idx = np.searchsorted(out.classes_, src.classes_)
            out._fold_in(idx, src.sketches_.astype(np.float64) * src.counts_[:, None], src.counts_)
        return out

    # ------------------------------------------------------------ classification phase
    def transform_sketch(self, X, *, should_stop=None) -> np.ndarray:
        """``f(X)``: the sketch of each row, ``(n, D) float32``."""
        check_is_fitted(self, "sketches_")
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        return self._map(X)

    def scores(self, X, *, should_stop=None) -> np.ndarray:
        """``p_k <f(x), z_k>`` for every row and class, ``(n, C) float32``; empty classes score ``-inf``.

        Rows are mapped in blocks, so memory stays bounded for wide maps (m = 10^5)."""
        check_is_fitted(self, "sketches_")
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        S = np.empty((len(X), len(self.classes_)), np.float32)
        step = self._rows_per_block()
        for s in range(0, len(X), step):
            check_stop(should_stop)
            np.matmul(self._map(X[s:s + step]), self.sketches_.T, out=S[s:s + step])
        S *= self.class_priors()[None, :]
        if np.any(self.counts_ == 0):
            S[:, self.counts_ == 0] = -np.inf
        return S

    def scores_subset(self, X, classes) -> np.ndarray:
        """Scores of only the given class indices per row: ``classes (n, k) int`` -> ``(n, k) float32``."""
        F = self.transform_sketch(X)
        classes = np.asarray(classes, np.int64)
        out = np.empty(classes.shape, np.float32)
        priors = self.class_priors()
        step = max(1, (1 << 22) // max(1, classes.shape[1] * F.shape[1]))
        for s in range(0, len(F), step):
            c = classes[s:s + step]
            out[s:s + step] = np.einsum("nd,nkd->nk", F[s:s + step], self.sketches_[c]) * priors[c]
        return out

    def decision_function(self, X) -> np.ndarray:
        """scikit-learn's convention: ``(n,)`` (score of ``classes_[1]`` minus ``classes_[0]``) for two
        classes, else ``(n, C)`` as :meth:`scores`."""
        S = self.scores(X)
        return S[:, 1] - S[:, 0] if S.shape[1] == 2 else S

    def predict(self, X) -> np.ndarray:
        """``(n,)`` labels from ``classes_``."""
        check_is_fitted(self, "sketches_")
        return self.classes_[np.argmax(self.scores(X), axis=1)]

    def class_priors(self) -> np.ndarray:
        """``(C,) float32`` priors ``p_k`` as set by ``priors``."""
        check_is_fitted(self, "counts_")
        C = len(self.counts_)
        if self.priors == "uniform":
            return np.full(C, 1.0 / C, np.float32)
        return (self.counts_ / max(1, self.counts_.sum())).astype(np.float32)

    # ------------------------------------------------------------ internals
    def _map_spec(self):
        return self.map

    def _make_map(self, X):
        spec = self._map_spec()
        if isinstance(spec, str):
            if spec == "identity":
                return None
            return RandomFourierFeatures(m=self.m, sigma=self.sigma, random_state=self.random_state).fit(X)
        return clone(spec).fit(X)

    def validate_state(self) -> None:
        """Checks after loading a saved model: consistent class count, widths and dtypes."""
        C = len(check_array("sketches_", self.sketches_, dtype=np.float32, ndim=2))
        check_array("counts_", self.counts_, dtype=np.int64, shape=(C,))
        if len(np.asarray(self.classes_)) != C:
            raise ValueError(f"{len(self.classes_)} class labels for {C} sketches")
        if np.any(self.counts_ < 0):
            raise ValueError("negative class counts")
        if self.map_ is not None:
            width = self.map_.transform(np.zeros((1, self.n_features_in_), np.float32)).shape[1]
        else:
            width = self.n_features_in_
        if width != self.sketches_.shape[1]:
            raise ValueError(f"sketches have {self.sketches_.shape[1]} columns, the map gives {width}")

    def _width(self) -> int:
        """Sketch width ``D`` (columns of ``f(x)``)."""
        if self.map_ is None:
            return self.n_features_in_
        return int(self.map_.transform(np.zeros((1, self.n_features_in_), np.float32)).shape[1])

    def _rows_per_block(self) -> int:
        width = self.sketches_.shape[1] if hasattr(self, "sketches_") else self._width()
        return max(1, _BLOCK // max(1, width, self.n_features_in_))

    def _map(self, X: np.ndarray) -> np.ndarray:
        if self.map_ is None:
            return np.asarray(X, np.float32)
        return np.asarray(self.map_.transform(X), np.float32)

    def _label_index(self, y) -> np.ndarray:
        idx = np.searchsorted(self.classes_, y) if _sortable(self.classes_) else None
        if idx is None or np.any(idx >= len(self.classes_)) or np.any(self.classes_[np.minimum(idx, len(self.classes_) - 1)] != y):
            lookup = {c: i for i, c in enumerate(self.classes_.tolist())}
            try:
                idx = np.fromiter((lookup[v] for v in np.asarray(y).tolist()), np.int64, len(y))
            except KeyError as exc:
                raise ValueError(f"partial_fit: label {exc.args[0]!r} is not among classes {self.classes_.tolist()}; "
                                 "use add_class for a new class") from None
        return idx

    def _sums(self, X, y_idx, C, progress, should_stop):
        """Per-class sums of ``f(X)`` ``(C, D) float64`` and counts ``(C,) int64``, in row blocks."""
        n = len(X)
        counts = np.bincount(y_idx, minlength=C).astype(np.int64)
        sums = None
        step = self._rows_per_block()
        for s in range(0, n, step):
            check_stop(should_stop)
            F = self._map(X[s:s + step])
            rows = y_idx[s:s + step]
            onehot = sparse.csr_matrix((np.ones(len(rows), np.float32), (rows, np.arange(len(rows)))),
                                       shape=(C, len(rows)))
            part = np.asarray(onehot @ F, np.float64)
            sums = part if sums is None else sums + part
            report(progress, min(n, s + step) / n, "class sketches")
        if sums is None:
            sums = np.zeros((C, self._width()), np.float64)
        return sums, counts

    def _fold_in(self, idx, sums, counts) -> None:
        """Running-mean update of classes ``idx`` with new per-class sums and counts."""
        old = self.counts_[idx]
        total = old + counts
        keep = total > 0
        merged = (self.sketches_[idx].astype(np.float64) * old[:, None] + sums)
        merged[keep] /= total[keep, None]
        self.sketches_[idx] = merged.astype(np.float32)
        self.counts_[idx] = total


def _sortable(a: np.ndarray) -> bool:
    return a.dtype.kind in "biufUS"


def _same_map(a, b) -> bool:
    """Whether two fitted maps are the same function (identical parameters and learned arrays)."""
    if a is None or b is None:
        return a is None and b is None
    if type(a) is not type(b) or a.get_params() != b.get_params():
        return False
    for key, va in vars(a).items():
        if key.endswith("_") and not key.startswith("_"):
            vb = getattr(b, key, None)
            if isinstance(va, np.ndarray):
                if not (isinstance(vb, np.ndarray) and va.shape == vb.shape and np.array_equal(va, vb)):
                    return False
    return True
