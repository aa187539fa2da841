"""The pixel feature map as the exported predict.py computes and checks it (numpy and OpenCV only:
:mod:`classmap_gui.core.export.predictor` inlines this module, named by :class:`.pixels.PixelFeatures`'s ``exports``)."""
from __future__ import annotations

import cv2
import numpy as np

from ..guards.read_limits import MAX_IMAGE_SIDE, SettingError, checked_array
from ..image_ops import grey_stack


def pixel_features(X: np.ndarray, spec: dict, arrays: dict, prefix: str = "features") -> np.ndarray:
    """The pixels (resized, grey, standardised as the model says), scaled to [0, 1], ``(n, D)`` float32."""
    if spec["size"] is not None:
        th, tw = spec["size"]
        h, w = X.shape[1:3]
        if (h, w) != (th, tw):
            interp = cv2.INTER_AREA if th <= h and tw <= w else cv2.INTER_LINEAR
            X = np.stack([cv2.resize(np.ascontiguousarray(x), (tw, th), interpolation=interp) for x in X])
    if spec["grey"] and X.ndim == 4:
        X = grey_stack(X)
    out = X.reshape(len(X), -1).astype(np.float32)
    out *= np.float32(1.0 / 255.0)
    if spec["standardize"]:
        out -= arrays[f"{prefix}.mean"]
        out /= arrays[f"{prefix}.scale"]
    return out


def check_pixels_spec(spec: dict, arrays: dict, prefix: str, n_classes: int) -> None:
    """The size is null or an image size; a standardising model has its mean and a positive scale per feature."""
    size = spec.get("size")
    if size is not None and not (isinstance(size, list) and len(size) == 2 and all(
            isinstance(s, int) and not isinstance(s, bool) and 1 <= s <= MAX_IMAGE_SIDE for s in size)):
        raise SettingError(f"{prefix}.size must be null or two whole numbers from 1 to {MAX_IMAGE_SIDE}")
    if spec.get("standardize"):
        mean = checked_array(arrays, f"{prefix}.mean", (None,))
        if np.any(checked_array(arrays, f"{prefix}.scale", (len(mean),)) <= 0):
            raise SettingError(f"{prefix}.scale holds values at or below 0")
