"""One runner for long work: core's ``progress``/``should_stop`` protocol adapted to Qt signals.

A task is ``fn(progress, should_stop) -> result`` run on a worker thread. Progress calls are
throttled (at most one signal per 50 ms, plus every change of stage) so the UI thread is
never flooded; the remaining time is estimated from the elapsed time and the fraction done.
Results, errors and cancellations come back on the UI thread.
"""
from __future__ import annotations

import threading
import time
import traceback
from typing import Any, Callable

from PySide6.QtCore import QObject, QThread, Signal

from ..core.errors import Cancelled, ClassMapError

TaskFn = Callable[[Callable[[float, str], None], Callable[[], bool]], Any]


class _Worker(QThread):
    progressed = Signal(float, str, float)
    succeeded = Signal(object)
    errored = Signal(str, str)
    stopped = Signal()

    def __init__(self, fn: TaskFn, stop_event: threading.Event):
        super().__init__()
        self.fn, self.stop_event = fn, stop_event
        self._last_emit, self._last_stage, self._t0 = 0.0, None, time.perf_counter()

    def _progress(self, fraction: float, stage: str) -> None:
        now = time.perf_counter()
        if stage == self._last_stage and now - self._last_emit < 0.05 and fraction < 1.0:
            return
        self._last_emit, self._last_stage = now, stage
        elapsed = now - self._t0
        eta = elapsed * (1.0 - fraction) / fraction if 0.02 < fraction < 1.0 and elapsed > 0.5 else -1.0
        self.progressed.emit(float(fraction), str(stage), float(eta))

    def run(self) -> None:
        self._t0 = time.perf_counter()
        try:
            result = self.fn(self._progress, self.stop_event.is_set)
        except Cancelled:
            self.stopped.emit()
        except ClassMapError as exc:
            self.errored.emit(str(exc), "")
        except MemoryError:
            self.errored.emit("Not enough memory for this task. Try a smaller data set or fewer features.",
                              traceback.format_exc())
        except Exception as exc:  # noqa: BLE001 - any failure must reach the user, not kill the app
            self.errored.emit(f"{type(exc).__name__}: {exc}", traceback.format_exc())
        else:
            if self.stop_event.is_set():
                self.stopped.emit()
            else:
                self.succeeded.emit(result)


class TaskRunner(QObject):
    """Runs one long task at a time on a worker thread.

    Signals: ``started(title)``, ``progressed(fraction, stage, eta_seconds)`` (eta < 0 when
    unknown), ``finished(title)`` after success, failure or cancel, ``failed(title, message)``,
    ``cancelled(title)``, ``busyChanged(bool)``.
    """

    started = Signal(str)
    progressed = Signal(float, str, float)
    finished = Signal(str)
    failed = Signal(str, str)
    cancelled = Signal(str)
    busyChanged = Signal(bool)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._worker: _Worker | None = None
        self._stop = threading.Event()
        self.title = ""
        self.last_error = ""
        self.last_traceback = ""

    @property
    def busy(self) -> bool:
        return self._worker is not None

    def run(self, title: str, fn: TaskFn, on_done: Callable[[Any], None] | None = None,
            on_error: Callable[[str], None] | None = None) -> bool:
        """Start ``fn`` unless a task is running (then return False and do nothing).

        ``on_done(result)`` runs on the UI thread after success; ``on_error(message)`` after failure.
        """
        if self._worker is not None:
            return False
        self._stop = threading.Event()
        self.title = title
        w = _Worker(fn, self._stop)
        w.progressed.connect(self.progressed)
        w.succeeded.connect(lambda r: self._done(w, "ok", r, on_done, on_error))
        w.errored.connect(lambda m, tb: self._done(w, "error", (m, tb), on_done, on_error))
        w.stopped.connect(lambda: self._done(w, "cancel", None, on_done, on_error))
        self._worker = w
        self.busyChanged.emit(True)
        self.started.emit(title)
        w.start()
        return True

    def cancel(self) -> None:
        """Ask the running task to stop; it ends at its next ``should_stop()`` check."""
        self._stop.set()

    def wait(self, ms: int = 30000) -> bool:
        """Block until the worker thread ends (for tests and shutdown)."""
        w = self._worker
        return True if w is None else w.wait(ms)

    def _done(self, w: _Worker, kind: str, payload, on_done, on_error) -> None:
        if self._worker is not w:
            return
        w.wait()
        self._worker = None
        title = self.title
        self.busyChanged.emit(False)
        if kind == "ok":
            try:
                if on_done is not None:
                    on_done(payload)
            except Exception as exc:  # noqa: BLE001
                self.last_error, self.last_traceback = f"{type(exc).__name__}: {exc}", traceback.format_exc()
                self.failed.emit(title, self.last_error)
        elif kind == "error":
            self.last_error, self.last_traceback = payload
            if on_error is not None:
                on_error(payload[0])
            self.failed.emit(title, payload[0])
        else:
            self.cancelled.emit(title)
        self.finished.emit(title)
        w.deleteLater()
