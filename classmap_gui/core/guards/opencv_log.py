"""OpenCV's own log lines kept off stderr while a block runs (:func:`quiet_opencv`): decoding a stranger's
image, reading or running a network. The caller reports a failure in its own words. Works on OpenCV 4 and 5
(``cv2.utils.logging``, or the top-level ``cv2.setLogLevel`` of builds without it). numpy-free and stdlib
only: the exported ``predict.py`` inlines it."""
from __future__ import annotations

import contextlib
import threading

import cv2

_quiet_lock = threading.Lock()
_quiet = [0, None]  # decodes running now, OpenCV's log level before the first of them


def _log_calls():
    """``(get level, set level, the silent level)`` of OpenCV's log: ``cv2.utils.logging``, or the top-level
    ``cv2.setLogLevel`` of builds without it (0: silent); None when neither is there."""
    log = getattr(getattr(cv2, "utils", None), "logging", None)
    if log is not None:
        return log.getLogLevel, log.setLogLevel, log.LOG_LEVEL_SILENT
    if hasattr(cv2, "setLogLevel"):
        return getattr(cv2, "getLogLevel", lambda: 3), cv2.setLogLevel, 0
    return None


@contextlib.contextmanager
def quiet_opencv():
    """OpenCV's log silenced while the block runs (threads may overlap: the level before the first
    is restored when the last leaves). The caller reports a failed decode in its own words."""
    calls = _log_calls()
    if calls is None:  # pragma: no cover - a build without a log level to set
        yield
        return
    get_level, set_level, silent = calls
    with _quiet_lock:
        if _quiet[0] == 0:
            _quiet[1] = get_level()
            set_level(silent)
        _quiet[0] += 1
    try:
        yield
    finally:
        with _quiet_lock:
            _quiet[0] -= 1
            if _quiet[0] == 0:
                set_level(_quiet[1])


__all__ = ["quiet_opencv"]
