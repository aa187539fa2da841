"""The GUI's project: core's evented :class:`~classmap_gui.core.project.Project`, with captures of a
never-saved project going to the platform's user data folder. Panels subscribe to its signals directly."""
from __future__ import annotations

import time
from pathlib import Path

from ..core.project import Project
from ..user_dirs import data_dir


def default_capture_root() -> Path:
    """Where captures of a not-yet-saved project go: the platform's user data folder."""
    return data_dir() / "captures" / time.strftime("%Y%m%d-%H%M%S")


def app_project() -> Project:
    """The window's project (its capture folder looked up at call time, so a test may point it elsewhere)."""
    return Project(default_captures=lambda: default_capture_root())
