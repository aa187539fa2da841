"""Find the hand's worker: :class:`ScanStream` reads frames from a camera or a video file on its own thread,
scans each (:class:`~classmap_gui.core.detect.scanner.Scanner`), reads the hand along its track
(:class:`~classmap_gui.core.detect.reading.HandReader`) and hands the newest result to the UI with the rows of
its candidate table (:func:`reading_candidates`); each method's frames/s is measured here, in the worker."""
from __future__ import annotations

import threading
import time

import cv2
import numpy as np
from PySide6.QtCore import Signal

from ..camera import pace
from ..threads import UiThread


class ScanStream(UiThread):
    """Reads frames from a camera index or a video file and scans every frame it reads.

    ``frame(rgb, result, method, reading)`` carries the newest scanned frame and what the hand reader
    (:class:`~classmap_gui.core.detect.reading.HandReader` with the model's reading settings: the voted box
    re-cropped and classified, or the scan's own windows that voted for it, integrated along the hand's track) makes of it, with the reading's ranked candidates (:func:`reading_candidates`) as
    ``reading.candidates``, when the UI is free (frames scanned while it is busy are counted,
    not queued); ``rates`` maps each method to its frames/s over the last
    second of scanning; ``ended(message)`` once when it stops. ``method`` may change while running.
    """

    frame = Signal(object, object, str, object)
    ended = Signal(str)

    def __init__(self, source, recogniser, method: str = "classmap", *, realtime: bool = True, loop: bool = True,
                 parent=None):
        super().__init__(parent)
        self.source, self.rec = source, recogniser
        self.method = method
        self.realtime, self.loop = realtime, loop
        self.rates: dict[str, float] = {}
        self.frames_scanned = 0
        self._stop = self.stop_event
        self._ui_free = threading.Event()
        self._ui_free.set()
        self._scanners: dict = {}
        self._readers: dict = {}
        self._times: dict[str, list[float]] = {}
        self._rated_last: str | None = None
        self.error: str | None = None

    def stop(self) -> None:
        """Ask the thread to stop; returns at once (the thread ends by itself)."""
        self._stop.set()

    def frame_shown(self) -> None:
        """The UI drew the last frame: the next scanned one may be sent."""
        self._ui_free.set()

    def _scanner(self, method: str):
        from ...core.detect.scanner import Scanner

        from ...core.detect.reading import HandReader

        if method not in self._scanners:
            self._scanners[method] = Scanner(self.rec, method)
            self._readers[method] = HandReader(self.rec, method)
        return self._scanners[method]

    def _rate(self, method: str, now: float) -> None:
        """A frame of ``method`` scanned at ``now``: its frames/s over the last second of its own frames. A method
        switched back to starts its count afresh (its old frames' times would spread its frames over the time the
        other method ran, and show it slower than it is)."""
        if method != self._rated_last:
            self._times[method] = []
            self._rated_last = method
        ts = self._times.setdefault(method, [])
        ts.append(now)
        while ts and now - ts[0] > 1.0:
            ts.pop(0)
        if len(ts) >= 2:
            self.rates[method] = (len(ts) - 1) / (ts[-1] - ts[0])

    def run(self) -> None:
        """Open the source; read, scan and emit frames until stopped or the source ends."""
        is_camera = isinstance(self.source, int)
        cap = cv2.VideoCapture(self.source if is_camera else str(self.source))
        message = "stopped"
        try:
            if not cap.isOpened():
                raise OSError(f"could not open {'camera ' + str(self.source) if is_camera else self.source}")
            fps = cap.get(cv2.CAP_PROP_FPS) or 0.0
            interval = 1.0 / fps if fps > 0 and self.realtime and not is_camera else 0.0
            next_t = time.perf_counter()
            while not self._stop.is_set():
                ok, bgr = cap.read()
                if not ok or bgr is None:
                    if not is_camera and self.loop and self.frames_scanned:
                        cap.set(cv2.CAP_PROP_POS_FRAMES, 0)
                        continue
                    message = "camera stopped delivering frames" if is_camera else "end of video"
                    break
                rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
                method = self.method
                result = self._scanner(method).scan(rgb)
                reader = self._readers[method]
                reading = reader.read(rgb, result)
                reading.candidates = reading_candidates(reading, getattr(reader, "last_probabilities", None), result)
                self.frames_scanned += 1
                self._rate(method, time.perf_counter())
                if self._ui_free.is_set():
                    self._ui_free.clear()
                    self.frame.emit(rgb, result, method, reading)
                if interval:
                    next_t = pace(next_t, interval, self._stop)
        except Exception as exc:  # noqa: BLE001 - a failing source or model ends the scan, not the app
            from ...core.errors import ClassMapError

            message = str(exc) if isinstance(exc, (ClassMapError, OSError)) else f"internal error: {exc!r}"
            self.error = message
        finally:
            cap.release()
        self.ended.emit(message)


def reading_candidates(reading, prob, result, top: int = 5) -> list[tuple[int, float, str]]:
    """The rows of Find the hand's candidate table, from the same source as its big name: ``(class,
    value, what the value is)``, best first. With the reader's class probabilities ``prob (C,)``: the top
    classes by probability (the reading's own class first: it is the most probable class of the most probable
    shape, so it leads its shape's rows); without them, the reading's class, then the best window's other
    candidates by score. No hand: the best window's candidates (what it looked most like)."""
    if reading is None or not reading.found or reading.label is None:
        if result is None or result.label is None:
            return []
        return [(int(c), float(s), "score") for c, s in zip(result.top_classes, result.top_scores)]
    first = int(reading.label)
    if prob is not None and len(prob):
        p = np.asarray(prob, np.float64)
        order = [c for c in np.argsort(-p, kind="stable")[:top + 1] if p[c] > 0 and c != first][:top - 1]
        return [(first, float(p[first]), "probability")] + [(int(c), float(p[c]), "probability") for c in order]
    rest = [(int(c), float(s), "score") for c, s in zip(result.top_classes, result.top_scores) if int(c) != first]
    return [(first, float(reading.confidence), "confidence")] + rest[:top - 1]
