"""HOG for the app and the exported predict.py: OpenCV's ``HOGDescriptor`` where it exists, else plain numpy.

OpenCV 5 has no ``cv2.HOGDescriptor``. :func:`hog_backend` picks the back-end at run time, the same way
in the app (:mod:`.hog`) and in ``predict.py``: ``"opencv"`` (or ``"auto"``) runs ``HOGDescriptor``
when this OpenCV has it and :func:`hog_numpy` otherwise, so a model trained on OpenCV 4 runs on 5 and
the other way round. :func:`hog_numpy` is the same descriptor (gradients, votes, Gaussian block weights,
L2-Hys) in numpy alone.

Tolerance: the two differ only where ``HOGDescriptor`` takes angles with OpenCV's fast ``atan``
approximation and :func:`hog_numpy` with ``np.arctan2``: every feature within :data:`HOG_TOLERANCE`
(1e-3) of ``HOGDescriptor``'s (measured max 6.2e-4 on random, digit and demo-video hand images;
tests/core/features/test_hog_pixels.py holds it, and holds a trained model's predictions equal).

numpy and OpenCV only (no numba, no scikit-learn): :mod:`classmap_gui.core.export.predictor` inlines this module
into the standalone ``predict.py``, so the two cannot drift.
"""
from __future__ import annotations

import cv2
import numpy as np

from ..guards.read_limits import SettingError
from ..image_ops import grey_stack

#: max abs difference of any feature between :func:`hog_numpy` and ``cv2.HOGDescriptor`` (see the docstring)
HOG_TOLERANCE = 1e-3


def hog_backend(requested: str) -> str:
    """``"opencv"`` when ``requested`` is ``"opencv"`` or ``"auto"`` and this OpenCV has ``HOGDescriptor``
    (OpenCV 4), else ``"numpy"`` (OpenCV 5 dropped it; :func:`hog_numpy` gives the same numbers)."""
    return "opencv" if requested != "numpy" and hasattr(cv2, "HOGDescriptor") else "numpy"


def hog_descriptor(win_h: int, win_w: int, block: int, stride: int, cell: int, n_bins: int, signed: bool):
    """OpenCV's ``HOGDescriptor`` for a ``win_h x win_w`` window with the settings :func:`hog_numpy` reproduces
    (Gaussian sigma -1 = block/4, L2-Hys at 0.2, no gamma correction, 64 levels); OpenCV 4 only."""
    return cv2.HOGDescriptor((win_w, win_h), (block, block), (stride, stride), (cell, cell), int(n_bins), 1, -1.0,
                             0, 0.2, False, 64, bool(signed))


def axis_weights(length: int, block: int, stride: int, cell: int) -> np.ndarray:
    """Banded ``(length, n_blocks * cells_per_block)`` float32 matrix along one image axis.

    Entry (t, (k, c)) is the weight of pixel t in cell c of block k: OpenCV's Gaussian factor along
    this axis (sigma = block/4, centre at block/2) times the bilinear split between the block's cell
    centres. The 2-D block weight is the product of the two axes' factors.
    """
    ncb = block // cell
    nb = (length - block) // stride + 1
    sigma = (block + block) / 8.0
    t = np.arange(block, dtype=np.float64)
    g = np.exp(-((t - block / 2.0) ** 2) / (2.0 * sigma * sigma))
    pos = (t + 0.5) / cell - 0.5
    lin = np.clip(1.0 - np.abs(pos[:, None] - np.arange(ncb)[None, :]), 0.0, 1.0)  # (block, ncb)
    wb = g[:, None] * lin  # exp(-(dx^2 + dy^2) / 2s^2) = exp(-dx^2 / 2s^2) * exp(-dy^2 / 2s^2)
    M = np.zeros((length, nb, ncb), np.float64)
    k = np.arange(nb)
    M[(k[:, None] * stride + np.arange(block)[None, :]), k[:, None], :] = wb[None, :, :]
    return M.reshape(length, nb * ncb).astype(np.float32)


def hog_numpy(G: np.ndarray, Ay: np.ndarray, Ax: np.ndarray, block: int, stride: int, cell: int,
               n_bins: int, signed: bool) -> np.ndarray:
    """HOG of a chunk of grey uint8 images ``(m, h, w)`` (already cropped to the window) -> ``(m, D)``."""
    m, h, w = G.shape
    ncb = block // cell
    nby, nbx = Ay.shape[1] // ncb, Ax.shape[1] // ncb
    x = G.astype(np.float32)
    p = np.pad(x, ((0, 0), (1, 1), (1, 1)), mode="reflect")  # numpy 'reflect' is OpenCV's reflect-101
    dx = p[:, 1:-1, 2:] - p[:, 1:-1, :-2]
    dy = p[:, 2:, 1:-1] - p[:, :-2, 1:-1]
    mag = np.sqrt(dx * dx + dy * dy)
    a = np.arctan2(dy, dx)  # [-pi, pi]
    a *= np.float32(n_bins / (2 * np.pi if signed else np.pi))
    a -= np.float32(0.5)  # bin k is centred on (k + 0.5) bin widths, as OpenCV
    lo = np.floor(a)
    a -= lo  # fraction of the vote going to the upper bin
    lo_i = lo.astype(np.int32)
    lo_i %= n_bins
    hi_i = lo_i + 1
    hi_i[hi_i == n_bins] = 0
    # Dense vote map laid out (m, h, bins, w) so the x-contraction is one GEMM on a free reshape.
    V = np.zeros((m, h, n_bins, w), np.float32)
    base = (np.arange(m, dtype=np.int32)[:, None, None] * (h * n_bins * w)
            + np.arange(h, dtype=np.int32)[None, :, None] * (n_bins * w) + np.arange(w, dtype=np.int32)[None, None, :])
    lo_i *= w
    lo_i += base
    hi_i *= w
    hi_i += base
    hi_v = mag * a
    mag -= hi_v
    flat = V.reshape(-1)
    flat[lo_i] = mag
    flat[hi_i] = hi_v
    T = V.reshape(m * h * n_bins, w) @ Ax  # (m*h*bins, nbx*ncx)
    T = T.reshape(m, h, n_bins, nbx * ncb).transpose(0, 2, 3, 1)  # (m, bins, bx*cx, h)
    H = np.ascontiguousarray(T).reshape(-1, h) @ Ay  # (m*bins*bx*cx, by*cy)
    H = H.reshape(m, n_bins, nbx, ncb, nby, ncb)  # (m, bin, bx, cx, by, cy)
    H = H.transpose(0, 2, 4, 3, 5, 1).reshape(m, nbx * nby, ncb * ncb * n_bins)  # OpenCV order
    L = H.shape[2]
    H /= np.sqrt(np.einsum("nbk,nbk->nb", H, H))[:, :, None] + np.float32(0.1 * L)
    np.minimum(H, np.float32(0.2), out=H)
    H /= np.sqrt(np.einsum("nbk,nbk->nb", H, H))[:, :, None] + np.float32(1e-3)
    return H.reshape(m, -1)


def hog_features(X: np.ndarray, spec: dict, arrays: dict, prefix: str = "features") -> np.ndarray:
    """HOG of the centred window, ``(n, D)``, as the exported predict.py computes it: OpenCV's HOGDescriptor where
    the model used it and this OpenCV has one, else :func:`hog_numpy` (the same numbers within HOG_TOLERANCE)."""
    G = grey_stack(X) if X.ndim == 4 else X
    n, h, w = G.shape
    b, s, c, nb = spec["block_size"], spec["block_stride"], spec["cell_size"], spec["n_bins"]
    wh, ww = b + (h - b) // s * s, b + (w - b) // s * s
    top, left = (h - wh) // 2, (w - ww) // 2
    G = G[:, top:top + wh, left:left + ww]
    if hog_backend(spec["backend"]) == "opencv":
        hog = hog_descriptor(wh, ww, b, s, c, nb, spec["signed"])
        return np.stack([hog.compute(np.ascontiguousarray(g)).reshape(-1) for g in G]).astype(np.float32)
    Ax, Ay = axis_weights(ww, b, s, c), axis_weights(wh, b, s, c)
    return np.concatenate([hog_numpy(G[a:a + 64], Ay, Ax, b, s, c, nb, spec["signed"]) for a in range(0, n, 64)])


def check_hog_spec(spec: dict, arrays: dict, prefix: str, n_classes: int) -> None:
    """An exported HOG names the back-end it ran on (predict.py falls back to numpy where OpenCV has none)."""
    if spec.get("backend") not in ("opencv", "numpy"):
        raise SettingError(f"{prefix}.backend must be opencv or numpy")
