"""Threads the UI starts and never waits for.

A :class:`UiThread` belongs to the application, not to the widget that started it, so closing a panel
never destroys a running thread; once its ``run`` has returned it deletes itself (Qt's ``finished`` ->
``deleteLater``). The UI stops one by signalling (:meth:`UiThread.request_stop`: the loop sees the event
and returns) and goes on at once; whatever must happen when the thread has really ended is connected to
its ``done`` signal. Nothing on the UI thread calls ``QThread.wait()``: only at exit, after the window
has gone, are the threads still running joined (:func:`join_running`), so none is destroyed mid-run.
"""
from __future__ import annotations

import atexit
import threading

from PySide6.QtCore import QCoreApplication, QThread, Signal

_running: set[UiThread] = set()
_hooked = False


class UiThread(QThread):
    """A QThread for work the UI must not wait for. Subclasses loop in ``run`` until ``stop_event`` is set.

    ``done`` is emitted on the UI thread once ``run`` has returned; then the object deletes itself.
    """

    done = Signal()

    def __init__(self, parent=None):  # ``parent`` is accepted and ignored on purpose
        super().__init__(QCoreApplication.instance())
        self.stop_event = threading.Event()
        self.finished.connect(self._ended)

    def start(self, *args) -> None:
        """Start the thread; it is kept (for :func:`join_running` at exit) until it has finished."""
        global _hooked  # one hook per process
        app = QCoreApplication.instance()
        if not _hooked and app is not None:  # before the application object goes, its threads must have ended
            app.aboutToQuit.connect(join_running)
            _hooked = True
        _running.add(self)
        super().start(*args)

    def request_stop(self) -> None:
        """Ask the loop to stop; returns at once (connect to ``finished`` for what follows the real end)."""
        self.stop_event.set()

    @property
    def stopping(self) -> bool:
        """True once a stop was requested."""
        return self.stop_event.is_set()

    def _ended(self) -> None:  # on the UI thread (queued from the worker's ``finished``)
        _running.discard(self)
        self.done.emit()  # first: what reacts to the end may still read the thread's attributes
        self.deleteLater()


def running() -> list[UiThread]:
    """The UI threads started and not yet finished."""
    return list(_running)


def join_running(timeout_ms: int = 5000) -> bool:
    """At exit only: ask every running UI thread to stop and join it; True when all ended in time."""
    ok = True
    for t in list(_running):
        try:
            t.request_stop()
            ok = t.wait(timeout_ms) and ok
        except RuntimeError:  # already deleted by Qt
            pass
    return ok


def exit_code(code: int, timeout_ms: int = 2000) -> int:
    """``code`` once every UI thread has ended (the app's last step, after the window has closed). A thread
    still inside a library call that never returns (a task the person abandoned) cannot be joined, and Qt
    aborts a process whose running QThread is destroyed ("QThread: Destroyed while thread is still running",
    exit 134); so then the process ends here with ``code`` and its output flushed, without destroying it."""
    if join_running(timeout_ms):
        return code
    import logging
    import os
    import sys

    logging.getLogger("classmap_gui").warning("exiting while %d abandoned background task(s) still ran",
                                              len(_running))
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


atexit.register(join_running)
