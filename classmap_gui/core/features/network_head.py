"""A shipped window network's own class head: the linear layer it was trained with, over its embedding.

``classmap train-network --arch dense`` trains the network with a softmax class head (2430 hand classes +
background) on the embedding it exports, and writes that head beside the ONNX graph
(``resources/networks/<name>-head.npz``: ``classes`` names, ``coef (C, E) float32``, ``intercept (C,)
float32``; no pickles). The ``network-head`` bank (:class:`..classify.banks.head.NetworkHeadBank`) scores a
window's embedding with it: on the build's validation crops it names the shape better than a ridge bank
fitted on the build's own images (``docs/bench/hand-bank-choice.json``).
"""
from __future__ import annotations

import io
import zipfile
from importlib import resources
from pathlib import Path

import numpy as np

from ..errors import ConfigError, ModelFormatError
from ..guards.read_limits import MAX_NETWORK_BYTES

#: the file beside ``<name>.onnx`` that holds its class head
HEAD_SUFFIX = "-head.npz"


def head_path(network: str):
    """Where the class head of ``network`` (a shipped name or an ``.onnx`` path) lies (it may not exist)."""
    if network.endswith(".onnx"):
        p = Path(network)
        return p.with_name(p.name[:-5] + HEAD_SUFFIX)
    return resources.files("classmap_gui").joinpath("resources", "networks", network + HEAD_SUFFIX)


def network_head(network: str = "hand-window") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(classes (C,) str, coef (C, E) float32, intercept (C,) float32)``: the class head of ``network``.
    ConfigError when the network has none; ModelFormatError naming the file when it is damaged."""
    path = head_path(str(network))
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_NETWORK_BYTES + 1)
    except (FileNotFoundError, NotADirectoryError):
        raise ConfigError(f"the network {network!r} has no class head ({path.name} is missing): use the "
                          "ova-ridge bank, or a window network trained by classmap train-network --arch dense") from None
    if len(data) > MAX_NETWORK_BYTES:
        raise ModelFormatError(f"{path}: the class head is larger than {MAX_NETWORK_BYTES >> 20} MB")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            classes, coef, intercept = z["classes"], z["coef"], z["intercept"]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:  # a damaged or foreign file: one line naming it
        raise ModelFormatError(f"{path}: not a class head ({type(e).__name__}: {e})") from None
    if (classes.dtype.kind != "U" or classes.ndim != 1 or coef.dtype != np.float32 or coef.ndim != 2
            or intercept.dtype != np.float32 or intercept.shape != (len(classes),) or len(coef) != len(classes)
            or len(set(classes.tolist())) != len(classes) or not (np.isfinite(coef).all() and np.isfinite(intercept).all())):
        raise ModelFormatError(f"{path}: its parts do not fit together (classes {classes.shape} {classes.dtype}, "
                               f"coef {coef.shape} {coef.dtype}, intercept {intercept.shape} {intercept.dtype}, "
                               "names unique, values finite)")
    return classes, coef, intercept


__all__ = ["HEAD_SUFFIX", "head_path", "network_head"]
