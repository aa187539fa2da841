"""The GUI's one model object: a thin Qt wrapper over core's headless :class:`Workspace`.

All editing, validity and capture logic lives in ``core.workspace`` (tested without a window); this
object only turns the workspace's change notes into signals panels listen to, and forwards the
attributes and methods panels call. Panels never talk to each other.
"""
from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from ..core.workspace import DATASET, MESSAGE, MODEL, STATE, Workspace


def default_capture_root() -> Path:
    """Where captures of a not-yet-saved project go: the platform's user data folder."""
    from platformdirs import user_data_dir

    return Path(user_data_dir("classmap-studio", appauthor=False)) / "captures" / time.strftime("%Y%m%d-%H%M%S")


class Project(QObject):
    """The open project. Signals:

    - ``datasetChanged``: images, labels or class names changed.
    - ``modelChanged``: the trained recogniser / report was set or cleared.
    - ``stateChanged``: path or dirty flag changed (window title, status bar).
    - ``message(str)``: a short note for the status bar.

    Every attribute and method of :class:`Workspace` is available on it (``imageset``, ``add_class``…).
    """

    datasetChanged = Signal()
    modelChanged = Signal()
    stateChanged = Signal()
    message = Signal(str)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        signals = {DATASET: self.datasetChanged, MODEL: self.modelChanged, STATE: self.stateChanged}

        def note(kind: str, text: str) -> None:
            (self.message.emit(text) if kind == MESSAGE else signals[kind].emit())
        # looked up at call time, so a test may point captures elsewhere
        self.workspace = Workspace(capture_root=lambda: default_capture_root(), listener=note)

    def __getattr__(self, name):
        # only reached for names QObject does not have: the workspace's state and edits
        if name == "workspace":
            raise AttributeError(name)
        return getattr(self.workspace, name)

    def __setattr__(self, name, value):
        if name != "workspace" and "workspace" in self.__dict__ and hasattr(self.workspace, name):
            setattr(self.workspace, name, value)
        else:
            super().__setattr__(name, value)
