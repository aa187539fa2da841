"""The main window's safety net: the autosave every minute of unsaved work, the offer to recover it after a
crash, and the File menu's recent projects (:class:`AutosaveAndRecent`, a part of
:class:`~.mainwindow.MainWindow`)."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QMessageBox

from .. import user_dirs


class AutosaveAndRecent:
    """The window's autosave (:class:`~classmap_gui.core.project.Autosaver`, ticked by a 10 s timer, run as a
    background task when due), its crash recovery and its recent projects menu. Mixed into the main window, which
    provides ``project``, ``runner``, ``open_project`` and (after its menus) ``recent_menu``."""

    def _setup_autosave(self) -> None:
        from ..core.project import Autosaver, RecentProjects
        try:
            self.autosaver = Autosaver(user_dirs.data_dir() / "autosave", interval=60)
            self.recent = RecentProjects(user_dirs.config_dir())
        except OSError:
            self.autosaver, self.recent = None, None
        self.autosave_timer = QTimer(self)
        self.autosave_timer.setInterval(10_000)
        self.autosave_timer.timeout.connect(self._autosave_tick)
        if not self.property("no_autosave"):
            self.autosave_timer.start()
        self._fill_recent()

    def _autosave_tick(self) -> None:
        p, a = self.project, self.autosaver
        if a is None or p.imageset is None or self.runner.busy or not a.due(p.dirty):
            return
        data = p.snapshot()
        data.captures_dir = None  # an autosave is a safety copy of the work, not of the captures folder
        a.mark_saved()
        path = p.path
        self.runner.run("Autosaving", lambda progress, should_stop: a.save(
            data, path, progress=progress, should_stop=should_stop))

    def _discard_autosaves(self, *paths) -> None:
        """Drop the autosaves of the project under each of its names (before and after a save)."""
        if self.autosaver is None:
            return
        for path in {None, *paths}:
            try:
                self.autosaver.discard(path)
            except OSError:
                pass
        self.autosaver.mark_saved()

    def offer_recovery(self) -> bool:
        """At start-up: when an autosave was left behind (a crash), offer to open it."""
        if self.autosaver is None:
            return False
        try:
            pending = [a for a in self.autosaver.pending() if "error" not in a]
        except OSError:
            return False
        fresh = []
        for a in pending:
            # an autosave older than the project file it belongs to holds nothing the file lacks
            user_file = next((Path(r) for r in (self.recent.list() if self.recent is not None else [])
                              if self.autosaver.autosave_path(r) == Path(a["autosave"])), None)
            if user_file is not None and user_file.exists() and \
                    user_file.stat().st_mtime >= Path(a["autosave"]).stat().st_mtime:
                Path(a["autosave"]).unlink(missing_ok=True)
            else:
                fresh.append(a)
        if not fresh:
            return False
        a = fresh[0]
        r = QMessageBox.question(
            self, "Recover unsaved work?",
            f"ClassMap Studio found an autosave of {a.get('name') or 'an unsaved project'} "
            f"({a.get('n_images', '?')} images, saved {a.get('saved', '')}). Open it?",
            QMessageBox.Open | QMessageBox.Discard | QMessageBox.Ignore)
        if r == QMessageBox.Open:
            return self.open_project(str(a["autosave"]))
        if r == QMessageBox.Discard:
            Path(a["autosave"]).unlink(missing_ok=True)
        return False

    def _recent_add(self, path) -> None:
        if self.recent is not None:
            try:
                self.recent.add(path)
            except OSError:
                pass
            self._fill_recent()

    def _fill_recent(self) -> None:
        menu = getattr(self, "recent_menu", None)
        if menu is None:
            return
        menu.clear()
        items = self.recent.list() if self.recent is not None else []
        for path in items:
            a = menu.addAction(str(path))
            a.triggered.connect(lambda _=False, path=str(path): self.open_project(path))
        menu.setEnabled(bool(items))
