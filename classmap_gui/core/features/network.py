"""A trained convolutional network's embedding as a feature map: the hand reader's features.

The network is trained once by the project (``classmap train-network``, PyTorch, the ``[train]`` extra),
exported to ONNX and shipped as package data (``resources/networks/<name>.onnx`` beside the
``<name>.json`` that made it: seed, data recipe, validation curve). Here it is only *run*, by
onnxruntime (default) or OpenCV's ``cv2.dnn``: nothing imports torch.

Runtime choice, measured per crop on this 2-core machine for the shipped network (64 x 64 grey): both
agree with PyTorch to ~3e-7; onnxruntime is 1.3-1.5x faster for one to nine crops (the reader's
re-crops) and 3-4x faster in batches of 256 (the model build's 80 000 crops), so it is the default;
``runtime="opencv"`` needs no package beyond OpenCV and is what the exported ``predict.py`` uses.

The file is data: an ONNX graph is a protocol buffer, parsed, never executed as code. It is kept in
the fitted state as a ``uint8`` array (``onnx_``), so a saved model holds its network and needs no
file beside it; loading checks its size (at most :data:`MAX_NETWORK_BYTES`) and that it parses and
gives the recorded width.
"""
from __future__ import annotations

import hashlib
import json
from importlib import resources
from numbers import Integral
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ..guards.constraints import Interval, StrOptions, validate_params
from ..errors import ConfigError, DataError, ModelFormatError
from ..progress import check_stop, report
from ..guards.read_limits import MAX_NETWORK_BYTES
from .network_input import CONTEXT, CROP, STRIDE, WINDOW, standardise, window_input

RUNTIMES = ("onnxruntime", "opencv")
_SHIPPED = "networks"


def shipped_networks() -> list[str]:
    """Names of the networks shipped in the package (``resources/networks/*.onnx``)."""
    folder = resources.files("classmap_gui").joinpath("resources", _SHIPPED)
    try:
        return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".onnx"))
    except (FileNotFoundError, NotADirectoryError):
        return []


def network_record(name: str) -> dict:
    """The JSON that made a shipped network (its training record), or {} when none ships."""
    path = resources.files("classmap_gui").joinpath("resources", _SHIPPED, f"{name}.json")
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return {}


def read_network_bytes(network: str) -> bytes:
    """The ONNX bytes of a shipped network name or of a ``.onnx`` path, size-checked."""
    if network in shipped_networks():
        src = resources.files("classmap_gui").joinpath("resources", _SHIPPED, f"{network}.onnx")
        where = f"the shipped network {network!r}"
    else:
        src = Path(network)
        where = str(src)
        if src.suffix != ".onnx" or not src.is_file():
            known = ", ".join(shipped_networks()) or "none"
            raise ConfigError(f"network: {network!r} is neither a shipped network ({known}) nor an .onnx file")
    with src.open("rb") as fh:
        data = fh.read(MAX_NETWORK_BYTES + 1)
    if len(data) > MAX_NETWORK_BYTES:
        raise ModelFormatError(f"{where}: the network file is larger than {MAX_NETWORK_BYTES >> 20} MB")
    return data


class _Runner:
    """One loaded network: ``run(x (n, 1, h, w) float32)`` -> its output as float32: ``(n, D)`` for a crop
    network, ``(n, E, rows, cols)`` for a window network (``raw=True``; else flattened per image)."""

    def __init__(self, data: bytes, runtime: str, where: str):
        try:
            if runtime == "onnxruntime":
                import onnxruntime as ort

                opts = ort.SessionOptions()
                opts.intra_op_num_threads = 2
                opts.inter_op_num_threads = 1
                opts.log_severity_level = 3
                self._sess = ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])
                inp = self._sess.get_inputs()[0]
                self._name = inp.name
                hw = inp.shape[2:4]
                self.input_hw = tuple(int(v) for v in hw) if all(isinstance(v, int) for v in hw) else None
            else:
                import cv2

                self._net = cv2.dnn.readNetFromONNX(np.frombuffer(data, np.uint8))
                self.input_hw = None
        except Exception as e:  # noqa: BLE001 - a truncated or foreign file: one clear line, whatever the parser raised
            raise ModelFormatError(f"{where}: not a network this app can run ({type(e).__name__}: "
                                   f"{str(e).splitlines()[0] if str(e) else 'unreadable'})") from None
        self.runtime = runtime

    def run(self, x: np.ndarray, raw: bool = False) -> np.ndarray:
        if self.runtime == "onnxruntime":
            out = self._sess.run(None, {self._name: x})[0]
        else:
            self._net.setInput(x)
            out = self._net.forward()
        if raw:
            return np.asarray(out, np.float32)
        return np.ascontiguousarray(out.reshape(len(x), -1), np.float32)


class NetworkFeatures(TransformerMixin, BaseEstimator):
    """The embedding of a trained convolutional network (its penultimate layer) for every image.

    Parameters
    ----------
    network : str
        A shipped network's name (:func:`shipped_networks`, e.g. ``"hand"``) or the path of an ``.onnx``
        file: a *crop* network (input ``(n, 1, h, w)`` standardised grey crops, output ``(n, D)``) or a
        *window* network (``classmap train-network --arch dense``: input ``(n, 1, H, W)`` of any size,
        normalised by :func:`.network_input.local_contrast`, output ``(n, D, H/8 - 7, W/8 - 7)``, the embedding
        of every window position; an image's features are those of its central window, the image being the
        window with its context margin, ``CROP`` x ``CROP`` pixels, read as a frame's pass reads it:
        :func:`.network_input.window_input`).
    runtime : {"onnxruntime", "opencv"}
        Who runs it (module docstring: onnxruntime is faster here; OpenCV needs nothing more).
    batch_size : int
        Crops per call of the runtime.

    Attributes
    ----------
    onnx_ : ndarray of shape (bytes,), uint8
        The network file itself (saved with the model).
    input_size_ : ndarray of shape (2,), int64
        The crop size (h, w) the network reads; other sizes are resized to it (area / linear).
    n_features_out_ : int
        The embedding width D.
    kind_ : str
        ``"crop"`` or ``"window"`` (the network's output rank tells).
    context_ : float
        The margin around a window that its crop carries, a fraction of the window's side (0 for a crop
        network): a reader crops a box of side ``s`` as ``s * (1 + 2 * context_)``.
    sha256_ : str
        The network file's SHA-256 (what a model was built on).

    Input: uint8 ``(n, h, w)`` grey (or ``(n, h, w, 3)``). Output: ``(n, D) float32``.

    Examples
    --------
    >>> import numpy as np
    >>> from classmap_gui.core.features import NetworkFeatures
    >>> crops = np.random.default_rng(0).integers(0, 256, (4, 64, 64), dtype=np.uint8)
    >>> NetworkFeatures().fit(crops).transform(crops).shape
    (4, 512)
    """

    #: ``{spec type: the settings export_spec writes}``: predict.py requires each (read by the export)
    exports = {"network": ("input_size", "n_features", "kind")}

    store_exclude = ("runner_", "kind_", "context_")  # set again from the network at load

    def __init__(self, network: str = "hand", runtime: str = "onnxruntime", batch_size: int = 256):
        self.network = network
        self.runtime = runtime
        self.batch_size = batch_size

    _parameter_constraints: dict = {
        "network": [str],
        "runtime": [StrOptions(set(RUNTIMES))],
        "batch_size": [Interval(Integral, 1, 65536, closed="both")],
    }

    def fit(self, images=None, y=None, *, progress=None, should_stop=None):
        """Load the network (nothing is learned here: it was trained by ``classmap train-network``)."""
        validate_params(self)
        data = read_network_bytes(str(self.network))
        self.onnx_ = np.frombuffer(data, np.uint8).copy()
        self.sha256_ = hashlib.sha256(data).hexdigest()
        self._load(f"network {self.network!r}")
        report(progress, 1.0, "network")
        return self

    def _load(self, where: str) -> None:
        runner = _Runner(self.onnx_.tobytes(), self.runtime, where)
        hw = runner.input_hw or (CROP, CROP)
        probe = runner.run(np.zeros((1, 1, *hw), np.float32), raw=True)
        if probe.ndim == 4 and runner.input_hw is None:
            self.kind_, self.context_ = "window", CONTEXT / WINDOW
            c = CONTEXT // STRIDE
            if probe.shape[2] <= c or probe.shape[3] <= c:
                raise ModelFormatError(f"{where}: the window network gives a {probe.shape[2]}x{probe.shape[3]} "
                                       f"window grid for a {CROP}x{CROP} crop (expected at least {c + 1}x{c + 1})")
            probe = probe[:, :, c, c]
        else:
            self.kind_, self.context_ = "crop", 0.0
            if runner.input_hw is None:   # OpenCV's dnn does not say the input size: the crop networks' 64 x 64
                hw = (64, 64)
                probe = runner.run(np.zeros((1, 1, *hw), np.float32), raw=True)
        if probe.ndim != 2 or not np.all(np.isfinite(probe)):
            raise ModelFormatError(f"{where}: the network gives no finite embedding for a blank crop")
        self.input_size_ = np.asarray(hw, np.int64)
        self.n_features_out_ = int(probe.shape[1])
        self.runner_ = runner

    def windows(self, image: np.ndarray) -> np.ndarray:
        """A window network's embedding of every window position of one image normalised by
        :func:`.network_input.local_contrast` (``(1, 1, H, W) float32``): ``(D, H/8 - 7, W/8 - 7) float32``,
        the window whose top-left pixel is ``(8 j, 8 i)`` at ``[:, i, j]`` (:class:`..detect.pyramid.NetworkPyramid`
        reads a frame's pyramid levels through it)."""
        check_is_fitted(self, "onnx_")
        if getattr(self, "runner_", None) is None:
            self._load("network")
        if self.kind_ != "window":
            raise ConfigError("this network reads crops one by one: it has no window grid (a window network "
                              "is trained by classmap train-network --arch dense)")
        return self.runner_.run(np.ascontiguousarray(image, np.float32), raw=True)[0]

    def transform(self, images, *, progress=None, should_stop=None) -> np.ndarray:
        """uint8 images ``(n, h, w)`` -> ``(n, D) float32`` embeddings."""
        check_is_fitted(self, "onnx_")
        if getattr(self, "runner_", None) is None:
            self._load("network")
        x = np.asarray(images)
        if x.ndim not in (3, 4) or x.dtype != np.uint8:
            raise DataError(f"network features expect uint8 images (n, h, w), got {x.dtype} {x.shape}")
        h, w = (int(v) for v in self.input_size_)
        if x.shape[1:3] != (h, w):
            import cv2

            interp = cv2.INTER_AREA if x.shape[1] > h else cv2.INTER_LINEAR
            x = np.stack([cv2.resize(im, (w, h), interpolation=interp) for im in x]) if len(x) else \
                np.zeros((0, h, w), np.uint8)
        n = len(x)
        out = np.empty((n, self.n_features_out_), np.float32)
        step = int(self.batch_size)
        window = getattr(self, "kind_", "crop") == "window"
        for s in range(0, n, step):
            check_stop(should_stop)
            if window:
                inp, c = window_input(x[s:s + step])
                out[s:s + step] = self.runner_.run(inp, raw=True)[:, :, c, c]
            else:
                out[s:s + step] = self.runner_.run(standardise(x[s:s + step]))
            report(progress, min(n, s + step) / n, "network features")
        return out

    def validate_state(self) -> None:
        """Checks after loading a saved model: the network's size, that it parses, and its width."""
        validate_params(self)
        data = np.asarray(self.onnx_)
        if data.dtype != np.uint8 or data.ndim != 1 or not 0 < data.size <= MAX_NETWORK_BYTES:
            raise ValueError(f"network: the saved network must be 1..{MAX_NETWORK_BYTES} bytes (uint8), got "
                             f"{data.dtype} {data.shape}")
        width = self.n_features_out_
        self.onnx_ = data
        self._load("the saved network")
        if self.n_features_out_ != width:
            raise ValueError(f"network: the saved network gives {self.n_features_out_} features, the model "
                             f"says {width}")

    def export_spec(self, arrays: dict, prefix: str = "features") -> dict:
        """Settings for the exported ``predict.py``: the network bytes, run there by OpenCV's ``cv2.dnn``."""
        arrays[f"{prefix}.onnx"] = np.asarray(self.onnx_, np.uint8)
        return {"type": "network", "input_size": [int(v) for v in self.input_size_],
                "n_features": int(self.n_features_out_), "kind": getattr(self, "kind_", "crop")}


class WindowNetworkFeatures(NetworkFeatures):
    """The shipped window network (``"hand-window"``: ``classmap train-network --arch dense``) as a feature map
    of its own, so a form or ``--features window-network`` names it: every window of a frame embedded in one
    pass by a scan (:class:`..detect.pyramid.NetworkPyramid`); a crop (``CROP`` x ``CROP``: a window with its
    context) embedded as its central window.

    Examples
    --------
    >>> import numpy as np
    >>> from classmap_gui.core.features.network import WindowNetworkFeatures
    >>> crops = np.random.default_rng(0).integers(0, 256, (2, 96, 96), dtype=np.uint8)
    >>> f = WindowNetworkFeatures().fit(crops)
    >>> f.kind_, f.transform(crops).shape
    ('window', (2, 512))
    """

    def __init__(self, network: str = "hand-window", runtime: str = "onnxruntime", batch_size: int = 256):
        super().__init__(network, runtime, batch_size)


__all__ = ["MAX_NETWORK_BYTES", "NetworkFeatures", "WindowNetworkFeatures", "RUNTIMES", "network_record", "read_network_bytes",
           "shipped_networks"]
