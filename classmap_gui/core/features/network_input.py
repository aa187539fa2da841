"""What a trained feature network reads: grey crops standardised per image, or a whole frame normalised
locally.

One function shared by the training command (PyTorch) and the run-time transformer (ONNX), so the
network sees the same numbers in both. Per-image standardisation (zero mean, unit spread) takes the
crop's brightness and contrast out before the first convolution: the varied style's light and
background contrast span ~3x, and a network that must learn that invariance from data spends capacity
on it.

:func:`local_contrast` is the window network's input (:mod:`.network`, ``dense`` networks): each pixel's
distance from its neighbourhood's mean in units of the neighbourhood's spread (a Gaussian of
:data:`LCN_SIGMA` pixels at the network's scale). It depends on a pixel's surroundings only, not on which
crop it sits in, so one normalised pyramid level serves every window of that level, and a window cropped
with its context margin reads the same numbers away from the crop's edge.

numpy and OpenCV only: the exported ``predict.py`` inlines this module.
"""
from __future__ import annotations

import cv2
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


#: the window network's geometry (pixels at the network's scale): a window's side, the trunk's cell (the step
#: between windows) and the context read around a window (a crop is the window plus this margin each side)
WINDOW, STRIDE, CONTEXT = 64, 8, 16
CROP = WINDOW + 2 * CONTEXT

#: the neighbourhood of local contrast normalisation: a Gaussian's sigma in pixels of the network's input
#: (a window is 64 pixels there: about a finger's width)
LCN_SIGMA = 6.0


def local_contrast(images, sigma: float = LCN_SIGMA) -> np.ndarray:
    """uint8 ``(n, h, w)`` grey (or one ``(h, w)`` frame) -> float32 ``(n, 1, h, w)``: ``(x - mean) /
    max(spread, MIN_SPREAD)`` with mean and spread over a Gaussian neighbourhood of ``sigma`` pixels
    (OpenCV's reflected border). The same function for a training crop, a frame's pyramid level and
    the exported predictor."""
    x = np.asarray(images)
    if x.ndim == 2:
        x = x[None]
    if x.ndim != 3:
        raise ValueError(f"local contrast expects grey images (n, h, w), got shape {np.shape(images)}")
    out = np.empty((len(x), 1, *x.shape[1:]), np.float32)
    k = int(2 * round(3 * sigma) + 1)
    for i, im in enumerate(x):
        f = im.astype(np.float32) * np.float32(1.0 / 255.0)
        m = cv2.GaussianBlur(f, (k, k), sigma)
        f -= m
        v = cv2.GaussianBlur(f * f, (k, k), sigma)
        np.sqrt(v, out=v)
        np.maximum(v, np.float32(4 * MIN_SPREAD), out=v)
        np.divide(f, v, out=out[i, 0])
    return out


def window_input(crops) -> tuple[np.ndarray, int]:
    """What a window network reads for uint8 crops ``(n, CROP, CROP)`` (a window with its context): each crop
    padded by another :data:`CONTEXT` (reflected, as a frame's pyramid level is padded), then
    :func:`local_contrast`; and the cell of the network's output grid that is the crop's window. The padding makes
    a crop's window read what the same window reads inside a frame's pass (cosine similarity ~0.995 against
    ~0.92 with the network's own zero padding past the crop), so a bank trained on crops classifies a frame's
    windows as it classifies crops."""
    x = np.asarray(crops)
    if x.ndim == 4 and x.shape[-1] == 3:   # colour crops read as grey, as standardise reads them
        x = np.stack([cv2.cvtColor(np.ascontiguousarray(im), cv2.COLOR_RGB2GRAY) for im in x])
    padded = np.stack([cv2.copyMakeBorder(im, CONTEXT, CONTEXT, CONTEXT, CONTEXT, cv2.BORDER_REFLECT) for im in x]) \
        if len(x) else np.zeros((0, x.shape[1] + 2 * CONTEXT, x.shape[2] + 2 * CONTEXT), np.uint8)
    return local_contrast(padded), 2 * CONTEXT // STRIDE


__all__ = ["CONTEXT", "CROP", "LCN_SIGMA", "STRIDE", "WINDOW", "window_input", "MIN_SPREAD", "local_contrast", "standardise"]
