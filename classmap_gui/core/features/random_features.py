"""Random Fourier features: the sketch map ``f_RFF`` of compressive classification.

``f(x) = [exp(i w_j^T x)]_{j=1..m} / sqrt(m)`` with frequencies ``w_j ~ N(0, sigma^2 I)``, stored as the
equivalent real cosine/sine pair ``[cos(XW), sin(XW)] / sqrt(m)`` (``2m`` real columns), so that the real
dot product of two feature vectors equals ``Re <f(u), f(v)>`` of the complex map and every classifier
stays one real GEMM.

Kernel. The frequency standard deviation is ``sigma`` (the paper's Lambda ~ N(0, I / sigma^-2)), so
``E <f(u), f(v)> = exp(-sigma^2 ||u - v||^2 / 2)``: a Gaussian of *bandwidth 1/sigma*. (The paper's
``exp(-||u-v||^2 / (2 sigma^2))`` would need frequency std ``1/sigma``; with data in [-1, 1] that reading
gives about 25% test error on Iris/Wine against the paper's 6-8%, which the frequency-std reading matches.)

Why not ``sklearn.kernel_approximation.RBFSampler``: it draws ``sqrt(2/D) cos(w^T x + b)`` with a random
phase ``b``. Its kernel is the same (``gamma = sigma^2 / 2``) but each feature carries the extra term
``cos(w^T(u+v) + 2b)``, whose variance does not vanish for nearby points. Measured at equal real width
(``RBFSampler(n_components=2m)`` against ``m`` cos/sin pairs, m = 500, sigma = 2, 200 points in
[-1, 1]^4, 20 draws): kernel-approximation MSE over all pairs 9.8e-4 vs 1.0e-3 (equal: far pairs
dominate), but 7.8e-4 vs 4.5e-4 (1.7x) on the pairs with kernel > 0.3 — the neighbours that decide a
Parzen-window classification. ``classmap bench compressive`` re-measures this ("rff_variance").
``kind="phase"`` wraps ``RBFSampler`` for that comparison.
"""
from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.kernel_approximation import RBFSampler
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ..guards.constraints import Interval, StrOptions, validate_params
from ..errors import ConfigError
from ..guards.limits import MemoryPlan, planned_size

from ..progress import check_stop, report
from .rff_ops import check_rff_spec, rff_features

_CHUNK = 4096  # rows per GEMM block: keeps the (chunk, m) phase matrix in a few MB


def as_float_rows(X) -> np.ndarray:
    """Feature matrix or uint8 images -> ``(n, d) float32``; uint8 is scaled to [0, 1], images flattened."""
    X = np.asarray(X)
    if X.dtype == np.uint8:
        return X.reshape(len(X), -1).astype(np.float32) / np.float32(255.0)
    if X.ndim > 2:
        X = X.reshape(len(X), -1)
    return X


AUTO_FACTOR = 3.0  # "auto" sigma = AUTO_FACTOR / median distance; of 1, 2, 4, 8 the best two were 2 and 4
#                   (Fashion-MNIST pixels: 59, 66, 68, 25% accuracy; random-CNN features: 55, 62, 64, 28%)


def median_bandwidth(X: np.ndarray, rng, n_max: int = 1000, factor: float = AUTO_FACTOR) -> float:
    """Frequency std ``factor / median pairwise distance`` on at most ``n_max`` rows (median heuristic)."""
    idx = rng.choice(len(X), size=min(len(X), n_max), replace=False)
    S = X[idx].astype(np.float64)
    sq = (S * S).sum(1)
    D2 = np.maximum(sq[:, None] + sq[None, :] - 2 * S @ S.T, 0)
    d = np.sqrt(D2[np.triu_indices(len(S), 1)])
    med = float(np.median(d)) if d.size else 0.0
    return factor / med if med > 0 else 1.0


class RandomFourierFeatures(TransformerMixin, BaseEstimator):
    """Random Fourier features of the Gaussian kernel ``exp(-sigma^2 ||u - v||^2 / 2)``.

    Real dot products of the output approximate the kernel. Input: ``(n, d)`` numbers, or uint8 images
    ``(n, h, w[, 3])`` (flattened, scaled to [0, 1]); output ``(n, 2m) float32``.

    Parameters
    ----------
    m : int, default=1000
        Random frequencies (complex features); the output has ``2m`` real columns.
    sigma : float or "auto", default="auto"
        Frequency standard deviation (inverse kernel bandwidth), or ``"auto"`` for
        ``3 / median pairwise distance`` of the training rows (``AUTO_FACTOR``).
    kind : {"cossin", "phase"}, default="cossin"
        The pair ``[cos, sin]``, or ``RBFSampler``'s ``cos(w^T x + b)`` with ``2m`` columns (same kernel,
        more variance; kept for comparison).
    random_state : int or None, default=None
        Seed of the frequencies.

    Attributes
    ----------
    frequencies_ : ndarray of shape (d, m), float32
        The frequencies (``kind="cossin"``); ``kind="phase"`` also has ``offsets_`` (2m,) float32.
    sigma_ : float
        The scale used.
    n_features_in_ : int
        d.

    Examples
    --------
    >>> import numpy as np
    >>> from classmap_gui.core.features import RandomFourierFeatures
    >>> X = np.random.default_rng(0).standard_normal((100, 5)).astype(np.float32)
    >>> RandomFourierFeatures(m=50, random_state=0).fit(X).transform(X[:3]).shape
    (3, 100)
    """

    #: ``{spec type: {"keys": the settings export_spec writes (predict.py requires each), "features": the
    #: numpy code predict.py runs, "check": its check}}`` (read by :mod:`classmap_gui.core.export.predictor`)
    exports = {"rff": {"keys": ("kind", "m"),
                    "features": rff_features, "check": check_rff_spec}}

    _parameter_constraints: dict = {
        "m": [Interval(Integral, 2, 100_000, closed="both")],
        "sigma": [Interval(Real, 1e-12, 1e12, closed="both"), StrOptions({"auto"})],
        "kind": [StrOptions({"cossin", "phase"})],
        "random_state": ["random_state"],
    }

    def __init__(self, m: int = 1000, sigma="auto", kind: str = "cossin", random_state=None):
        self.m = m
        self.sigma = sigma
        self.kind = kind
        self.random_state = random_state

    def fit(self, X, y=None, *, progress=None, should_stop=None):
        """Draw the frequencies for the input width of ``X`` (and its median distance if ``sigma="auto"``)."""
        X = validate_data(self, as_float_rows(X), dtype=[np.float32, np.float64])
        validate_params(self)
        rng = check_random_state(self.random_state)
        self.sigma_ = median_bandwidth(X, rng) if self.sigma == "auto" else float(self.sigma)
        d = X.shape[1]
        if self.kind == "cossin":
            self.frequencies_ = (rng.standard_normal((d, self.m)) * self.sigma_).astype(np.float32)
        else:
            sampler = RBFSampler(gamma=self.sigma_ ** 2 / 2, n_components=2 * self.m,
                                 random_state=rng.randint(2 ** 31 - 1)).fit(X)
            self.frequencies_ = sampler.random_weights_.astype(np.float32)
            self.offsets_ = sampler.random_offset_.astype(np.float32)
        report(progress, 1.0, "random Fourier features")
        return self

    def transform(self, X, *, progress=None, should_stop=None) -> np.ndarray:
        """``(n, d)`` or uint8 images -> ``(n, 2m) float32``, in row blocks."""
        check_is_fitted(self, "frequencies_")
        X = validate_data(self, as_float_rows(X), dtype=[np.float32, np.float64], reset=False)
        X = X.astype(np.float32, copy=False)
        n, m = len(X), self.m
        out = np.empty((n, 2 * m), np.float32)
        scale = np.float32(1.0 / np.sqrt(m))
        for start in range(0, n, _CHUNK):
            check_stop(should_stop)
            block = slice(start, min(n, start + _CHUNK))
            P = X[block] @ self.frequencies_
            if self.kind == "cossin":
                np.cos(P, out=out[block, :m])
                np.sin(P, out=out[block, m:])
            else:
                P += self.offsets_
                np.cos(P, out=out[block])
            out[block] *= scale
            report(progress, block.stop / max(n, 1), "random Fourier features")
        return out

    def transform_complex(self, X) -> np.ndarray:
        """The paper's complex form ``exp(i XW) / sqrt(m)``, ``(n, m) complex64`` (``kind="cossin"`` only)."""
        if self.kind != "cossin":
            raise ConfigError("transform_complex needs kind='cossin'")
        F = self.transform(X)
        return (F[:, : self.m] + 1j * F[:, self.m:]).astype(np.complex64)

    def kernel(self, U, V) -> np.ndarray:
        """The exact kernel the features approximate, ``exp(-sigma^2 ||u-v||^2 / 2)``, ``(len(U), len(V))``."""
        check_is_fitted(self, "frequencies_")
        return gaussian_kernel(as_float_rows(U), as_float_rows(V), self.sigma_)

    def validate_state(self) -> None:
        """Checks after loading a saved model: the frequencies fit ``m``, ``kind`` and the input width."""
        if self.kind not in ("cossin", "phase"):
            raise ValueError(f"unknown kind {self.kind!r}")
        cols = self.m if self.kind == "cossin" else 2 * self.m
        if not (isinstance(self.frequencies_, np.ndarray) and self.frequencies_.dtype == np.float32
                and self.frequencies_.shape == (self.n_features_in_, cols)):
            raise ValueError(f"frequencies must be float32 ({self.n_features_in_}, {cols})")

    def get_feature_names_out(self, input_features=None):
        """Output column names (scikit-learn's convention)."""
        check_is_fitted(self, "frequencies_")
        names = ([f"cos{j}" for j in range(self.m)] + [f"sin{j}" for j in range(self.m)]
                 if self.kind == "cossin" else [f"rbf{j}" for j in range(2 * self.m)])
        return np.asarray(names, dtype=object)

    @property
    def n_features_out_(self) -> int:
        """Output width, 2m: the cos/sin pair of m frequencies, or 2m phase-shifted cosines."""
        return 2 * self.m

    def export_spec(self, arrays: dict, prefix: str = "features") -> dict:
        """Settings for the exported ``predict.py`` (:mod:`classmap_gui.core.export.folder`); its arrays go into
        ``arrays`` under ``prefix``."""
        arrays[f"{prefix}.frequencies"] = np.asarray(self.frequencies_, np.float32)
        if self.kind == "phase":
            arrays[f"{prefix}.offsets"] = np.asarray(self.offsets_, np.float32)
        return {"type": "rff", "kind": str(self.kind), "m": int(self.m)}

    @staticmethod
    def memory_plan(params: dict, n_images: int, image_shape: tuple[int, ...]) -> MemoryPlan:
        """What training will hold (:class:`~classmap_gui.core.guards.limits.MemoryPlan`), from the parameters as given
        (``"auto"`` planned at its largest) and one image's shape."""
        m, pixels = planned_size(params, "m", 1000), math.prod(image_shape)
        return MemoryPlan(width=2 * m, own_floats=m * pixels, budgets=(
            ("--set m", m * pixels * 4, f"{m} random features of {pixels} pixels"),
            ("--set m", 2 * n_images * m * 4, f"{n_images} feature vectors of {2 * m} values")))


def gaussian_kernel(U: np.ndarray, V: np.ndarray, sigma: float) -> np.ndarray:
    """``exp(-sigma^2 ||u - v||^2 / 2)`` for all row pairs, ``(len(U), len(V)) float64``."""
    U = np.asarray(U, np.float64)
    V = np.asarray(V, np.float64)
    D2 = np.maximum((U * U).sum(1)[:, None] + (V * V).sum(1)[None, :] - 2 * U @ V.T, 0)
    return np.exp(-0.5 * sigma ** 2 * D2)
