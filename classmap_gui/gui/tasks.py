"""Long work off the UI thread: core's ``progress``/``should_stop`` protocol adapted to Qt signals.

``TaskRunner.run(title, fn, ...)`` starts ``fn(progress, should_stop) -> result`` on a worker thread and
returns a :class:`Task` handle. Each handle has its own signals, so a panel listens to the task it started
and never recognises a job by its title — the shape of napari's ``create_worker`` and Orange's
``ConcurrentWidgetMixin``. The runner's own signals serve the window-wide progress strip and error dialog.

Tasks overlap (training while a map is computed, a save while evaluating): each reads data that no edit
changes in place. A task is refused — None, and ``refused(title, message)`` with a sentence the window
shows — only when it would collide: one of the same title is running, or it or a running one is
``exclusive`` (it replaces the open project: open, import). The UI thread never waits for a worker: a
task's outcome is handled when its thread has finished (its ``done`` signal).

Progress calls are throttled (at most one signal per 50 ms, plus every change of stage); the remaining
time is estimated from the elapsed time and the fraction done. Results, errors and cancellations come
back on the UI thread. An error is a short message a person can act on plus the technical details
(the traceback) kept apart for the "Details" button and the log.
"""
from __future__ import annotations

import errno
import re
import logging
import time
import traceback
from typing import Any, Callable

from PySide6.QtCore import QObject, Signal

from ..core.errors import Cancelled, ClassMapError
from .threads import UiThread

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
    from .errorlog import where

    return f"Something went wrong inside ClassMap Studio ({type(exc).__name__}). Nothing you saved is " \
           f"affected. {where()}", True


class _Worker(UiThread):
    """Runs one task's function; its outcome (``kind``, ``payload``) is read once the thread has finished."""

    progressed = Signal(float, str, float)

    def __init__(self, fn: TaskFn, expected_s: float | None = None):
        super().__init__()
        self.fn = fn
        self.expected_s = expected_s
        self.outcome: tuple[str, Any] = ("cancel", None)
        self._last_emit, self._last_stage, self._t0 = 0.0, None, time.perf_counter()

    def _progress(self, fraction: float, stage: str) -> None:
        now = time.perf_counter()
        if stage == self._last_stage and now - self._last_emit < 0.05 and fraction < 1.0:
            return
        self._last_emit, self._last_stage = now, stage
        elapsed = now - self._t0
        eta = elapsed * (1.0 - fraction) / fraction if 0.02 < fraction < 1.0 and elapsed > 0.5 else -1.0
        if self.expected_s is not None and fraction < 1.0:
            # a task whose length was measured (the hand-model build): its stages' fractions are no clock, so a
            # fast first stage must not promise "2 min left" of a 15-minute build; the plan is the floor
            eta = max(eta, self.expected_s - elapsed, 1.0)
        self.progressed.emit(float(fraction), str(stage), float(eta))

    def run(self) -> None:
        """The worker thread: run the task and keep its outcome: ("ok", result), ("error", (message,
        details, internal, bug)) or ("cancel", None). ``internal``: the details are worth a button;
        ``bug``: not a refusal of bad input, so its traceback is logged (once, by the runner)."""
        self._t0 = time.perf_counter()
        try:
            result = self.fn(self._progress, self.stop_event.is_set)
        except Cancelled:
            self.outcome = ("cancel", None)
        except Exception as exc:  # noqa: BLE001 - any failure must reach the user, not kill the app
            message, bug = friendly_error(exc)
            details = (f"{type(exc).__name__}: {exc}\n\n" if message != str(exc) else "") + traceback.format_exc()
            internal = bug or message != str(exc)  # show the details button when words were left out
            self.outcome = ("error", (message, details, internal, bug))
        else:
            self.outcome = ("cancel", None) if self.stop_event.is_set() else ("ok", result)


class Task(QObject):
    """One background job. Signals: ``progressed(fraction, stage, eta_s)``, ``succeeded(result)``,
    ``failed(message)``, ``cancelled()``, ``finished()`` (after any of the three)."""

    progressed = Signal(float, str, float)
    succeeded = Signal(object)
    failed = Signal(str)
    cancelled = Signal()
    finished = Signal()

    def __init__(self, title: str, parent: QObject | None = None, exclusive: bool = False,
                 abandonable: bool = False):
        super().__init__(parent)
        self.title = title
        self.exclusive = exclusive
        self.abandonable = abandonable
        self.error = ""
        self.details = ""
        self.internal = False
        self.result = None
        self._worker: _Worker | None = None
        self._runner: TaskRunner | None = None

    def _worker_done(self) -> None:
        # a slot of this object (a child of its runner): dropped by Qt when the runner has gone
        if self._runner is not None:
            self._runner._done(self)

    def cancel(self) -> None:
        """Ask the task to stop; it ends at its next ``should_stop()`` check."""
        if self._worker is not None:
            self._worker.request_stop()


class TaskRunner(QObject):
    """Runs long tasks on worker threads, several at a time when they do not collide.

    Signals (window-wide): ``started(title)``, ``progressed(fraction, stage, eta_seconds)`` of the newest
    running task (eta < 0 when unknown), ``finished(title)`` after success, failure or cancel,
    ``failed(title, message)``, ``cancelled(title)``, ``refused(title, message)``, ``busyChanged(bool)``.
    """

    started = Signal(str)
    progressed = Signal(float, str, float)
    finished = Signal(str)
    failed = Signal(str, str)
    cancelled = Signal(str)
    refused = Signal(str, str)
    busyChanged = Signal(bool)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.running: list[Task] = []  # oldest first
        self.last_task: Task | None = None

    @property
    def busy(self) -> bool:
        """True while any background task is running."""
        return bool(self.running)

    @property
    def task(self) -> Task | None:
        """The newest running task (the one the progress strip shows), or None."""
        return self.running[-1] if self.running else None

    @property
    def last_error(self) -> str:
        """The error message of the last task, empty when it succeeded or none ran."""
        return self.last_task.error if self.last_task is not None else ""

    @property
    def last_traceback(self) -> str:
        """The traceback of the last task's error, empty when none."""
        return self.last_task.details if self.last_task is not None else ""

    def collision(self, title: str, exclusive: bool = False) -> str:
        """Why a task ``title`` cannot start now (a sentence for a person), or "" when it can."""
        if not self.running:
            return ""
        names = " and ".join(t.title for t in self.running)
        if any(t.title == title for t in self.running):
            return f"{title} is already running; wait for it to finish or cancel it."
        if exclusive or any(t.exclusive for t in self.running):
            return f"{title} has to wait: {names} is still running. Cancel it or try again when it has finished."
        return ""

    def run(self, title: str, fn: TaskFn, on_done: Callable[[Any], None] | None = None,
            on_error: Callable[[str], None] | None = None, *, exclusive: bool = False,
            abandonable: bool = False, expected_s: float | None = None) -> Task | None:
        """Start ``fn`` on a worker thread and return its :class:`Task`; None (and ``refused``) when it would
        collide with a running task (:meth:`collision`). ``exclusive``: a task that replaces the open project,
        run alone. ``on_done(result)`` runs on the UI thread after success; ``on_error(message)`` after failure.
        ``abandonable``: work that may sit in a library call no ``should_stop`` reaches (a model file's network
        run by onnxruntime or OpenCV): Cancel ends the task at once (``cancelled``, the window free again)
        and the thread's eventual outcome is dropped; nothing of it reaches the project.
        ``expected_s``: the whole task's measured length, when known: the time left shown is never less than
        what remains of it (the progress fractions of unequal stages are no clock).
        """
        why = self.collision(title, exclusive)
        if why:
            self.refused.emit(title, why)
            return None
        task = Task(title, self, exclusive, abandonable)
        if on_done is not None:
            task.succeeded.connect(on_done)
        if on_error is not None:
            task.failed.connect(on_error)
        w = task._worker = _Worker(fn, expected_s)
        task._runner = self
        w.progressed.connect(task.progressed)  # queued to the UI thread, where the task lives
        task.progressed.connect(lambda f, s, eta: self.task is task and self.progressed.emit(f, s, eta))
        w.done.connect(task._worker_done)
        self.running.append(task)
        if len(self.running) == 1:
            self.busyChanged.emit(True)
        self.started.emit(title)
        w.start()
        return task

    def cancel(self) -> None:
        """Ask every running task to stop (the window's Cancel button); abandonable ones end now."""
        for t in list(self.running):
            t.cancel()
            if t.abandonable:
                self._abandon(t)

    def _abandon(self, task: Task) -> None:
        """End ``task`` as cancelled without waiting for its thread, whose outcome :meth:`_done` then drops."""
        self.running.remove(task)
        task._worker, self.last_task = None, task
        if not self.running:
            self.busyChanged.emit(False)
        task.cancelled.emit()
        self.cancelled.emit(task.title)
        task.finished.emit()
        self.finished.emit(task.title)

    def wait(self, ms: int = 30000) -> bool:
        """Block until the running tasks' threads end: for tests and shutdown only, never the UI in use."""
        deadline = time.perf_counter() + ms / 1000
        return all(t._worker is None or t._worker.wait(max(0, int(1000 * (deadline - time.perf_counter()))))
                   for t in list(self.running))

    def _done(self, task: Task) -> None:
        """The task's thread has finished (so nothing waits): deliver its outcome on the UI thread."""
        if task not in self.running:
            return
        self.running.remove(task)
        w, task._worker, self.last_task = task._worker, None, task
        if not self.running:
            self.busyChanged.emit(False)
        kind, payload = w.outcome
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

    def _fail(self, task: Task, message: str, details: str, internal: bool, bug: bool = True) -> None:
        task.error, task.details, task.internal = message, details, internal
        if bug:  # an internal error: its traceback goes to the log
            log.error("%s failed\n%s", task.title, details)
        else:  # bad input refused (a damaged file, a full disk): one line, the person saw the message
            log.warning("%s failed: %s", task.title, " ".join(message.split()))
        task.failed.emit(message)
        self.failed.emit(task.title, message)
