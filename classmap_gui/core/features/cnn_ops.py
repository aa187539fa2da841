"""The random CNN's forward pass in plain numpy: the one implementation the app and predict.py run.

numpy only: :mod:`classmap_gui.core.export.predictor` inlines this module into the standalone ``predict.py``.
Convolutions are ``sliding_window_view`` + one float32 GEMM per block and batch of images (im2col).
"""
from __future__ import annotations

import numpy as np

from ..guards.read_limits import checked_array


def conv_blocks(X: np.ndarray, filters, kernel_size: int, pool: int, normalize: bool) -> np.ndarray:
    """``len(filters)`` x (k x k valid convolution, ReLU, max-pool) on ``X (b, h, w, c) float32``.

    ``filters[l]``: ``(c_l * k * k, c_{l+1}) float32`` in (channel, ky, kx) row order. Returns
    ``(b, D) float32``, rows scaled to unit L2 norm when ``normalize``.
    """
    k, p = kernel_size, pool
    for Wl in filters:
        b, h, w, c = X.shape
        ho, wo = h - k + 1, w - k + 1
        # (b, ho, wo, c, k, k) view -> (b*ho*wo, c*k*k) copy in the filter's (c, ky, kx) order
        cols = np.lib.stride_tricks.sliding_window_view(X, (k, k), axis=(1, 2)).reshape(b * ho * wo, c * k * k)
        Y = (cols @ Wl).reshape(b, ho, wo, Wl.shape[1])
        np.maximum(Y, 0, out=Y)
        if p > 1:
            hp, wp = ho // p, wo // p
            Y = Y[:, :hp * p, :wp * p].reshape(b, hp, p, wp, p, -1).max(axis=(2, 4))
        X = Y
    H = np.ascontiguousarray(X.reshape(len(X), -1))
    if normalize:
        H /= np.maximum(np.linalg.norm(H, axis=1, keepdims=True), np.float32(1e-12))
    return H


def final_layer(H: np.ndarray, weights: np.ndarray, bias: np.ndarray, m: int, final: str) -> np.ndarray:
    """The random last layer to ``m`` outputs, ``(b, m) float32``.

    ``"relu"``: ``sqrt(2/m) relu(H W + bias)``; ``"rff"``: ``[cos HW, sin HW] / sqrt(m/2)`` (a zero
    column when ``m`` is odd).
    """
    Z = H @ weights
    if final == "relu":
        Z += bias
        np.maximum(Z, 0, out=Z)
        Z *= np.float32(np.sqrt(2.0 / m))
        return Z
    half = m // 2
    out = np.zeros((len(H), m), np.float32)
    np.cos(Z, out=out[:, :half])
    np.sin(Z, out=out[:, half:2 * half])
    out *= np.float32(1.0 / np.sqrt(half))
    return out


def cnn_features(X: np.ndarray, spec: dict, arrays: dict, prefix: str = "features") -> np.ndarray:
    """A fixed random CNN as the exported predict.py computes it: depth x (k x k valid convolution as one GEMM,
    ReLU, max-pool), then a random final layer (ReLU, or cos/sin random Fourier features) to ``m`` outputs."""
    X = (X[..., None] if X.ndim == 3 else X).astype(np.float32) / np.float32(255.0)
    filters = [arrays[f"{prefix}.filters.{level}"] for level in range(spec["depth"])]
    H = conv_blocks(X, filters, spec["kernel_size"], spec["pool"], spec["normalize"])
    return final_layer(H, arrays[f"{prefix}.final_weights"], arrays[f"{prefix}.final_bias"], spec["m"], spec["final"])


def check_cnn_spec(spec: dict, arrays: dict, prefix: str, n_classes: int) -> None:
    """A filter matrix per block and the final layer's weights."""
    for level in range(spec["depth"]):
        checked_array(arrays, f"{prefix}.filters.{level}", (None, None))
    checked_array(arrays, f"{prefix}.final_weights", (None, None))
