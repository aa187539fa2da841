"""Raw pixels as features: the simplest baseline, and the input of the random-feature maps.

Images are resized (OpenCV ``INTER_AREA``), optionally made grey, scaled to [0, 1] and flattened;
optionally each feature is standardised with the mean and spread learned in ``fit``
(``sklearn.preprocessing.StandardScaler``'s arithmetic, kept as float32 arrays).

Resizing is one ``cv2.resize`` per image (measured faster than batching images as channels, see
:func:`resize_batch`).
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from ..guards.constraints import ImageSize, validate_params
from ..errors import DataError, NotFittedError
from ..image_ops import grey_stack
from ..progress import ProgressFn, StopFn, check_stop, report
from .pixels_ops import check_pixels_spec, pixel_features


def resize_batch(images: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Resize uint8 ``(n, h, w)`` or ``(n, h, w, c)`` images to ``size`` (h, w) with ``INTER_AREA``
    (``INTER_LINEAR`` when enlarging); same dtype and layout out.

    One ``cv2.resize`` per image into a preallocated array: 2-3x faster than stacking 512 images as
    the channels of one OpenCV call, which also rounds differently from the per-image result at some
    ratios.
    """
    import cv2

    n, h, w = images.shape[:3]
    th, tw = int(size[0]), int(size[1])
    if (h, w) == (th, tw):
        return images
    interp = cv2.INTER_AREA if th <= h and tw <= w else cv2.INTER_LINEAR
    out = np.empty((n, th, tw) + images.shape[3:], images.dtype)
    for i in range(n):
        out[i] = cv2.resize(images[i], (tw, th), interpolation=interp)
    return out


class PixelFeatures(TransformerMixin, BaseEstimator):
    """Pixels as features: uint8 ``(n, h, w)`` or ``(n, h, w, 3)`` -> ``(n, D)`` float32 in [0, 1].

    Parameters
    ----------
    size : tuple of int or None, default=None
        (h, w) to resize to first, or None to keep the images' size.
    grey : bool, default=False
        Convert colour images to grey (BT.601, as OpenCV) before flattening.
    standardize : bool, default=False
        Subtract each feature's training mean and divide by its training standard deviation (a feature
        constant in training is only centred).

    Attributes
    ----------
    image_shape_ : tuple of int
        The shape of one image after resizing and colour conversion.
    n_features_out_ : int
        D = h * w (times 3 for colour kept).
    mean_ : ndarray of shape (D,), float32
        With ``standardize``: the training mean; ``scale_`` the standard deviation.

    Examples
    --------
    >>> import numpy as np
    >>> from classmap_gui.core.features import PixelFeatures
    >>> images = np.full((2, 8, 8), 255, np.uint8)
    >>> X = PixelFeatures().fit(images).transform(images)
    >>> X.shape, X.dtype, float(X.max())
    ((2, 64), dtype('float32'), 1.0)
    """

    #: ``{spec type: {"keys": the settings export_spec writes (predict.py requires each), "features": the
    #: numpy code predict.py runs, "check": its check}}`` (read by :mod:`classmap_gui.core.export.predictor`)
    exports = {"pixels": {"keys": ("size", "grey", "standardize"),
                       "features": pixel_features, "check": check_pixels_spec}}

    _parameter_constraints: dict = {"size": [ImageSize(), None], "grey": ["boolean"], "standardize": ["boolean"]}

    def __init__(self, size: tuple[int, int] | list[int] | None = None, grey: bool = False, standardize: bool = False):
        self.size = size
        self.grey = grey
        self.standardize = standardize

    def _prepare(self, X) -> np.ndarray:
        X = np.asarray(X)
        if X.dtype != np.uint8:
            raise DataError(f"pixel features need uint8 images, got {X.dtype}")
        if X.ndim not in (3, 4) or (X.ndim == 4 and X.shape[3] != 3):
            raise DataError(f"pixel features need images (n, h, w) or (n, h, w, 3), got shape {X.shape}")
        validate_params(self)
        if self.size is not None:
            X = resize_batch(X, (int(self.size[0]), int(self.size[1])))
        if self.grey and X.ndim == 4 and len(X):
            X = grey_stack(X)
        elif self.grey and X.ndim == 4:
            X = X[..., 0]
        return X

    def fit(self, X, y=None, *, progress: ProgressFn = None, should_stop: StopFn = None) -> "PixelFeatures":
        """Record the image shape; with ``standardize``, learn per-feature mean and spread."""
        P = self._prepare(X)
        self.image_shape_ = [int(v) for v in P.shape[1:]]
        self.n_features_out_ = int(np.prod(self.image_shape_))
        if self.standardize:
            if len(P) == 0:
                raise DataError("pixel features: standardize needs at least one training image")
            mean = np.zeros(self.n_features_out_, np.float64)
            sq = np.zeros(self.n_features_out_, np.float64)
            step = 4096
            for a in range(0, len(P), step):  # chunks keep the float copy small
                check_stop(should_stop)
                F = P[a:a + step].reshape(min(step, len(P) - a), -1).astype(np.float64) / 255.0
                mean += F.sum(0)
                sq += (F * F).sum(0)
                report(progress, min(1.0, (a + step) / len(P)), "pixel statistics")
            mean /= len(P)
            var = np.maximum(sq / len(P) - mean * mean, 0.0)
            std = np.sqrt(var)
            std[std < 1e-8] = 1.0
            self.mean_ = mean.astype(np.float32)
            self.scale_ = std.astype(np.float32)
        report(progress, 1.0, "pixel features")
        return self

    def transform(self, X, *, progress: ProgressFn = None, should_stop: StopFn = None) -> np.ndarray:
        """Pixels ``(n, D)`` float32: values in [0, 1], or standardised when so fitted."""
        if self.standardize and not hasattr(self, "mean_"):
            raise NotFittedError("PixelFeatures(standardize=True) must be fitted before transform")
        check_stop(should_stop)
        P = self._prepare(X)
        if hasattr(self, "image_shape_") and list(P.shape[1:]) != list(self.image_shape_):
            raise DataError(f"pixel features were fitted on images of shape {tuple(self.image_shape_)}, "
                            f"got {tuple(P.shape[1:])}; set size= or bring the images to that size")
        out = P.reshape(len(P), -1).astype(np.float32)
        out *= np.float32(1.0 / 255.0)
        if self.standardize:
            out -= self.mean_
            out /= self.scale_
        report(progress, 1.0, "pixel features")
        return out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = bool(self.standardize)
        return tags

    def export_spec(self, arrays: dict, prefix: str = "features") -> dict:
        """Settings for the exported ``predict.py`` (:mod:`classmap_gui.core.export.folder`); its arrays go into
        ``arrays`` under ``prefix``."""
        if self.standardize:
            arrays[f"{prefix}.mean"] = np.asarray(self.mean_, np.float32)
            arrays[f"{prefix}.scale"] = np.asarray(self.scale_, np.float32)
        size = None if self.size is None else [int(self.size[0]), int(self.size[1])]
        return {"type": "pixels", "size": size, "grey": bool(self.grey), "standardize": bool(self.standardize)}
