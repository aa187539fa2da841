"""Decoding an image file's bytes to uint8 pixels, the same way in the app and in an exported
``predict.py`` (which inlines this module: numpy and OpenCV only).

OpenCV's 8-bit reads (``IMREAD_GRAYSCALE`` / ``IMREAD_COLOR``) return nothing for float TIFFs,
which are valid images; those are decoded as they are and brought to uint8 here (floats are read
as 0..1, OpenCV's convention for float images; 16/32-bit integers keep their top byte). The
caller checks the pixel count from the header (:mod:`.image_header`) before calling this.
"""
from __future__ import annotations

import cv2
import numpy as np


def to_uint8(img: np.ndarray) -> np.ndarray:
    """Pixels of any depth as uint8: floats as 0..1 (NaN as 0), 16-bit and wider integers by their top byte."""
    if img.dtype == np.uint8:
        return img
    if img.dtype.kind == "f":
        out = np.nan_to_num(img.astype(np.float32), nan=0.0, posinf=1.0, neginf=0.0)
        return np.clip(np.rint(out * 255.0), 0, 255).astype(np.uint8)
    if img.dtype.kind in "iu":
        shift = 8 * (img.dtype.itemsize - 1)
        return (np.clip(img, 0, None).astype(np.uint64) >> shift).astype(np.uint8)
    return img.astype(np.uint8)


def decode_pixels(data: bytes, grey: bool) -> np.ndarray | None:
    """uint8 ``(h, w)`` grey or ``(h, w, 3)`` RGB from an encoded image; None when OpenCV cannot decode it."""
    buf = np.frombuffer(data, np.uint8)
    img = cv2.imdecode(buf, cv2.IMREAD_GRAYSCALE if grey else cv2.IMREAD_COLOR)
    if img is None:  # float (and some wide integer) TIFFs: only an unchanged read decodes them
        img = cv2.imdecode(buf, cv2.IMREAD_UNCHANGED)
        if img is None or img.ndim not in (2, 3) or img.size == 0:
            return None
        img = to_uint8(img)
        if img.ndim == 3 and img.shape[2] == 1:
            img = img[:, :, 0]
        elif img.ndim == 3 and img.shape[2] == 4:
            img = cv2.cvtColor(img, cv2.COLOR_BGRA2BGR)
        elif img.ndim == 3 and img.shape[2] != 3:
            return None
        if grey and img.ndim == 3:
            img = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
        elif not grey and img.ndim == 2:
            img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    return img if grey else cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
