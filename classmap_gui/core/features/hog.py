"""Histogram of oriented gradients (Dalal & Triggs 2005) as a scikit-learn transformer.

The paper's hand features were HOG. The descriptor is OpenCV's ``cv2.HOGDescriptor`` exactly:
``[-1, 0, 1]`` gradients (reflect-101 border), orientation votes split linearly between the two nearest
of ``n_bins`` bins, each block's pixels weighted by a Gaussian (sigma = block/4, centred as OpenCV) and
split bilinearly between the block's cells, blocks in column-major order, L2-Hys normalisation
(``v / (|v| + 0.1 len(v))``, clip at 0.2, ``v / (|v| + 1e-3)``).

Two back-ends compute the same numbers (to within OpenCV's fast ``atan`` approximation:
:data:`.hog_ops.HOG_TOLERANCE`, 1e-3 per feature):

- ``opencv``: a Python loop over images calling ``HOGDescriptor.compute`` (the loop is per image, the
  work inside is C++).
- ``numpy``: the whole chunk at once. Votes are scattered into a dense ``(n, h, bins, w)`` map; the
  Gaussian-and-bilinear block weights are separable, so block histograms are two GEMMs with banded
  weight matrices ``(w, blocks_x * cells_x)`` and ``(h, blocks_y * cells_y)`` — no loop over pixels,
  cells or blocks, and no copy of overlapping block windows.

OpenCV is about 5x faster than the numpy path on 64x64 grey images with the defaults (the scatter
into the dense vote map and the skinny GEMMs are memory-bound). So
``backend="auto"`` (and ``"opencv"``) use OpenCV and fall back to numpy where ``HOGDescriptor`` is
missing (OpenCV 5 drops it): :func:`.hog_ops.hog_backend`, which the exported predict.py runs too, as
it runs the numpy path of :mod:`.hog_ops`; the tests hold the two equal within the tolerance.
"""
from __future__ import annotations

from contextlib import nullcontext
from numbers import Integral

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import BaseEstimator, TransformerMixin

from ..guards.constraints import Interval, StrOptions, validate_params
from ..errors import ConfigError, DataError
from ..image_ops import grey_stack
from ..progress import ProgressFn, StopFn, check_stop, report
from ..timing import blas_limit
from .hog_ops import axis_weights, check_hog_spec, hog_backend, hog_descriptor, hog_features, hog_numpy

_CHUNK_BYTES = 1 << 23  # dense vote map per task (~8 MB): ~50 images at 64x64x9


def _as_grey_batch(X) -> np.ndarray:
    """uint8 ``(n, h, w)`` or ``(n, h, w, 3)`` RGB -> ``(n, h, w)`` uint8 grey (BT.601, as OpenCV)."""
    X = np.asarray(X)
    if X.dtype != np.uint8:
        raise DataError(f"HOG features need uint8 images, got {X.dtype}")
    if X.ndim == 4 and X.shape[3] == 3:
        return grey_stack(X)
    if X.ndim != 3:
        raise DataError(f"HOG features need images (n, h, w) or (n, h, w, 3), got shape {X.shape}")
    return X


class HOGFeatures(TransformerMixin, BaseEstimator):
    """HOG descriptor of each image: uint8 ``(n, h, w)`` or ``(n, h, w, 3)`` -> ``(n, D)`` float32.

    Colour images are converted to grey first. The descriptor window is the whole image, centre-cropped to
    the largest size ``block_size + k * block_stride`` that fits. There is nothing to learn: ``fit``
    records the image size so that ``transform`` can refuse images of another size (their descriptor
    would have another length).

    Parameters
    ----------
    cell_size : int, default=8
        Side of a cell in pixels.
    block_size : int, default=16
        Side of a block in pixels, a multiple of ``cell_size``.
    block_stride : int, default=8
        Step between blocks in pixels.
    n_bins : int, default=9
        Orientation bins.
    signed : bool, default=False
        Orientations over 360 degrees instead of 180.
    backend : {"auto", "numpy", "opencv"}, default="auto"
        ``"auto"`` and ``"opencv"``: OpenCV's ``HOGDescriptor`` (measured fastest), numpy where this
        OpenCV has none (OpenCV 5); ``"numpy"``: always numpy.
    n_jobs : int or None, default=1
        Worker threads over image chunks (-1: all cores).

    Attributes
    ----------
    image_size_ : tuple of int
        (h, w) of the training images.
    n_features_out_ : int
        D: with the defaults a 64 x 64 image gives 7 x 7 blocks x 2 x 2 cells x 9 bins = 1764.

    Examples
    --------
    >>> import numpy as np
    >>> from classmap_gui.core.features import HOGFeatures
    >>> images = np.random.default_rng(0).integers(0, 256, (4, 64, 64), dtype=np.uint8)
    >>> HOGFeatures().fit(images).transform(images).shape
    (4, 1764)
    """

    #: ``{spec type: {"keys": the settings export_spec writes (predict.py requires each), "features": the
    #: numpy code predict.py runs, "check": its check}}`` (read by :mod:`classmap_gui.core.export.predictor`)
    exports = {"hog": {"keys": ("cell_size", "block_size", "block_stride", "n_bins", "signed", "backend"),
                    "features": hog_features, "check": check_hog_spec}}

    _parameter_constraints: dict = {
        "cell_size": [Interval(Integral, 1, 256, closed="both")],
        "block_size": [Interval(Integral, 1, 512, closed="both")],
        "block_stride": [Interval(Integral, 1, 512, closed="both")],
        "n_bins": [Interval(Integral, 2, 360, closed="both")],
        "signed": ["boolean"],
        "backend": [StrOptions({"auto", "numpy", "opencv"})],
        "n_jobs": [Integral, None],
    }

    def __init__(self, cell_size: int = 8, block_size: int = 16, block_stride: int = 8, n_bins: int = 9,
                 signed: bool = False, backend: str = "auto", n_jobs: int | None = 1):
        self.cell_size = cell_size
        self.block_size = block_size
        self.block_stride = block_stride
        self.n_bins = n_bins
        self.signed = signed
        self.backend = backend
        self.n_jobs = n_jobs

    # ------------------------------------------------------------------ geometry
    def _check_geometry(self) -> None:
        """The parameters one by one (``_parameter_constraints``), then the rule between two of them."""
        validate_params(self)
        if self.block_size % self.cell_size:
            raise ConfigError(f"HOG block_size ({self.block_size}) must be a multiple of cell_size ({self.cell_size})")

    def window(self, h: int, w: int) -> tuple[int, int, int, int]:
        """(top, left, win_h, win_w): the centred window the descriptor covers in an h x w image."""
        b, s = self.block_size, self.block_stride
        if h < b or w < b:
            raise DataError(f"images of {h}x{w} pixels are smaller than one HOG block ({b}x{b}); "
                            f"resize them or choose a smaller block_size")
        wh, ww = b + (h - b) // s * s, b + (w - b) // s * s
        return (h - wh) // 2, (w - ww) // 2, wh, ww

    def n_features_for(self, h: int, w: int) -> int:
        """Descriptor length D for h x w images."""
        _, _, wh, ww = self.window(h, w)
        nby = (wh - self.block_size) // self.block_stride + 1
        nbx = (ww - self.block_size) // self.block_stride + 1
        return nby * nbx * (self.block_size // self.cell_size) ** 2 * self.n_bins

    # ------------------------------------------------------------------ estimator API
    def fit(self, X, y=None, *, progress: ProgressFn = None, should_stop: StopFn = None) -> "HOGFeatures":
        """Record the image size and descriptor length; HOG learns nothing from the data."""
        self._check_geometry()
        X = np.asarray(X)
        if X.ndim not in (3, 4):
            raise DataError(f"HOG features need images (n, h, w) or (n, h, w, 3), got shape {X.shape}")
        h, w = int(X.shape[1]), int(X.shape[2])
        self.image_size_ = [h, w]
        self.n_features_out_ = int(self.n_features_for(h, w))
        report(progress, 1.0, "HOG")
        return self

    def transform(self, X, *, progress: ProgressFn = None, should_stop: StopFn = None) -> np.ndarray:
        """HOG descriptors ``(n, D)`` float32 of uint8 images ``(n, h, w)`` or ``(n, h, w, 3)``."""
        self._check_geometry()
        G = _as_grey_batch(X)
        n, h, w = G.shape
        if hasattr(self, "image_size_") and [h, w] != list(self.image_size_):
            raise DataError(f"these HOG features were set up for {self.image_size_[0]}x{self.image_size_[1]} "
                            f"images, got {h}x{w}; bring the images to that size first")
        top, left, wh, ww = self.window(h, w)
        G = G[:, top:top + wh, left:left + ww]
        D = self.n_features_for(h, w)
        out = np.empty((n, D), np.float32)
        if n == 0:
            return out
        backend = hog_backend(self.backend)
        per_image = wh * ww * self.n_bins * 4 * 3
        chunk = max(1, min(n, _CHUNK_BYTES // per_image))
        starts = list(range(0, n, chunk))
        n_jobs = min(effective_n_jobs(self.n_jobs), len(starts))
        done = [0]

        if backend == "opencv":
            hog = hog_descriptor(wh, ww, self.block_size, self.block_stride, self.cell_size, self.n_bins,
                                 self.signed)
        else:
            Ax = axis_weights(ww, self.block_size, self.block_stride, self.cell_size)
            Ay = axis_weights(wh, self.block_size, self.block_stride, self.cell_size)

        def task(a: int) -> None:
            check_stop(should_stop)
            b = min(n, a + chunk)
            if backend == "opencv":
                for i in range(a, b):  # one C++ call per image: measured ~4x faster than the numpy path
                    out[i] = hog.compute(G[i]).reshape(-1)
            else:
                out[a:b] = hog_numpy(G[a:b], Ay, Ax, self.block_size, self.block_stride, self.cell_size,
                                      self.n_bins, self.signed)
            done[0] += b - a
            if n_jobs == 1:
                report(progress, done[0] / n, "HOG")

        # BLAS threads on the numpy path's skinny GEMMs only fight each other (measured 10x slower
        # under load); OpenCV's path uses no BLAS, so a single frame pays no limiter at all.
        with blas_limit(1) if backend == "numpy" else nullcontext():
            if n_jobs == 1:
                for a in starts:
                    task(a)
            else:
                Parallel(n_jobs=n_jobs, backend="threading")(delayed(task)(a) for a in starts)
        report(progress, 1.0, "HOG")
        return out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = False
        return tags

    def export_spec(self, arrays: dict, prefix: str = "features") -> dict:
        """Settings for the exported ``predict.py`` (:mod:`classmap_gui.core.export.folder`); its arrays go into
        ``arrays`` under ``prefix``. ``backend`` is the one the app runs here; predict.py falls back to
        numpy where its OpenCV has no ``HOGDescriptor``, as the app does."""
        backend = hog_backend(self.backend)
        return {"type": "hog", "cell_size": int(self.cell_size), "block_size": int(self.block_size),
                "block_stride": int(self.block_stride), "n_bins": int(self.n_bins), "signed": bool(self.signed),
                "backend": backend}
