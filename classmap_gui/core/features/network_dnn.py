"""A trained network's embedding as the exported predict.py computes and checks it: the ONNX file run by
OpenCV's ``cv2.dnn`` (the app runs the same file with onnxruntime, :mod:`.network_runner`; both agree with
PyTorch to 1e-4). numpy and OpenCV only: :mod:`classmap_gui.core.export.predictor` inlines this module, named
by :class:`.network.NetworkFeatures`'s ``exports``, with the input normalisation it imports."""
from __future__ import annotations

import cv2
import numpy as np

from ..guards.opencv_log import quiet_opencv
from ..guards.read_limits import MAX_IMAGE_SIDE, MAX_NETWORK_BYTES, SettingError, checked_array
from .network_check import check_network
from .network_input import standardise, window_input

_NETWORKS: dict = {}


def network_features(X: np.ndarray, spec: dict, arrays: dict, prefix: str = "features") -> np.ndarray:
    """A trained network's embedding (its ONNX file is ``arrays[prefix.onnx]``), run by OpenCV's dnn. The app's
    allow-list is checked before OpenCV reads the bytes. A window network (``kind`` "window") reads a crop as a
    frame's pass reads its window (:func:`~.network_input.window_input`) and gives that window's embedding."""
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


def check_network_spec(spec: dict, arrays: dict, prefix: str, n_classes: int) -> None:
    """The network's bytes pass the app's allow-list (before OpenCV sees them) and read the input size into the
    width model.json says; its hash, kind and sizes are well formed."""
    onnx = checked_array(arrays, f"{prefix}.onnx", (None,), "u")
    if onnx.dtype != np.uint8 or not 0 < onnx.size <= MAX_NETWORK_BYTES:
        raise SettingError(f"{prefix}.onnx must be the network file's 1 to {MAX_NETWORK_BYTES} bytes")
    size, width = spec.get("input_size"), spec.get("n_features")
    if not (isinstance(size, list) and len(size) == 2 and all(
            isinstance(s, int) and not isinstance(s, bool) and 1 <= s <= MAX_IMAGE_SIDE for s in size)):
        raise SettingError(f"{prefix}.input_size must be two whole numbers from 1 to {MAX_IMAGE_SIDE}")
    if not (isinstance(width, int) and not isinstance(width, bool) and 1 <= width <= 1_000_000):
        raise SettingError(f"{prefix}.n_features must be a whole number from 1 to 1000000")
    kind = spec.get("kind", "crop")
    if kind not in ("crop", "window"):
        raise SettingError(f"{prefix}.kind must be crop or window")
    sha = spec.get("sha256")
    if not (isinstance(sha, str) and len(sha) == 64 and all(c in "0123456789abcdef" for c in sha)):
        raise SettingError(f"{prefix}.sha256 must be the network file's SHA-256 (64 hex digits)")
    try:  # the allow-list, before OpenCV sees the bytes (the app's own check, inlined)
        info = check_network(onnx.tobytes(), sha, kind="dense" if kind == "window" else "crop")
    except SettingError as exc:
        raise SettingError(f"{prefix}.onnx: {exc}; refused, nothing was run") from None
    if (kind == "crop" and list(info["input_hw"]) != size) or info["width"] != width:
        raise SettingError(f"{prefix}.onnx reads {info['input_hw'] or 'any'} images into {info['width']} features, "
                           f"model.json says {size} and {width}")
