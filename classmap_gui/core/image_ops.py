"""Image conversions every part shares, numpy + OpenCV only (``predict.py`` inlines this module):
bringing one image to a model's size and colour, and a stack of colour images to grey.

One place, so the app, the feature maps, the image sets and an exported ``predict.py`` convert
pixels identically (OpenCV's ITU-R 601 grey weights, area averaging when shrinking).
"""
from __future__ import annotations

import cv2
import numpy as np


def fit_size(img: np.ndarray, size) -> np.ndarray:
    """``img`` resized to ``size`` (h, w): area averaging when shrinking, linear when growing;
    unchanged when ``size`` is None or already its size."""
    if size is None:
        return img
    h, w = int(size[0]), int(size[1])
    if img.shape[:2] == (h, w):
        return img
    shrink = img.shape[0] * img.shape[1] > h * w
    return cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)


def conform(img: np.ndarray, grey: bool) -> np.ndarray:
    """One uint8 image ``(h, w)``, ``(h, w, 1)``, ``(h, w, 3)`` RGB or ``(h, w, 4)`` RGBA as grey
    ``(h, w)`` when ``grey``, else RGB ``(h, w, 3)``."""
    if img.ndim == 3 and img.shape[2] == 4:
        img = cv2.cvtColor(img, cv2.COLOR_RGBA2RGB)
    if img.ndim == 3 and img.shape[2] == 1:
        img = img[:, :, 0]
    if grey and img.ndim == 3:
        return cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)
    if not grey and img.ndim == 2:
        return cv2.cvtColor(img, cv2.COLOR_GRAY2RGB)
    return img


def grey_stack(X: np.ndarray) -> np.ndarray:
    """``(n, h, w, 3)`` uint8 RGB -> ``(n, h, w)`` grey in one OpenCV call (the stack seen as one tall
    picture: no Python loop over images)."""
    n, h, w = X.shape[:3]
    if n == 0:
        return np.zeros((0, h, w), X.dtype)
    return cv2.cvtColor(np.ascontiguousarray(X).reshape(n * h, w, 3), cv2.COLOR_RGB2GRAY).reshape(n, h, w)
