"""Long work off the UI thread: core's ``progress``/``should_stop`` protocol adapted to Qt signals.

``TaskRunner.run(title, fn, ...)`` starts ``fn(progress, should_stop) -> result`` on a worker thread and
returns a :class:`Task` handle (None when another task is running). Each handle has its own signals,
so a panel listens to the task it started and never recognises a job by its title — the shape of
napari's ``create_worker`` and Orange's ``ConcurrentWidgetMixin``. The runner's own signals serve the
window-wide progress strip and error dialog.

Progress calls are throttled (at most one signal per 50 ms, plus every change of stage); the remaining
time is estimated from the elapsed time and the fraction done. Results, errors and cancellations come
back on the UI thread. An error is a short message a person can act on plus the technical details
(the traceback) kept apart for the "Details" button and the log.
"""
from __future__ import annotations

import errno
import re
import logging
import threading
import time
import traceback
from typing import Any, Callable

from PySide6.QtCore import QObject, QThread, Signal

from ..core.errors import Cancelled, ClassMapError

TaskFn = Callable[[Callable[[float, str], None], Callable[[], bool]], Any]
log = logging.getLogger("classmap_gui")


def friendly_error(exc: BaseException) -> tuple[str, bool]:
    """``(message for a person, is_internal)`` for an exception raised by a task.

    Bad input (core's errors) and the machine's limits (disk full, no permission, out of memory) get
    a plain sentence; anything else is an internal error, whose message says where the log is.
    """
    if isinstance(exc, ClassMapError):
        # a parser's own words ("(JSONDecodeError: Expecting value: line 2 column 1 (char 11))") mean
        # nothing to a person: they stay in the details, the sentence keeps what and where
        text = re.sub(r"\s*\((?:[A-Za-z]+Error|not a readable zip)[^()]*(?:\([^()]*\)[^()]*)*\)", "", str(exc))
        return text, False
    if isinstance(exc, MemoryError):
        return "Not enough memory for this task. Try a smaller data set or fewer features.", False
    if isinstance(exc, ConnectionError):
        return f"Could not connect: {exc.strerror or exc}. Check the address and that the other side is running.", False
    if isinstance(exc, OSError):
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        if exc.errno == errno.ENOSPC:
            return f"The disk is full{where}. Free some space and try again; nothing was overwritten.", False
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            return f"No permission to write there{where}. Choose another folder.", False
        if exc.errno == errno.ENOENT:
            return f"A file or folder was not found{where}.", False
        return f"The file system refused{where}: {exc.strerror or exc}.", False
    from .errorlog import where  # noqa: PLC0415

    return f"Something went wrong inside ClassMap Studio ({type(exc).__name__}). Nothing you saved is " \
           f"affected. {where()}", True


class _Worker(QThread):
    progressed = Signal(float, str, float)
    succeeded = Signal(object)
    errored = Signal(str, str, bool)
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
        """The worker thread: run the task, then emit ``succeeded``, ``errored`` or ``stopped``."""
        self._t0 = time.perf_counter()
        try:
            result = self.fn(self._progress, self.stop_event.is_set)
        except Cancelled:
            self.stopped.emit()
        except Exception as exc:  # noqa: BLE001 - any failure must reach the user, not kill the app
            message, internal = friendly_error(exc)
            details = (f"{type(exc).__name__}: {exc}\n\n" if message != str(exc) else "") + traceback.format_exc()
            internal = internal or message != str(exc)  # show the details button when words were left out
            if internal:
                log.error("task failed\n%s", details)
            self.errored.emit(message, details, internal)
        else:
            if self.stop_event.is_set():
                self.stopped.emit()
            else:
                self.succeeded.emit(result)


class Task(QObject):
    """One background job. Signals: ``progressed(fraction, stage, eta_s)``, ``succeeded(result)``,
    ``failed(message)``, ``cancelled()``, ``finished()`` (after any of the three)."""

    progressed = Signal(float, str, float)
    succeeded = Signal(object)
    failed = Signal(str)
    cancelled = Signal()
    finished = Signal()

    def __init__(self, title: str, parent: QObject | None = None):
        super().__init__(parent)
        self.title = title
        self.error = ""
        self.details = ""
        self.internal = False
        self.result = None
        self._stop = threading.Event()

    def cancel(self) -> None:
        """Ask the task to stop; it ends at its next ``should_stop()`` check."""
        self._stop.set()


class TaskRunner(QObject):
    """Runs one long task at a time on a worker thread.

    Signals (window-wide): ``started(title)``, ``progressed(fraction, stage, eta_seconds)`` (eta < 0 when
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
        self.task: Task | None = None
        self.last_task: Task | None = None

    @property
    def busy(self) -> bool:
        """True while a background task is running (the runner takes one at a time)."""
        return self._worker is not None

    @property
    def last_error(self) -> str:
        """The error message of the last task, empty when it succeeded or none ran."""
        return self.last_task.error if self.last_task is not None else ""

    @property
    def last_traceback(self) -> str:
        """The traceback of the last task's error, empty when none."""
        return self.last_task.details if self.last_task is not None else ""

    def run(self, title: str, fn: TaskFn, on_done: Callable[[Any], None] | None = None,
            on_error: Callable[[str], None] | None = None) -> Task | None:
        """Start ``fn`` unless a task is running (then return None and do nothing).

        ``on_done(result)`` runs on the UI thread after success; ``on_error(message)`` after failure.
        """
        if self._worker is not None:
            return None
        task = Task(title, self)
        if on_done is not None:
            task.succeeded.connect(on_done)
        if on_error is not None:
            task.failed.connect(on_error)
        w = _Worker(fn, task._stop)
        w.progressed.connect(task.progressed)
        w.progressed.connect(self.progressed)
        w.succeeded.connect(lambda r: self._done(w, task, "ok", r))
        w.errored.connect(lambda m, tb, internal: self._done(w, task, "error", (m, tb, internal)))
        w.stopped.connect(lambda: self._done(w, task, "cancel", None))
        self._worker, self.task = w, task
        self.busyChanged.emit(True)
        self.started.emit(title)
        w.start()
        return task

    def cancel(self) -> None:
        """Ask the running task to stop."""
        if self.task is not None:
            self.task.cancel()

    def wait(self, ms: int = 30000) -> bool:
        """Block until the worker thread ends (for tests and shutdown)."""
        w = self._worker
        return True if w is None else w.wait(ms)

    def _done(self, w: _Worker, task: Task, kind: str, payload) -> None:
        if self._worker is not w:
            return
        w.wait()
        self._worker, self.task, self.last_task = None, None, task
        self.busyChanged.emit(False)
        if kind == "ok":
            task.result = payload
            try:
                task.succeeded.emit(payload)
            except Exception as exc:  # noqa: BLE001 - a failing result handler is shown, not fatal
                self._fail(task, *friendly_error(exc)[:1], traceback.format_exc(), True)
        elif kind == "error":
            self._fail(task, *payload)
        else:
            task.cancelled.emit()
            self.cancelled.emit(task.title)
        task.finished.emit()
        self.finished.emit(task.title)
        w.deleteLater()

    def _fail(self, task: Task, message: str, details: str, internal: bool) -> None:
        task.error, task.details, task.internal = message, details, internal
        if internal:
            log.error("%s failed\n%s", task.title, details)
        task.failed.emit(message)
        self.failed.emit(task.title, message)
