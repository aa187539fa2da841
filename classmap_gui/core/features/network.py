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

from ..constraints import Interval, StrOptions, validate_params
from ..errors import ConfigError, DataError, ModelFormatError
from ..progress import check_stop, report
from ..data.image_decode import quiet_opencv
from ..read_limits import MAX_NETWORK_BYTES, SettingError
from .network_check import check_network
from .network_input import standardise

RUNTIMES = ("onnxruntime", "opencv")
#: most values a batch of crops may hold in the network's layers at once (128 MB of float32): crops per call
#: are ``batch_size`` or fewer, by the layers' size the allow-list computes (the hand network: 341 a batch)
BATCH_VALUES = 32 * 1024 * 1024
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


def checked_network(data: bytes, where: str, sha256: str | None = None) -> dict:
    """:func:`.network_check.check_network` of a crop network (input ``(n, 1, h, w)``, output ``(n, D)``),
    its refusal as a :class:`ModelFormatError` naming ``where``."""
    try:
        return check_network(data, sha256, kind="crop")
    except SettingError as exc:
        raise ModelFormatError(f"{where}: {exc}; refused, nothing was run") from None


def _quiet_onnxruntime(ort) -> None:
    """onnxruntime's default logger prints warnings and errors on stderr by itself: only fatal ones now
    (every failure reaches the user as one ModelFormatError)."""
    try:
        ort.set_default_logger_severity(4)
    except (AttributeError, ValueError):  # pragma: no cover - an onnxruntime without the call
        pass


class _Runner:
    """One loaded network, already checked (:func:`checked_network`): ``run(x (n, 1, h, w) float32) ->
    (n, D) float32``, ModelFormatError naming ``where`` when the runtime fails or the shape is not that."""

    def __init__(self, data: bytes, runtime: str, where: str, width: int, values_per_crop: int = 1):
        self.runtime, self.where, self.width = runtime, where, width
        self.crops_per_call = max(1, BATCH_VALUES // max(1, values_per_crop))
        try:
            if runtime == "onnxruntime":
                import onnxruntime as ort

                _quiet_onnxruntime(ort)
                opts = ort.SessionOptions()
                opts.intra_op_num_threads = 2
                opts.inter_op_num_threads = 1
                opts.log_severity_level = 4
                self._sess = ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])
                self._name = self._sess.get_inputs()[0].name
            else:
                import cv2

                with quiet_opencv():
                    self._net = cv2.dnn.readNetFromONNX(np.frombuffer(data, np.uint8))
        except Exception as e:  # noqa: BLE001 - a truncated or foreign file: one clear line, whatever the parser raised
            raise ModelFormatError(f"{where}: not a network this app can run ({type(e).__name__}: "
                                   f"{_first_line(e)})") from None

    def run(self, x: np.ndarray) -> np.ndarray:
        try:
            if self.runtime == "onnxruntime":
                out = self._sess.run(None, {self._name: x})[0]
            else:
                with quiet_opencv():
                    self._net.setInput(x)
                    out = self._net.forward()
        except Exception as e:  # noqa: BLE001 - the runtime's own failure (a shape it cannot compute): one line
            raise ModelFormatError(f"{self.where}: the network failed to run ({type(e).__name__}: "
                                   f"{_first_line(e)})") from None
        out = np.asarray(out)
        if out.dtype != np.float32 or out.shape != (len(x), self.width):
            raise ModelFormatError(f"{self.where}: the network gave {out.dtype} {tuple(out.shape)} for {len(x)} "
                                   f"crops, not float32 ({len(x)}, {self.width}); refused")
        if not np.isfinite(out).all():
            raise ModelFormatError(f"{self.where}: the network gave NaN or infinite values; its weights are "
                                   f"damaged or it was trained wrongly (refused, no scores)")
        return np.ascontiguousarray(out)


def _first_line(e: Exception) -> str:
    text = " ".join(str(e).split())
    return text[:200] if text else "unreadable"


class NetworkFeatures(TransformerMixin, BaseEstimator):
    """The embedding of a trained convolutional network (its penultimate layer) for every image.

    Parameters
    ----------
    network : str
        A shipped network's name (:func:`shipped_networks`, e.g. ``"hand"``) or the path of an ``.onnx``
        file (input ``(n, 1, h, w)`` standardised grey crops, output ``(n, D)``).
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

    store_exclude = ("runner_",)

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
        """Check the bytes (allow-list, SHA-256), then load them and run one blank crop."""
        data = self.onnx_.tobytes()
        info = checked_network(data, where, getattr(self, "sha256_", None))
        runner = _Runner(data, self.runtime, where, int(info["width"]), int(info["values_per_crop"]))
        runner.run(np.zeros((1, 1, *info["input_hw"]), np.float32))
        self.input_size_ = np.asarray(info["input_hw"], np.int64)
        self.n_features_out_ = int(info["width"])
        self.runner_ = runner

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
        for s in range(0, n, step):
            check_stop(should_stop)
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
                "n_features": int(self.n_features_out_), "sha256": str(self.sha256_)}


__all__ = ["MAX_NETWORK_BYTES", "NetworkFeatures", "RUNTIMES", "network_record", "read_network_bytes",
           "shipped_networks"]
