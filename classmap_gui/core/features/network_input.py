"""What a trained feature network reads: grey crops standardised per image.

One function shared by the training command (PyTorch) and the run-time transformer (ONNX), so the
network sees the same numbers in both. Per-image standardisation (zero mean, unit spread) takes the
crop's brightness and contrast out before the first convolution: the varied style's light and
background contrast span ~3x, and a network that must learn that invariance from data spends capacity
on it.

numpy only: the exported ``predict.py`` inlines this module.
"""
from __future__ import annotations

import numpy as np

#: the smallest spread a crop is divided by (grey levels / 255): a flat crop stays flat, not noise x 10^6
MIN_SPREAD = 1.0 / 255.0


def standardise(images) -> np.ndarray:
    """uint8 ``(n, h, w)`` grey (or ``(n, h, w, 3)`` RGB, converted) -> float32 ``(n, 1, h, w)``, each crop
    with zero mean and unit standard deviation (at least :data:`MIN_SPREAD`)."""
    x = np.asarray(images)
    if x.ndim == 4 and x.shape[-1] == 3:
        x = x.astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)
    if x.ndim != 3:
        raise ValueError(f"network features expect grey images (n, h, w), got shape {np.shape(images)}")
    x = x.astype(np.float32) * np.float32(1.0 / 255.0)
    flat = x.reshape(len(x), -1)
    mean = flat.mean(axis=1, keepdims=True)
    std = np.maximum(flat.std(axis=1, keepdims=True), np.float32(MIN_SPREAD))
    flat -= mean
    flat /= std
    return x[:, None]


__all__ = ["MIN_SPREAD", "standardise"]
