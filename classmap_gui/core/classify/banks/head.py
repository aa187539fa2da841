"""The window network's own class head as a one-vs-all bank (``network-head``).

The window network is trained with a softmax class head over the embedding it exports (2430 hand classes +
background, on millions of generated crops: :mod:`...features.network_head`). A bank fitted on the hand
model's own images (ridge, about thirty images a class) reads that embedding worse than the head it was
trained with: on the same validation crops the head names the shape in 78-79 % against ridge's 72 %
(``docs/bench/hand-bank-choice.json``). :class:`NetworkHeadBank` therefore scores each class with the head's
row for it — still one linear classifier a class, so brute force is one GEMM, ClassMap's references and refine
read it like any one-vs-all bank, and the exported ``predict.py`` needs nothing new.

What it learns in ``fit`` is what a class added later needs (``Recogniser.add_class``, a person's own gesture):
the ridge bank's training statistics (:mod:`.ridge_stats`), from which the new class's direction is solved; the
affine map from ridge scores to the head's (``head_scale_``, ``head_offset_``, fitted on the training rows over
each row's own class and one other); and a sample of training rows (``negatives_``, float16). The head's logits
are sure of their classes — an unseen hand shape gets a high logit of the nearest — so a new class mapped onto the
head's scale alone would seldom win on its own crops; its offset is set against the head instead, the one that
best separates its rows from the kept ones in the margin over each row's best logit (a class-balanced logistic
loss). Its penalty is not chosen (the head's classifiers do not depend on it): ``alpha`` is relative, times ``n``
times the mean feature variance (default :data:`ALPHA_REL`, the relative penalty the ridge hand model chose on
validation). ClassMap's smoother reference banks (``reference_penalty``) are ridge banks at ``alpha_`` times the
factor (:meth:`NetworkHeadBank.smoother`): the head's rows are its classifiers, smoother ones its references.
"""
from __future__ import annotations

import numpy as np

from ...errors import ConfigError
from ...guards.constraints import StrOptions
from ...progress import ProgressFn, StopFn
from .base import ALPHA, N_JOBS, fit_input, predict_input
from .ova import OneVsAllRidge
from .solvers import encode_labels

#: the default ``alpha``: this times n times the mean feature variance (the ridge hand model's validation choice)
ALPHA_REL = 0.03
#: training rows the ridge-to-head score map is fitted on
CALIBRATION_ROWS = 4000
#: training rows kept (float16) to set a class added later against the head's logits (1 MB at D = 512)
NEGATIVES = 1024


class NetworkHeadBank(OneVsAllRidge):
    """One-vs-all bank whose classifiers are a window network's class head (module docstring).

    Parameters
    ----------
    network : str, default="hand-window"
        The window network whose head scores the classes (its features must be that network's embedding).
    alpha : float, default=ALPHA_REL
        Ridge penalty of a class added later (:meth:`add_class`) and of the smoother reference banks, relative: times
        n times the mean feature variance (``alpha_``, the absolute one).
    n_jobs : int or None, default=-1
        Kept for the bank interface.
    keep_statistics : {"auto", "always", "never"}, default="always"
        Keep the training statistics a class added later is solved from.
    class_names : list of str or None
        The names of integer labels ``0 .. C-1`` (training sets it); None: the labels are the names.

    Attributes
    ----------
    coef_, intercept_ : the head's rows for ``classes_``; ``alpha_`` the penalty used; ``head_scale_``,
    ``head_offset_``: head score ≈ scale x ridge score + offset; ``gram_``, ``mean_``, ``n_samples_seen_`` as
    :class:`.ova.OneVsAllRidge`.
    """

    _parameter_constraints: dict = {"network": [str], "alpha": ALPHA, "n_jobs": N_JOBS,
                                    "keep_statistics": [StrOptions({"auto", "always", "never"})],
                                    "class_names": [list, None]}

    def __init__(self, network: str = "hand-window", alpha: float = ALPHA_REL, n_jobs: int | None = -1,
                 keep_statistics: str = "always", class_names=None):
        self.network = network
        self.class_names = class_names
        self.alpha = alpha
        self.n_jobs = n_jobs
        self.keep_statistics = keep_statistics

    def solve_alpha(self) -> float:
        """The penalty the fit resolved (``alpha_``)."""
        return float(self.alpha_)

    def _train(self, X, y_idx, C, progress, should_stop) -> None:
        var = float(np.mean(np.var(X[:: max(1, len(X) // 20000)], axis=0, dtype=np.float64)))
        self.alpha_ = max(1e-6, float(self.alpha) * len(X) * var)   # relative -> absolute, then the ridge solve
        super()._train(X, y_idx, C, progress, should_stop)

    def fit(self, X, y, *, progress: ProgressFn = None, should_stop: StopFn = None) -> "NetworkHeadBank":
        """The ridge solve and statistics on ``X (n, D)``, labels ``y`` (names of the head's classes), then each
        class's classifier replaced by the head's row for it; returns ``self``."""
        from ...features.network_head import network_head

        names, W, b = network_head(self.network)   # refused before any work when the network has no head
        super().fit(X, y, progress=progress, should_stop=should_stop)
        row = {n: i for i, n in enumerate(names.tolist())}
        named = [self._name(c) for c in self.classes_]
        missing = [n for n in named if n not in row]
        if missing:
            raise ConfigError(f"bank network-head: the network {self.network!r} has no class "
                              f"{', '.join(repr(m) for m in missing[:3])}{' …' if len(missing) > 3 else ''} "
                              "(its head names the hand-pose classes): use the ova-ridge bank")
        if W.shape[1] != self.n_features_in_:
            raise ConfigError(f"bank network-head: the head of {self.network!r} reads {W.shape[1]} features, these "
                              f"have {self.n_features_in_} (the features must be that network's embedding)")
        rows = np.array([row[n] for n in named])
        X, y = fit_input(self, X, y)
        y_idx = encode_labels(y)[1]
        self.head_scale_, self.head_offset_ = _score_map(X, y_idx, (self.coef_, self.intercept_), (W[rows], b[rows]))
        keep = np.random.default_rng(1).choice(len(X), min(NEGATIVES, len(X)), replace=False)
        self.negatives_ = np.asarray(X[np.sort(keep)], np.float16)   # what a class added later is set against
        self.coef_ = np.ascontiguousarray(W[rows], np.float32)
        self.intercept_ = np.ascontiguousarray(b[rows], np.float32)
        return self

    def _name(self, c) -> str:
        if self.class_names is None or not isinstance(c, (int, np.integer)):
            return str(c)
        if not 0 <= int(c) < len(self.class_names):
            raise ConfigError(f"bank network-head: label {c} has no name ({len(self.class_names)} class names)")
        return str(self.class_names[int(c)])

    def add_class(self, label, X, *, weight: float = 1.0, progress: ProgressFn = None,
                  should_stop: StopFn = None) -> "NetworkHeadBank":
        """A class from its rows ``X`` without retraining (module docstring): the ridge direction from the kept
        statistics, on the head's scale, its offset set against the head's logits (:meth:`new_classifier`); the
        head's classes are not changed, ``X`` joins the statistics."""
        w, c = self.new_classifier(X, weight)
        super().add_class(label, X, weight=weight, progress=progress, should_stop=should_stop)
        self.coef_[-1], self.intercept_[-1] = w, c
        return self

    def smoother(self, factor: float) -> OneVsAllRidge:
        """An unfitted ridge bank ``factor`` times this bank's penalty (``alpha_``): ClassMap's smoother references
        (:func:`..classmap.embedding.smoother_bank`)."""
        self._check_fitted()
        return OneVsAllRidge(alpha=self.alpha_ * float(factor), n_jobs=self.n_jobs, keep_statistics="never")

    def new_classifier(self, X, weight: float = 1.0) -> tuple[np.ndarray, np.float32]:
        """``(w, b)``: the classifier :meth:`add_class` would give a class of rows ``X``, not added. The head's
        logits are sure of their classes (an unseen hand shape gets a high logit of the nearest), so the ridge
        direction, scaled by ``head_scale_``, gets the offset that best separates, by a balanced logistic loss,
        ``X`` from the kept training rows (``negatives_``) in the margin over each row's best logit."""
        w, b = super().new_classifier(X, weight)
        X = predict_input(self, X)
        N = np.asarray(self.negatives_, np.float32)
        r = [Z @ w + b for Z in (X, N)]
        m = [(Z @ self.coef_.T + self.intercept_).max(axis=1) for Z in (X, N)]
        a, o = _scale_offset(r, m, float(self.head_scale_))
        return (a * w).astype(np.float32), np.float32(a * float(b) + o)

    def validate_state(self) -> None:
        super().validate_state()
        neg = getattr(self, "negatives_", None)
        if not (isinstance(neg, np.ndarray) and neg.dtype == np.float16 and neg.ndim == 2 and len(neg) >= 1
                and neg.shape[1] == self.n_features_in_ and np.isfinite(neg).all()):
            raise ValueError(f"negatives_ must be finite float16 rows of {self.n_features_in_} features")
        for name in ("alpha_", "head_scale_", "head_offset_"):
            v = getattr(self, name, None)
            if not (isinstance(v, float) and np.isfinite(v)):
                raise ValueError(f"{name} must be a finite number, got {v!r}")
        if not self.head_scale_ > 0:
            raise ValueError(f"head_scale_ must be positive, got {self.head_scale_}")


def _scale_offset(r, m, scale: float) -> tuple[float, float]:
    """``(a, o)`` minimising the class-balanced logistic loss of ``a r - m + o`` (positives ``r[0], m[0]`` to be > 0,
    negatives ``r[1], m[1]`` < 0), ``a`` kept near ``scale`` (a penalty on log(a / scale))."""
    from scipy.optimize import minimize

    def loss(v):
        a, o = scale * np.exp(v[0]), v[1]
        zp, zn = a * r[0] - m[0] + o, a * r[1] - m[1] + o
        return float(np.mean(np.logaddexp(0.0, -zp)) + np.mean(np.logaddexp(0.0, zn)) + 0.01 * v[0] ** 2)

    o0 = _offset(scale * r[0] - m[0], scale * r[1] - m[1])
    v = minimize(loss, np.array([0.0, o0]), method="Nelder-Mead", options={"xatol": 1e-4, "fatol": 1e-7}).x
    return float(scale * np.exp(v[0])), float(v[1])


def _offset(pos: np.ndarray, neg: np.ndarray) -> float:
    """The offset ``o`` minimising the class-balanced logistic loss of ``pos + o`` (to be > 0) and ``neg + o`` (< 0):
    convex in ``o``, its derivative found zero by bisection."""
    def slope(o):
        return float(-np.mean(1.0 / (1.0 + np.exp(np.clip(pos + o, -60, 60))))
                     + np.mean(1.0 / (1.0 + np.exp(np.clip(-(neg + o), -60, 60)))))

    lo, hi = float(-pos.max() - 60.0), float(-neg.min() + 60.0)
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if slope(mid) < 0 else (lo, mid)
    return 0.5 * (lo + hi)


def _score_map(X, y_idx, ridge, head, rows: int = CALIBRATION_ROWS) -> tuple[float, float]:
    """``(scale, offset)``: the least-squares map head score ≈ scale x ridge score + offset over sampled rows of
    ``X``, each at its own class and at one other class (so both the positives' and the negatives' scores count)."""
    rng = np.random.default_rng(0)
    pick = rng.choice(len(X), min(rows, len(X)), replace=False)
    C = len(ridge[1])
    own = y_idx[pick]
    other = (own + rng.integers(1, C, len(pick))) % C
    Xs = np.asarray(X[pick], np.float64)
    r, h = [], []
    for cls in (own, other):
        r.append(np.einsum("ij,ij->i", Xs, ridge[0][cls]) + ridge[1][cls])
        h.append(np.einsum("ij,ij->i", Xs, head[0][cls]) + head[1][cls])
    r, h = np.concatenate(r), np.concatenate(h)
    A = np.stack([r, np.ones_like(r)], 1)
    (scale, offset), *_ = np.linalg.lstsq(A, h, rcond=None)
    if not scale > 0:
        raise ConfigError("bank network-head: the head's scores do not grow with the ridge classifiers' on these "
                          "rows; a class could not be added on the head's scale (use the ova-ridge bank)")
    return float(scale), float(offset)


__all__ = ["ALPHA_REL", "NetworkHeadBank"]
