"""Random convolutional network features: the paper's image sketch map ``f_CNN``.

Nothing is learned: ``depth`` blocks of (convolution with fixed seeded Gaussian filters -> ReLU ->
max pooling), then a final random layer to ``m`` outputs. The kernel ``<f(u), f(v)>`` is that of a
random network — arc-cosine-like for the ReLU final layer — and, unlike a Gaussian on pixels, it is
tolerant to small shifts thanks to the pooling, which is why the paper prefers it for images.

Convolutions are ``sliding_window_view`` + one float32 GEMM per block and batch of images
(``(b*H'*W', c*k*k) @ (c*k*k, c_out)``), the usual im2col; OpenCV's ``filter2D`` would need a Python
loop over filters and channels. Work runs in image batches sized to keep the im2col matrix near 32 MB.
"""
from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..guards.constraints import Interval, StrOptions, validate_params
from ..errors import ConfigError, DataError
from ..guards.limits import MemoryPlan, planned_size
from ..progress import check_stop, report
from .cnn_ops import check_cnn_spec, cnn_features, conv_blocks, final_layer
from .random_features import median_bandwidth

_IM2COL_BUDGET = 1 << 23  # float32 elements of one im2col block (32 MB)


def _as_images(images) -> np.ndarray:
    """uint8 ``(n, h, w)`` or ``(n, h, w, c)`` -> float32 ``(n, h, w, c)`` in [0, 1]."""
    images = np.asarray(images)
    if images.ndim == 3:
        images = images[..., None]
    if images.ndim != 4:
        raise DataError(f"random CNN features expect images (n, h, w) or (n, h, w, c), got shape {images.shape}")
    if images.dtype == np.uint8:
        return images.astype(np.float32) / np.float32(255.0)
    return images.astype(np.float32, copy=False)


class RandomCNNFeatures(TransformerMixin, BaseEstimator):
    """A fixed random CNN: ``depth`` x (k x k conv, ReLU, max-pool) then a random layer to ``m`` outputs.

    Nothing is trained: every weight is drawn from ``random_state``. Input: uint8 images ``(n, h, w)`` or
    ``(n, h, w, 3)``; output ``(n, m) float32``. The defaults were measured on Fashion-MNIST with the
    compressive classifier: one block of 16 5 x 5 filters did best of the depths and widths tried, and the
    ReLU final layer makes every class sketch nearly the same direction (its outputs are all positive), so
    ``"rff"`` is the default final layer.

    Parameters
    ----------
    m : int, default=1000
        Output width.
    depth : int, default=1
        Convolution blocks (each needs the image to stay at least ``kernel_size``).
    width : int, default=16
        Filters in the first block; block ``l`` has ``width * 2**l``.
    kernel_size : int, default=5
        Square filter size (valid convolution).
    pool : int, default=2
        Max-pooling window and stride after each block (1: none).
    final : {"rff", "relu"}, default="rff"
        ``"relu"``: ``sqrt(2/m) relu(W h + b)``, the arc-cosine kernel; ``"rff"``: ``m/2`` random Fourier
        frequencies of the normalised conv features, cos/sin pairs.
    sigma : float or "auto", default="auto"
        Frequency std of the ``"rff"`` final layer, or 3 / median distance of the conv features.
    normalize : bool, default=True
        Scale each image's conv features to unit L2 norm before the final layer, so that the kernel
        compares patterns, not brightness or contrast.
    random_state : int or None, default=0
        Seed of every random weight.

    Attributes
    ----------
    filters_ : list of ndarray
        Per block ``(c_in * k * k, c_out) float32``.
    final_weights_ : ndarray of shape (D_conv, m or m/2), float32
        The final layer; ``final_bias_`` (m,) float32.
    input_shape_ : tuple of int
        (h, w, c) of the training images.
    sigma_ : float
        The scale used.

    Examples
    --------
    >>> import numpy as np
    >>> from classmap_gui.core.features import RandomCNNFeatures
    >>> images = np.random.default_rng(0).integers(0, 256, (20, 16, 16), dtype=np.uint8)
    >>> RandomCNNFeatures(m=100, random_state=0).fit(images).transform(images[:3]).shape
    (3, 100)
    """

    #: ``{spec type: {"keys": the settings export_spec writes (predict.py requires each), "features": the
    #: numpy code predict.py runs, "check": its check}}`` (read by :mod:`classmap_gui.core.export.predictor`)
    exports = {"cnn": {"keys": ("m", "depth", "kernel_size", "pool", "final", "normalize"),
                    "features": cnn_features, "check": check_cnn_spec}}

    _parameter_constraints: dict = {
        "m": [Interval(Integral, 2, 100_000, closed="both")],
        "depth": [Interval(Integral, 1, 8, closed="both")],
        "width": [Interval(Integral, 1, 512, closed="both")],
        "kernel_size": [Interval(Integral, 1, 31, closed="both")],
        "pool": [Interval(Integral, 1, 8, closed="both")],
        "final": [StrOptions({"rff", "relu"})],
        "sigma": [Interval(Real, 1e-12, 1e12, closed="both"), StrOptions({"auto"})],
        "normalize": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(self, m: int = 1000, depth: int = 1, width: int = 16, kernel_size: int = 5, pool: int = 2,
                 final: str = "rff", sigma="auto", normalize: bool = True, random_state=0):
        self.m = m
        self.depth = depth
        self.width = width
        self.kernel_size = kernel_size
        self.pool = pool
        self.final = final
        self.sigma = sigma
        self.normalize = normalize
        self.random_state = random_state

    # ---------------------------------------------------------------- fitting = drawing weights
    def fit(self, images, y=None, *, progress=None, should_stop=None):
        """Draw all random weights for the shape of ``images`` (and the median distance for ``sigma="auto"``)."""
        X = _as_images(images)
        self._check_shape(X.shape[1:])
        rng = check_random_state(self.random_state)
        h, w, c = X.shape[1:]
        filters, k = [], self.kernel_size
        for level in range(self.depth):
            c_out = self.width * 2 ** level
            # He scaling keeps activations of the same order through ReLU blocks
            filters.append((rng.standard_normal((c * k * k, c_out)) * np.sqrt(2.0 / (c * k * k))).astype(np.float32))
            h, w, c = (h - k + 1) // self.pool, (w - k + 1) // self.pool, c_out
        self.input_shape_ = np.asarray(X.shape[1:], np.int64)
        self.filters_ = filters
        self.conv_width_ = int(h * w * c)
        D = self.conv_width_
        if self.final == "relu":
            self.final_weights_ = (rng.standard_normal((D, self.m)) / np.sqrt(D if not self.normalize else 1.0)
                                   ).astype(np.float32)
            self.final_bias_ = (rng.standard_normal(self.m) * (0.0 if self.normalize else 1.0)).astype(np.float32)
            self.sigma_ = 0.0
        else:
            sample = X[rng.choice(len(X), size=min(len(X), 500), replace=False)]
            H = self._conv(sample, None)
            self.sigma_ = median_bandwidth(H, rng) if self.sigma == "auto" else float(self.sigma)
            self.final_weights_ = (rng.standard_normal((D, self.m // 2)) * self.sigma_).astype(np.float32)
            self.final_bias_ = np.zeros(self.m, np.float32)
        report(progress, 1.0, "random CNN")
        return self

    def _check_shape(self, shape) -> None:
        """The parameters one by one (``_parameter_constraints``), then whether their blocks fit ``shape``."""
        validate_params(self)
        h, w = shape[0], shape[1]
        for level in range(self.depth):
            if min(h, w) < self.kernel_size:
                raise ConfigError(f"random CNN: {shape[0]}x{shape[1]} images are too small for {self.depth} blocks of "
                                  f"{self.kernel_size}x{self.kernel_size} filters with pooling {self.pool}; "
                                  "lower depth, kernel_size or pool")
            h, w = (h - self.kernel_size + 1) // self.pool, (w - self.kernel_size + 1) // self.pool
        if min(h, w) < 1:
            raise ConfigError(f"random CNN: pooling leaves no pixels for {shape[0]}x{shape[1]} images; lower depth or pool")

    # ---------------------------------------------------------------- the network
    def _conv(self, X: np.ndarray, should_stop) -> np.ndarray:
        """Conv blocks on ``(b, h, w, c) float32`` -> ``(b, conv_width_) float32`` (unit rows if ``normalize``)."""
        check_stop(should_stop)
        return conv_blocks(X, self.filters_, self.kernel_size, self.pool, self.normalize)

    def _batch_size(self) -> int:
        h, w, c = (int(v) for v in self.input_shape_)
        k = self.kernel_size
        per_image = max((h - k + 1) * (w - k + 1) * c * k * k,
                        (h - k + 1) * (w - k + 1) * self.width, self.m)
        return max(1, _IM2COL_BUDGET // per_image)

    def transform(self, images, *, progress=None, should_stop=None) -> np.ndarray:
        """uint8 images -> ``(n, m) float32`` random-network features."""
        check_is_fitted(self, "filters_")
        X = _as_images(images)
        if tuple(X.shape[1:]) != tuple(int(v) for v in self.input_shape_):
            raise DataError(f"random CNN features were drawn for images of shape {tuple(self.input_shape_)}, "
                            f"got {tuple(X.shape[1:])}; resize the images to the model's size")
        n = len(X)
        out = np.empty((n, self.m), np.float32)
        step = self._batch_size()
        for s in range(0, n, step):
            check_stop(should_stop)
            H = self._conv(X[s:s + step], should_stop)
            out[s:s + step] = final_layer(H, self.final_weights_, self.final_bias_, self.m, self.final)
            report(progress, min(n, s + step) / n, "random CNN features")
        return out

    def validate_state(self) -> None:
        """Checks after loading a saved model: every drawn array has the shape the parameters imply."""
        if len(self.filters_) != self.depth:
            raise ValueError(f"random CNN: {len(self.filters_)} filter banks saved for depth {self.depth}")
        self.filters_ = [np.asarray(f, np.float32) for f in self.filters_]
        cols = self.final_weights_.shape[1]
        if self.final_weights_.shape[0] != self.conv_width_ or cols != (self.m if self.final == "relu" else self.m // 2):
            raise ValueError(f"random CNN: final weights of shape {self.final_weights_.shape} do not fit m={self.m}")

    def export_spec(self, arrays: dict, prefix: str = "features") -> dict:
        """Settings for the exported ``predict.py`` (:mod:`classmap_gui.core.export.folder`); its arrays go into
        ``arrays`` under ``prefix``."""
        for i, f in enumerate(self.filters_):
            arrays[f"{prefix}.filters.{i}"] = np.asarray(f, np.float32)
        arrays[f"{prefix}.final_weights"] = np.asarray(self.final_weights_, np.float32)
        arrays[f"{prefix}.final_bias"] = np.asarray(self.final_bias_, np.float32)
        return {"type": "cnn", "m": int(self.m), "depth": int(self.depth), "kernel_size": int(self.kernel_size),
                "pool": int(self.pool), "final": str(self.final), "normalize": bool(self.normalize)}

    @staticmethod
    def memory_plan(params: dict, n_images: int, image_shape: tuple[int, ...]) -> MemoryPlan:
        """What training will hold (:class:`~classmap_gui.core.guards.limits.MemoryPlan`), from the parameters as given
        (``"auto"`` planned at its largest) and one image's shape."""
        m, pixels = planned_size(params, "m", 1000), math.prod(image_shape)
        return MemoryPlan(width=2 * m, own_floats=m * pixels, budgets=(
            ("--set m", 2 * n_images * m * 4, f"{n_images} feature vectors of {2 * m} values")))
