"""Random Fourier features as the exported predict.py computes and checks them (numpy only:
:mod:`classmap_gui.core.export.predictor` inlines this module, named by
:class:`.random_features.RandomFourierFeatures`'s ``exports``; predict.py's compressive bank maps with
:func:`rff_map` too)."""
from __future__ import annotations

import numpy as np

from ..guards.read_limits import checked_array


def rff_map(X: np.ndarray, spec: dict, arrays: dict, prefix: str) -> np.ndarray:
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
    return rff_map(F, spec, arrays, prefix)


def check_rff_spec(spec: dict, arrays: dict, prefix: str, n_classes: int) -> None:
    """The frequencies (and a phase map's offsets) fit ``m``."""
    checked_array(arrays, f"{prefix}.frequencies", (None, spec["m"]))
    if spec["kind"] == "phase":
        checked_array(arrays, f"{prefix}.offsets", (spec["m"],))
