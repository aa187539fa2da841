"""Save and open projects: the one seam between the GUI and core's project format.

The format, its safety checks and atomic saves belong to ``classmap_gui.core.project``;
this module only converts between the GUI's Project model and core's ``Project`` record.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..core.data import ImageSet
from ..core import project as store
from ..core.project.runs import RunLog


@dataclass
class ProjectData:
    """A loaded project as the GUI keeps it: images, recogniser, settings, captures folder, path and runs."""
    imageset: ImageSet
    recogniser: object | None = None
    settings: dict = field(default_factory=dict)
    captures_dir: Path | None = None
    path: Path | None = None
    runs: RunLog | None = None


def to_core(data: ProjectData) -> store.Project:
    """The core store's ``Project`` for ``data``, ready to save."""
    runs = data.runs or RunLog()
    return store.Project(imageset=data.imageset, recogniser=data.recogniser, settings=dict(data.settings),
                         captures_dir=data.captures_dir,
                         runs=RunLog(runs.records, runs.models, runs.keep_models, runs.next_id))  # a copy: saving runs in the background


def save(data: ProjectData, path: str | Path, *, progress=None, should_stop=None) -> Path:
    """Write the project to ``path`` (a folder, or one ``.cmproj`` file); returns the path written."""
    return Path(store.save_project(to_core(data), path, progress=progress, should_stop=should_stop))


def load(path: str | Path, *, captures_to: str | Path | None = None, progress=None, should_stop=None) -> ProjectData:
    """Open the project at ``path`` (folder or ``.cmproj``), unpacking captures into ``captures_to``."""
    p = store.load_project(path, captures_to=captures_to, progress=progress, should_stop=should_stop)
    return ProjectData(p.imageset, p.recogniser, dict(p.settings or {}), p.captures_dir, p.path, p.runs)
