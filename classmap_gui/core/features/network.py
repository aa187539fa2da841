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

Before onnxruntime or OpenCV sees the bytes, :func:`.network_check.check_network` holds them to the
allow-list of the product's own operators, sizes and shapes and to the SHA-256 the model records (at
fit, at loading a saved model, in the exported predictor): a graph that could loop, allocate gigabytes
or read a file beside the model is refused in one line, never run. Outputs that are not finite are
refused when they appear. Both runtimes' own log lines are silenced: their failures reach the user as
one :class:`ModelFormatError`.
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
from ..guards.read_limits import MAX_NETWORK_BYTES, MAX_NETWORK_INPUT_SIDE
from .network_dnn import check_network_spec, network_features
from .network_input import CONTEXT, CROP, WINDOW, standardise, window_input
from .network_runner import Runner, checked_network

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

    #: ``{spec type: {"keys": the settings export_spec writes (predict.py requires each), "features": the
    #: numpy code predict.py runs, "check": its check}}`` (read by :mod:`classmap_gui.core.export.predictor`)
    exports = {"network": {"keys": ("input_size", "n_features", "sha256", "kind"),
                        "features": network_features, "check": check_network_spec}}

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
        self._load(f"the network {self.network!r}")
        report(progress, 1.0, "network")
        return self

    def _load(self, where: str) -> None:
        """Check the bytes (allow-list, SHA-256), then load them and run one blank crop (a window network:
        one blank crop with its context, read as :meth:`transform` reads crops)."""
        data = self.onnx_.tobytes()
        info = checked_network(data, where, getattr(self, "sha256_", None))
        window = info["kind"] == "dense"
        width = int(info["width"])
        if window:
            side = CROP + 2 * CONTEXT                            # what window_input hands the network
            values = int(info["channels"]) * side * side
        else:
            values = int(info["values_per_crop"])
        runner = Runner(data, self.runtime, where, width, values, window=window)
        if window:
            x, c = window_input(np.zeros((1, CROP, CROP), np.uint8))
            grid = runner.run(x)
            if grid.shape[2] <= c or grid.shape[3] <= c:
                raise ModelFormatError(f"{where}: the window network gives a {grid.shape[2]}x{grid.shape[3]} window "
                                       f"grid for a {CROP}x{CROP} crop (expected at least {c + 1}x{c + 1})")
            self.kind_, self.context_ = "window", CONTEXT / WINDOW
            self.input_size_ = np.asarray((CROP, CROP), np.int64)
        else:
            runner.run(np.zeros((1, 1, *info["input_hw"]), np.float32))
            self.kind_, self.context_ = "crop", 0.0
            self.input_size_ = np.asarray(info["input_hw"], np.int64)
        self.n_features_out_ = width
        self.runner_ = runner

    def windows(self, image: np.ndarray) -> np.ndarray:
        """A window network's embedding of every window position of one image normalised by
        :func:`.network_input.local_contrast` (``(1, 1, H, W) float32``): ``(D, H/8 - 7, W/8 - 7) float32``,
        the window whose top-left pixel is ``(8 j, 8 i)`` at ``[:, i, j]`` (:class:`..detect.pyramid.NetworkPyramid`
        reads a frame's pyramid levels through it)."""
        check_is_fitted(self, "onnx_")
        if getattr(self, "runner_", None) is None:
            self._load(f"the network {self.network!r}")
        if self.kind_ != "window":
            raise ConfigError("this network reads crops one by one: it has no window grid (a window network "
                              "is trained by classmap train-network --arch dense)")
        x = np.ascontiguousarray(image, np.float32)
        if x.ndim != 4 or x.shape[:2] != (1, 1) or not 0 < max(x.shape[2:]) <= MAX_NETWORK_INPUT_SIDE:
            raise DataError(f"a window network reads one grey image (1, 1, H, W) with sides up to "
                            f"{MAX_NETWORK_INPUT_SIDE}, got {x.shape}")
        return self.runner_.run(x)[0]

    def transform(self, images, *, progress=None, should_stop=None) -> np.ndarray:
        """uint8 images ``(n, h, w)`` -> ``(n, D) float32`` embeddings."""
        check_is_fitted(self, "onnx_")
        if getattr(self, "runner_", None) is None:
            self._load(f"the network {self.network!r}")
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
        step = min(int(self.batch_size), self.runner_.crops_per_call)
        window = self.kind_ == "window"
        for s in range(0, n, step):
            check_stop(should_stop)
            if window:
                inp, c = window_input(x[s:s + step])
                out[s:s + step] = self.runner_.run(inp)[:, :, c, c]
            else:
                out[s:s + step] = self.runner_.run(standardise(x[s:s + step]))
            report(progress, min(n, s + step) / n, "network features")
        return out

    def validate_state(self) -> None:
        """Checks after loading a saved model: the network's size, its SHA-256, the allow-list, and its width."""
        validate_params(self)
        data = np.asarray(self.onnx_)
        if data.dtype != np.uint8 or data.ndim != 1 or not 0 < data.size <= MAX_NETWORK_BYTES:
            raise ValueError(f"network: the saved network must be 1..{MAX_NETWORK_BYTES} bytes (uint8), got "
                             f"{data.dtype} {data.shape}")
        sha = getattr(self, "sha256_", None)
        if not (isinstance(sha, str) and len(sha) == 64 and all(c in "0123456789abcdef" for c in sha)):
            raise ValueError("network: the model records no SHA-256 of its network (sha256_ must be 64 hex digits)")
        width = self.n_features_out_
        self.onnx_ = data
        self._load("its network")
        if self.n_features_out_ != width:
            raise ValueError(f"network: the saved network gives {self.n_features_out_} features, the model "
                             f"says {width}")

    def export_spec(self, arrays: dict, prefix: str = "features") -> dict:
        """Settings for the exported ``predict.py``: the network bytes, run there by OpenCV's ``cv2.dnn``."""
        arrays[f"{prefix}.onnx"] = np.asarray(self.onnx_, np.uint8)
        return {"type": "network", "input_size": [int(v) for v in self.input_size_],
                "n_features": int(self.n_features_out_), "sha256": str(self.sha256_), "kind": self.kind_}


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
