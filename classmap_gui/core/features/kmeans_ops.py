"""The k-means encoder's numpy steps: patch normalisation and whitening, triangle code, quadrant pooling.

numpy only: the app's k-means features use these (the compiled kernels replace only the pooling
pass), and :mod:`classmap_gui.core.export.predictor` inlines this module into the standalone ``predict.py``.
"""
from __future__ import annotations

import numpy as np

from ..guards.read_limits import SettingError, checked_array


def normalise_patches(X: np.ndarray, norm_eps: float) -> np.ndarray:
    """Per-patch brightness/contrast normalisation of float32 rows ``(R, D)``, in place; returns ``X``."""
    X -= X.mean(axis=1, keepdims=True, dtype=np.float32)
    var = np.einsum("ij,ij->i", X, X) / np.float32(X.shape[1])
    X /= np.sqrt(var + np.float32(norm_eps))[:, None]
    return X


def whitened_patches(imgs: np.ndarray, patch: int, stride: int, mean: np.ndarray, whitening: np.ndarray,
                     norm_eps: float) -> np.ndarray:
    """``(B, h, w, c) uint8`` -> ``(B * positions, D) float32`` normalised, centred, whitened patches.

    Positions are row-major on a grid of step ``stride``; a patch vector is ordered (row, column, channel).
    """
    p, s = patch, stride
    win = np.lib.stride_tricks.sliding_window_view(imgs, (p, p), axis=(1, 2))[:, ::s, ::s]
    # (B, n_h, n_w, c, p, p) -> rows ordered (row, column, channel) like the training patches
    X = np.ascontiguousarray(win.transpose(0, 1, 2, 4, 5, 3), dtype=np.float32).reshape(-1, mean.shape[0])
    normalise_patches(X, norm_eps)
    X -= mean
    return X @ whitening


def quadrant_ids(n_pos, n_w, half_h, half_w):
    """``(n_pos,)`` quadrant (0 TL, 1 TR, 2 BL, 3 BR) of each patch position, row-major."""
    pos = np.arange(n_pos)
    i, j = pos // n_w, pos % n_w
    return (2 * (i >= half_h) + (j >= half_w)).astype(np.intp)


def pool_numpy(G, xx, cc, row0, n_pos, n_w, half_h, half_w, out, encoder="triangle"):
    """Encode one block of patches and add the codes into their image quadrants, in place.

    G (R, K) float32: ``-2 x.c`` per patch row and centroid (overwritten); xx (R,) squared patch norms;
    cc (K,) squared centroid norms; row0: index of G's first row among the chunk's patches (image-major,
    then row-major positions); out (images, 4, K) float32 accumulates. ``encoder``: ``"triangle"``
    (``max(0, mean(z) - z_k)`` of the distances z) or ``"hard"`` (1 for the nearest centroid).
    The compiled kernels in ``kmeans_kernels`` do the same in one pass."""
    R, K = G.shape
    g = np.arange(row0, row0 + R)
    img, pos = g // n_pos, g % n_pos
    q = quadrant_ids(n_pos, n_w, half_h, half_w)[pos]
    if encoder == "hard":
        best = np.argmin(G + cc, axis=1)
        np.add.at(out, (img, q, best), 1.0)
        return
    G += xx[:, None]
    G += cc
    np.maximum(G, 0, out=G)
    np.sqrt(G, out=G)
    mu = G.mean(axis=1, dtype=np.float32)
    np.subtract(mu[:, None], G, out=G)
    np.maximum(G, 0, out=G)
    # rows are image-major and each image's rows are contiguous: sum per (image, quadrant) group
    key = img * 4 + q
    order = np.argsort(key, kind="stable")
    keys, starts = np.unique(key[order], return_index=True)
    sums = np.add.reduceat(G[order], starts, axis=0)
    flat = out.reshape(-1, K)
    flat[keys] += sums


_GREY_WEIGHTS = np.array([0.299, 0.587, 0.114], dtype=np.float32)


def kmeans_features(X: np.ndarray, spec: dict, arrays: dict, prefix: str = "features") -> np.ndarray:
    """Coates et al. single-layer features as the exported predict.py computes them: normalised, whitened
    patches -> triangle (or hard) code -> sum over the 4 image quadrants -> ``(n, 4K)`` float32."""
    p, s, c = spec["patch_size"], spec["stride"], spec["n_channels"]
    if X.ndim == 4 and c == 1:
        X = np.clip(np.rint(X.astype(np.float32) @ _GREY_WEIGHTS), 0, 255).astype(np.uint8)
    if X.ndim == 3:
        X = X[..., None]
        if c == 3:
            X = np.repeat(X, 3, axis=3)
    mean, W, C = arrays[f"{prefix}.mean"], arrays[f"{prefix}.whitening"], arrays[f"{prefix}.centroids"]
    K = C.shape[0]
    ct = np.ascontiguousarray(-2.0 * C.T, dtype=np.float32)
    cc = np.einsum("ij,ij->i", C, C).astype(np.float32)
    n, h, w = X.shape[:3]
    n_h, n_w = (h - p) // s + 1, (w - p) // s + 1
    out = np.zeros((n, 4, K), np.float32)
    step = max(1, 8192 // (n_h * n_w))
    for a in range(0, n, step):  # chunks of images keep the (patches, K) matrix small
        P = whitened_patches(X[a:a + step], p, s, mean, W, spec["norm_eps"])
        xx = np.einsum("ij,ij->i", P, P)
        pool_numpy(P @ ct, xx, cc, 0, n_h * n_w, n_w, (n_h + 1) // 2, (n_w + 1) // 2, out[a:a + step],
                   encoder=spec["encoder"])
    F = out.reshape(n, 4 * K)
    if spec["hellinger"]:
        np.sqrt(F, out=F)
    return F


def check_kmeans_spec(spec: dict, arrays: dict, prefix: str, n_classes: int) -> None:
    """One or three channels; the mean, whitening and centroids fit the patch size."""
    if spec.get("n_channels") not in (1, 3):
        raise SettingError(f"{prefix}.n_channels must be 1 or 3")
    dim = spec["patch_size"] ** 2 * spec["n_channels"]
    checked_array(arrays, f"{prefix}.mean", (dim,))
    checked_array(arrays, f"{prefix}.whitening", (dim, dim))
    checked_array(arrays, f"{prefix}.centroids", (None, dim))
