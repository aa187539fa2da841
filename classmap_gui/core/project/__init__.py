"""Projects on disk: an image set, its captures, settings and the trained recogniser, saved safely.

Sits above the recogniser (a project holds one) and the model store (whose atomic folder swaps
it reuses); nothing below imports it.

* :mod:`.model` — :class:`Project`, the one open project: headless, evented (psygnal signals views
  subscribe to, settings an ``EventedDict``, "unsaved" derived from its edits, the live stream it carries);
  the app, the file format and the tests share it.
* :mod:`.format` — :func:`save_project`, :func:`load_project`, :func:`project_info`
  (a folder, or one ``.cmproj`` zip; atomic; only JSON, PNG and pickle-free ``.npz`` are read).
* :mod:`.captures` — captured frames written to disk (atomically) the moment they are taken.
* :mod:`.containers` — a project's files as a folder or a zip archive behind one interface.
* :mod:`.archive` — zip archives whose members cannot escape their folder or exhaust memory.
* :mod:`.autosave` — :class:`Autosaver` and :class:`RecentProjects`, in folders the caller names.
"""
from .autosave import Autosaver, RecentProjects
from .format import ARCHIVE_SUFFIX, load_project, project_info, save_project
from .model import Project

__all__ = ["ARCHIVE_SUFFIX", "Autosaver", "Project", "RecentProjects", "load_project", "project_info", "save_project"]
