"""Running a checked network: the allow-list's verdict as one :class:`ModelFormatError`, onnxruntime or OpenCV's
``cv2.dnn`` loaded with their own log lines silenced, and every output held to the shape and finiteness the check
promised (:class:`Runner`; :mod:`.network` is the feature map that uses it)."""
from __future__ import annotations

import numpy as np

from ..guards.opencv_log import quiet_opencv
from ..errors import ModelFormatError
from ..guards.read_limits import SettingError
from .network_check import check_network

#: most values a batch of crops may hold in the network's layers at once (128 MB of float32): crops per call
#: are ``batch_size`` or fewer, by the layers' size the allow-list computes (the hand network: 341 a batch)
BATCH_VALUES = 32 * 1024 * 1024


def checked_network(data: bytes, where: str, sha256: str | None = None) -> dict:
    """:func:`.network_check.check_network` of a crop network (input ``(n, 1, h, w)``, output ``(n, D)``) or a
    window network (output ``(n, D, rows, cols)``), its refusal as a :class:`ModelFormatError` naming ``where``."""
    try:
        return check_network(data, sha256)
    except SettingError as exc:
        raise ModelFormatError(f"{where}: {exc}; refused, nothing was run") from None


def _quiet_onnxruntime(ort) -> None:
    """onnxruntime's default logger prints warnings and errors on stderr by itself: only fatal ones now
    (every failure reaches the user as one ModelFormatError)."""
    try:
        ort.set_default_logger_severity(4)
    except (AttributeError, ValueError):  # pragma: no cover - an onnxruntime without the call
        pass


class Runner:
    """One loaded network, already checked (:func:`checked_network`): ``run(x (n, 1, h, w) float32) ->
    (n, D) float32`` (a window network: ``(n, D, rows, cols)``), ModelFormatError naming ``where`` when the
    runtime fails or the shape is not that."""

    def __init__(self, data: bytes, runtime: str, where: str, width: int, values_per_crop: int = 1,
                 window: bool = False):
        self.runtime, self.where, self.width, self.window = runtime, where, width, window
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
        if self.window:
            if out.dtype != np.float32 or out.ndim != 4 or out.shape[:2] != (len(x), self.width):
                raise ModelFormatError(f"{self.where}: the window network gave {out.dtype} {tuple(out.shape)} for "
                                       f"{len(x)} images, not float32 ({len(x)}, {self.width}, rows, cols); refused")
        elif out.dtype != np.float32 or out.shape != (len(x), self.width):
            raise ModelFormatError(f"{self.where}: the network gave {out.dtype} {tuple(out.shape)} for {len(x)} "
                                   f"crops, not float32 ({len(x)}, {self.width}); refused")
        if not np.isfinite(out).all():
            raise ModelFormatError(f"{self.where}: the network gave NaN or infinite values; its weights are "
                                   f"damaged or it was trained wrongly (refused, no scores)")
        return np.ascontiguousarray(out)


def _first_line(e: Exception) -> str:
    text = " ".join(str(e).split())
    return text[:200] if text else "unreadable"


__all__ = ["BATCH_VALUES", "Runner", "checked_network"]
