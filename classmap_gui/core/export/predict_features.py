"""The exported ``predict.py``'s feature maps, numpy and OpenCV only: one function per export spec ``type``
(:data:`FEATURES`), each ``(images, spec, arrays, prefix) -> (n, D) float32`` as the app's transformer computes
it. predict.py inlines this module after the kernels it calls (the imports below name them), so the app can
import and test it as it is.
"""
from __future__ import annotations

import cv2
import numpy as np

from ..features.cnn_ops import conv_blocks, final_layer
from ..features.hog_ops import axis_weights, hog_backend, hog_descriptor, hog_numpy
from ..features.kmeans_ops import pool_numpy, whitened_patches
from ..guards.opencv_log import quiet_opencv
from ..features.network_check import check_network
from ..features.network_input import standardise, window_input
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


def hog_features(X: np.ndarray, spec: dict, arrays: dict, prefix: str = "features") -> np.ndarray:
    """HOG of the centred window, ``(n, D)``: OpenCV's HOGDescriptor where the model used it and this OpenCV
    has one, else the app's numpy code (OpenCV 5 has no HOGDescriptor; the same numbers within HOG_TOLERANCE)."""
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


_GREY_WEIGHTS = np.array([0.299, 0.587, 0.114], dtype=np.float32)


def kmeans_features(X: np.ndarray, spec: dict, arrays: dict, prefix: str = "features") -> np.ndarray:
    """Coates et al. single-layer features: normalised, whitened patches -> triangle (or hard) code
    -> sum over the 4 image quadrants -> ``(n, 4K)`` float32."""
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


def _rff(X: np.ndarray, spec: dict, arrays: dict, prefix: str) -> np.ndarray:
    """Random Fourier features ``[cos XW, sin XW] / sqrt(m)`` (or ``cos(XW + b)``), ``(n, 2m)`` float32."""
    m = spec["m"]
    P = X @ arrays[f"{prefix}.frequencies"]
    if spec["kind"] == "phase":
        P += arrays[f"{prefix}.offsets"]
        out = np.cos(P)
    else:
        out = np.empty((len(X), 2 * m), np.float32)
        np.cos(P, out=out[:, :m])
        np.sin(P, out=out[:, m:])
    out *= np.float32(1.0 / np.sqrt(m))
    return out


def rff_features(X: np.ndarray, spec: dict, arrays: dict, prefix: str = "features") -> np.ndarray:
    """Random Fourier features of the pixels scaled to [0, 1], ``(n, 2m)`` float32."""
    F = X.reshape(len(X), -1).astype(np.float32) / np.float32(255.0)
    return _rff(F, spec, arrays, prefix)


def cnn_features(X: np.ndarray, spec: dict, arrays: dict, prefix: str = "features") -> np.ndarray:
    """A fixed random CNN: depth x (k x k valid convolution as one GEMM, ReLU, max-pool), then a
    random final layer (ReLU, or cos/sin random Fourier features) to ``m`` outputs."""
    X = (X[..., None] if X.ndim == 3 else X).astype(np.float32) / np.float32(255.0)
    filters = [arrays[f"{prefix}.filters.{level}"] for level in range(spec["depth"])]
    H = conv_blocks(X, filters, spec["kernel_size"], spec["pool"], spec["normalize"])
    return final_layer(H, arrays[f"{prefix}.final_weights"], arrays[f"{prefix}.final_bias"], spec["m"], spec["final"])


_NETWORKS: dict = {}


def network_features(X: np.ndarray, spec: dict, arrays: dict, prefix: str = "features") -> np.ndarray:
    """A trained network's embedding (its ONNX file is ``arrays[prefix.onnx]``), run by OpenCV's dnn: the app
    runs the same file with onnxruntime; both agree with PyTorch to 1e-4. The app's allow-list is checked
    before OpenCV reads the bytes. A window network (``kind`` "window") reads a crop as a frame's pass reads
    its window (:func:`~..features.network_input.window_input`) and gives that window's embedding."""
    h, w = spec["input_size"]
    if X.shape[1:3] != (h, w):
        X = np.stack([cv2.resize(im, (w, h), interpolation=cv2.INTER_AREA if im.shape[0] > h else cv2.INTER_LINEAR)
                      for im in X])
    width = int(spec["n_features"])
    window = spec.get("kind", "crop") == "window"
    with quiet_opencv():  # OpenCV's own log lines stay off stderr
        if prefix not in _NETWORKS:  # the app's allow-list first (also checked at load): then OpenCV reads it
            data = np.ascontiguousarray(arrays[f"{prefix}.onnx"])
            info = check_network(data.tobytes(), spec["sha256"], kind="dense" if window else "crop")
            # crops per call: at most 128 MB of layer values, as in the app
            values = info.get("values_per_crop") or info["channels"] * (h + 2 * 16) * (w + 2 * 16)
            _NETWORKS[prefix] = cv2.dnn.readNetFromONNX(data), max(1, min(256, (32 << 20) // max(1, values)))
        net, step = _NETWORKS[prefix]
        out = np.empty((len(X), width), np.float32)
        for a in range(0, len(X), step):
            if window:
                inp, c = window_input(X[a:a + step])
                net.setInput(inp)
                got = net.forward()
                got = got[:, :, c, c] if got.ndim == 4 and got.shape[2] > c and got.shape[3] > c else got
            else:
                net.setInput(standardise(X[a:a + step]))
                got = net.forward()
            if got.dtype != np.float32 or got.shape != (len(X[a:a + step]), width):
                raise ValueError(f"the network gave {got.dtype} {tuple(got.shape)}, not float32 (n, {width})")
            out[a:a + step] = got
    if not np.isfinite(out).all():
        raise ValueError("the network gave NaN or infinite values (its weights are damaged); no scores")
    return out


def concat_features(X: np.ndarray, spec: dict, arrays: dict, prefix: str = "features") -> np.ndarray:
    """A composite feature map: its parts' features side by side, part ``i``'s arrays under ``prefix.i``."""
    return np.concatenate([np.asarray(FEATURES[part["type"]](X, part, arrays, f"{prefix}.{i}"), np.float32)
                           for i, part in enumerate(spec["parts"])], axis=1)


FEATURES = {"pixels": pixel_features, "hog": hog_features, "kmeans": kmeans_features, "rff": rff_features,
            "cnn": cnn_features, "network": network_features, "concat": concat_features}
