"""``pixels+hog``: HOG with a small grey thumbnail of the image beside it.

HOG keeps edge orientations and throws away where the image is bright or dark; a hand in front of
a light wall and one in front of a dark sleeve give the same gradients. A standardised 8x8 grey
thumbnail (64 values) puts that coarse layout back for the price of a resize. Nothing is learned but
the thumbnail's per-pixel mean and scale. Exported as its two parts side by side (``"concat"``).
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from ..errors import NotFittedError
from ..progress import ProgressFn, StopFn
from .hog import HOGFeatures
from .pixels import PixelFeatures


class PixelsHOGFeatures(TransformerMixin, BaseEstimator):
    """Features ``[thumbnail pixels (standardised), HOG]``, ``(n, thumbnail**2 + D_hog) float32``.

    Parameters: ``thumbnail`` side of the grey thumbnail; the others as :class:`~.hog.HOGFeatures`. Learned: ``pixels_`` (the
    fitted :class:`~.pixels.PixelFeatures`) and ``hog_`` (:class:`~.hog.HOGFeatures`).
    """

    def __init__(self, thumbnail: int = 8, cell_size: int = 8, block_size: int = 16, block_stride: int = 8,
                 n_bins: int = 9, signed: bool = False, backend: str = "auto", n_jobs: int | None = 1):
        self.thumbnail = thumbnail
        self.cell_size = cell_size
        self.block_size = block_size
        self.block_stride = block_stride
        self.n_bins = n_bins
        self.signed = signed
        self.backend = backend
        self.n_jobs = n_jobs

    def fit(self, X, y=None, *, progress: ProgressFn = None, should_stop: StopFn = None) -> "PixelsHOGFeatures":
        """Fit the thumbnail's standardisation on uint8 images ``X (n, h, w[, 3])`` (HOG learns nothing)."""
        side = int(self.thumbnail)
        self.pixels_ = PixelFeatures(size=(side, side), grey=True, standardize=True).fit(X, should_stop=should_stop)
        hog = {k: v for k, v in self.get_params(deep=False).items() if k != "thumbnail"}
        self.hog_ = HOGFeatures(**hog).fit(X, progress=progress, should_stop=should_stop)
        return self

    def transform(self, X, *, progress: ProgressFn = None, should_stop: StopFn = None) -> np.ndarray:
        """``(n, thumbnail**2 + D_hog) float32``: the standardised thumbnail, then HOG."""
        if getattr(self, "hog_", None) is None:
            raise NotFittedError("pixels+hog features are not fitted: call fit(images) first")
        thumb = self.pixels_.transform(X, should_stop=should_stop)
        return np.hstack([thumb, self.hog_.transform(X, progress=progress, should_stop=should_stop)]).astype(np.float32)

    def export_spec(self, arrays: dict, prefix: str = "features") -> dict:
        """Settings for the exported ``predict.py``: the two parts side by side, arrays under ``prefix.0/1``."""
        return {"type": "concat", "parts": [self.pixels_.export_spec(arrays, f"{prefix}.0"),
                                            self.hog_.export_spec(arrays, f"{prefix}.1")]}

    def _validate_state(self) -> None:
        if not isinstance(self.pixels_, PixelFeatures) or not isinstance(self.hog_, HOGFeatures):
            raise ValueError("pixels+hog needs its fitted pixels_ and hog_ parts")
