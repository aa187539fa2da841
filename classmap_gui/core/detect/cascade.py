"""The cascade's pieces (a crop network whose windows a HOG hand detector picks, :class:`.scanner.Scanner`):
the detector's window HOG from the model's saved settings, and a window's pixels cropped as the pyramid shrank them."""
from __future__ import annotations

import cv2
import numpy as np

from ..errors import ModelFormatError
from .dense_hog import HOG_SETTINGS


def finder_hog(spec, image_size):
    """The cascade's window HOG (:class:`~..features.hog.HOGFeatures`, fitted to the model's crop size) from
    ``metadata["detection"]["finder"]`` (``{"hog": its parameters}``)."""
    from ..features.hog import HOGFeatures

    try:
        params = {k: spec["hog"][k] for k in HOG_SETTINGS}
        hog = HOGFeatures(**params)
        return hog.fit(np.zeros((1, *(int(v) for v in image_size)), np.uint8))
    except (KeyError, TypeError, ValueError) as e:
        raise ModelFormatError(f"model metadata: detection.finder is malformed ({e})") from None


def window_crop(grey: np.ndarray, box, size: tuple[int, int]) -> np.ndarray:
    """The frame pixels of a window ``box`` (x, y, w, h) shrunk to ``size`` (h, w), as the pyramid's level
    shrank them (area averaging); a box over the frame's edge is padded by replicating the edge."""
    x, y, w, h = (int(round(float(v))) for v in box[:4])
    H, W = grey.shape
    if x < 0 or y < 0 or x + w > W or y + h > H:
        pad = max(0, -x, -y, x + w - W, y + h - H)
        grey = cv2.copyMakeBorder(grey, pad, pad, pad, pad, cv2.BORDER_REPLICATE)
        x, y = x + pad, y + pad
    return cv2.resize(grey[y:y + h, x:x + w], (size[1], size[0]), interpolation=cv2.INTER_AREA)


__all__ = ["finder_hog", "window_crop"]
