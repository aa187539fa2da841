"""Projects on disk: an image set, its captures, settings and the trained recogniser, saved safely.

Sits above the recogniser (a project holds one) and the model store (whose atomic folder swaps
it reuses); nothing below imports it.

* :mod:`.format` — :class:`Project`, :func:`save_project`, :func:`load_project`, :func:`project_info`
  (a folder, or one ``.cmproj`` zip; atomic; only JSON, PNG and pickle-free ``.npz`` are read).
* :mod:`.containers` — a project's files as a folder or a zip archive behind one interface.
* :mod:`.archive` — zip archives whose members cannot escape their folder or exhaust memory.
* :mod:`.autosave` — :class:`Autosaver` and :class:`RecentProjects`, in folders the caller names.
"""
from .autosave import Autosaver, RecentProjects
from .format import ARCHIVE_SUFFIX, Project, load_project, project_info, save_project

__all__ = ["ARCHIVE_SUFFIX", "Autosaver", "Project", "RecentProjects", "load_project", "project_info", "save_project"]
