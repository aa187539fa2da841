"""``pixels+hog``: HOG with a small grey thumbnail of the image beside it.

HOG keeps edge orientations and throws away where the image is bright or dark; a hand in front of
a light wall and one in front of a dark sleeve give the same gradients. A standardised 8x8 grey
thumbnail (64 values) puts that coarse layout back for the price of a resize. Nothing is learned but
the thumbnail's per-pixel mean and scale. Exported as its two parts side by side (``"concat"``).
"""
from __future__ import annotations

from numbers import Integral

import numpy as np

from ..guards.constraints import Interval
from ..errors import NotFittedError
from ..progress import ProgressFn, StopFn
from .concat_ops import check_concat_spec, concat_features
from .hog import HOGFeatures
from .pixels import PixelFeatures


class PixelsHOGFeatures(HOGFeatures):
    """Features ``[thumbnail pixels (standardised), HOG]``, ``(n, thumbnail**2 + D_hog) float32``.

    Parameters: ``thumbnail`` side of the grey thumbnail; the others are :class:`~.hog.HOGFeatures`'s.
    Learned: ``pixels_`` (the fitted :class:`~.pixels.PixelFeatures` of the thumbnail).
    """

    #: ``{spec type: {"keys": the settings export_spec writes (predict.py requires each), "features": the
    #: numpy code predict.py runs, "check": its check}}`` (read by :mod:`classmap_gui.core.export.predictor`)
    exports = {"concat": {"keys": ("parts",),
                       "features": concat_features, "check": check_concat_spec}}

    _parameter_constraints: dict = {"thumbnail": [Interval(Integral, 1, 64, closed="both")],
                                    **HOGFeatures._parameter_constraints}

    def __init__(self, thumbnail: int = 8, cell_size: int = 8, block_size: int = 16, block_stride: int = 8,
                 n_bins: int = 9, signed: bool = False, backend: str = "auto", n_jobs: int | None = 1):
        super().__init__(cell_size, block_size, block_stride, n_bins, signed, backend, n_jobs)
        self.thumbnail = thumbnail

    def fit(self, X, y=None, *, progress: ProgressFn = None, should_stop: StopFn = None) -> "PixelsHOGFeatures":
        """Fit the thumbnail's standardisation on uint8 images ``X (n, h, w[, 3])`` (HOG learns nothing)."""
        side = int(self.thumbnail)
        self.pixels_ = PixelFeatures(size=(side, side), grey=True, standardize=True).fit(X, should_stop=should_stop)
        return super().fit(X, progress=progress, should_stop=should_stop)

    def transform(self, X, *, progress: ProgressFn = None, should_stop: StopFn = None) -> np.ndarray:
        """``(n, thumbnail**2 + D_hog) float32``: the standardised thumbnail, then HOG."""
        if getattr(self, "pixels_", None) is None:
            raise NotFittedError("pixels+hog features are not fitted: call fit(images) first")
        hog = super().transform(X, progress=progress, should_stop=should_stop)
        return np.hstack([self.pixels_.transform(X, should_stop=should_stop), hog]).astype(np.float32)

    def export_spec(self, arrays: dict, prefix: str = "features") -> dict:
        """Settings for the exported ``predict.py``: the two parts side by side, arrays under ``prefix.0/1``."""
        return {"type": "concat", "parts": [self.pixels_.export_spec(arrays, f"{prefix}.0"),
                                            super().export_spec(arrays, f"{prefix}.1")]}

    def validate_state(self) -> None:
        if not isinstance(self.pixels_, PixelFeatures):
            raise ValueError("pixels+hog needs its fitted thumbnail (pixels_)")
