"""The main window: four panels over one Project, menus, status bar, the task runner; its autosave, crash
recovery and recent projects are :mod:`.window_autosave`."""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QComboBox, QDialog, QFileDialog, QLabel, QMainWindow, QMessageBox, QTabWidget

from . import app_settings, errorlog
from ..core.project import load_project, save_project
from .dialogs import NewProjectDialog, ask_save_path, start_folder
from .fileperms import honour_umask
from .hand_model import get_hand_model, remember_hand_model
from .help_menu import add_help_menu
from .panel_table import PANELS, panel_names
from .panels.runs import saved_size_text
from .project import app_project
from .tasks import TaskRunner
from .widgets import TaskProgress, WheelGuard, show_message
from .window_autosave import AutosaveAndRecent

#: the first start's size: fits a 1366x768 laptop screen (the most common) with its title bar and panel
DEFAULT_SIZE = (1280, 700)
WINDOW_SIZE = "window_size"  # the app setting (app_settings) with the size the window last closed at


def window_size() -> tuple[int, int]:
    """The size to open at: the last one closed at, else :data:`DEFAULT_SIZE`, never larger than the screen's
    free area."""
    from PySide6.QtGui import QGuiApplication

    saved = app_settings.get(WINDOW_SIZE)
    w, h = DEFAULT_SIZE
    if isinstance(saved, list) and len(saved) == 2 and all(isinstance(v, int) and 200 <= v <= 20000 for v in saved):
        w, h = saved
    screen = QGuiApplication.primaryScreen()
    # offscreen (tests, screenshots) has a nominal 800x800 screen that no window is shown on: not a limit
    if screen is not None and QGuiApplication.platformName() != "offscreen":
        free = screen.availableGeometry()
        w, h = min(w, free.width()), min(h, free.height())
    return w, h


class MainWindow(AutosaveAndRecent, QMainWindow):
    """The application window: Dataset, Train, Run and Explore panels as tabs, the File menu, status bar
    and the one background task runner."""
    def __init__(self, parent=None):
        super().__init__(parent)
        from PySide6.QtWidgets import QApplication
        # the wheel turns a value only in the field a person clicked into, never one the pointer passes
        self.wheel_guard = WheelGuard(self)
        QApplication.instance().installEventFilter(self.wheel_guard)
        self.project = app_project()
        self.runner = TaskRunner(self)
        self.error_box: QMessageBox | None = None
        self.resize(*window_size())

        self.last_export: Path | None = None
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        for entry in PANELS:  # each panel is also the window's attribute of its name: self.dataset, self.run, ...
            panel = entry.load()(self.project, self.runner)
            setattr(self, entry.name, panel)
            self.tabs.addTab(panel, entry.title)
        self.dataset.may_replace = self._may_discard  # may_replace(then): asks about unsaved changes
        self.setCentralWidget(self.tabs)

        self.progress = TaskProgress()
        self.progress.cancelRequested.connect(self.runner.cancel)
        self.data_label = QLabel()
        sb = self.statusBar()
        sb.addPermanentWidget(self.progress)
        sb.addPermanentWidget(self.data_label)
        self.runner.started.connect(self.progress.start)
        self.runner.progressed.connect(self.progress.update_progress)
        # tasks may overlap: when one ends the strip shows the newest still running
        self.runner.finished.connect(lambda _t: self.progress.start(self.runner.task.title) if self.runner.busy
                                     else self.progress.stop())
        self.runner.refused.connect(lambda _t, why: sb.showMessage(why, 10000))
        self.runner.failed.connect(self.show_error)
        self.runner.cancelled.connect(lambda t: sb.showMessage(f"{t}: cancelled.", 8000))
        errorlog.on_error(lambda message, details: self._show_box("Something went wrong.", message, details))
        self.project.message.connect(lambda m: sb.showMessage(m, 8000))
        self.project.stateChanged.connect(self._update_title)
        self.project.datasetChanged.connect(self._update_title)
        self.project.modelChanged.connect(self._update_title)
        self._menus()
        self._update_title()
        # a class name reads shape first and orientation last: every drop-down cuts its end, not its middle
        for combo in self.findChildren(QComboBox):
            combo.view().setTextElideMode(Qt.ElideRight)
        self._setup_autosave()
        # Load compiled kernels now (~0.2 s) rather than mid-training or mid-stream, where their
        # first call would hold the GIL and freeze the window.
        from ..core.warmup import warm_compiled_kernels
        warm_compiled_kernels()

    # ------------------------------------------------------------------ menus
    def _menus(self) -> None:
        m = self.menuBar().addMenu("&File")

        def act(text, slot, key=None):
            a = QAction(text, self)
            if key is not None:
                a.setShortcut(key)
            a.triggered.connect(slot)
            m.addAction(a)
            return a
        self.act_new = act("&New project", lambda: self.new_project(), QKeySequence.New)
        self.act_open = act("&Open project…", lambda: self.open_project(), QKeySequence.Open)
        self.act_open_model = act("Open &model…", lambda: self.open_model())
        self.act_hand_model = act("Get the &hand-pose model…", lambda: get_hand_model(self))  # gui/hand_model.py
        self.recent_menu = m.addMenu("Open &recent")
        self.act_save = act("&Save project", lambda: self.save_project(), QKeySequence.Save)
        self.act_save_as = act("Save project &as…", lambda: self.save_project(ask=True), QKeySequence.SaveAs)
        m.addSeparator()
        self.act_import = act("&Import folder…", lambda: self.dataset.import_folder())
        self.act_export = act("&Export recogniser…", lambda: self.export())
        m.addSeparator()
        self.act_quit = act("&Quit", self.close, QKeySequence.Quit)
        v = self.menuBar().addMenu("&View")
        for i, entry in enumerate(PANELS):
            a = QAction(f"&{entry.title}", self)
            a.setShortcut(f"Ctrl+{i + 1}")
            a.triggered.connect(lambda _=False, i=i: self.tabs.setCurrentIndex(i))
            v.addAction(a)
        add_help_menu(self)                                                    # gui/help_menu.py
        self.runner.busyChanged.connect(lambda busy: [a.setEnabled(not busy) for a in
                                                      (self.act_new, self.act_open, self.act_open_model,
                                                       self.act_save, self.act_save_as,
                                                       self.act_import, self.act_export)])

    def panels(self) -> list:
        """The panels (:class:`~.panel_table.Panel`), in the table's order."""
        return [getattr(self, entry.name) for entry in PANELS]

    def show_panel(self, name: str) -> None:
        """Switch to the tab ``name`` (one of :data:`~.panel_table.PANELS`' names)."""
        self.tabs.setCurrentIndex(panel_names().index(name))

    def _update_title(self) -> None:
        p = self.project
        self.setWindowTitle(f"{p.title}{' *' if p.dirty else ''} — ClassMap Studio")
        ims = p.imageset
        model = "trained" if p.model_is_current else ("trained on older data" if p.recogniser is not None else "not trained")
        self.data_label.setText("" if ims is None else f"{len(ims)} images · {ims.n_classes} classes · {model}")

    def show_error(self, title: str, message: str) -> None:
        """A task failed: a non-blocking dialog (the app stays usable behind it), details behind a button."""
        task = self.runner.last_task
        self._show_box(f"{title} failed.", message, task.details if task is not None and task.internal else "")
        self.statusBar().showMessage(f"{title} failed.", 15000)

    def _show_box(self, title: str, message: str, details: str = "") -> None:
        self.error_box = show_message(self, title, message, details)

    # ------------------------------------------------------------------ project actions
    def _may_discard(self, then: Callable[[], object]) -> bool:
        """True when the open project may be replaced now: nothing unsaved, or the person said to drop the
        changes (Discard). Save starts File > Save in the background and answers False; once the project is
        written, ``then`` (the action that asked: close, new, open, import) runs again as the save's
        continuation, and finds nothing unsaved unless the person edited meanwhile (then it asks again). The
        window never waits for the save in a nested event loop. Cancel, a save dialog cancelled, a save refused
        or failed: False, and nothing more happens."""
        if not self.project.replaces_work or self.property("no_confirm"):
            return True
        r = QMessageBox.question(self, "Unsaved changes", f"{self.project.title} has unsaved changes. "
                                 "Save them first?", QMessageBox.Save | QMessageBox.Discard | QMessageBox.Cancel,
                                 QMessageBox.Save)
        if r == QMessageBox.Save:
            self.save_project(then=then)
            return False
        if r == QMessageBox.Discard:
            self._discard_autosaves(self.project.path)
            return True
        return False

    def new_project(self, size: tuple[int, int] | None = None, colour: bool = False) -> bool:
        """File > New project: asks the image size and grey or colour (unless given), then an empty project."""
        if not self._may_discard(lambda: self.new_project(size, colour)):
            return False
        if size is None:
            dlg = NewProjectDialog(self)
            if dlg.exec() != QDialog.Accepted:
                return False
            size, colour = dlg.format.size(), dlg.format.is_colour()
        for panel in self.panels():
            panel.stop()
        self.project.new_project(size, colour=colour)
        self.train.suggest()
        self.show_panel("dataset")
        self.project.message.emit("New project: add a class, then capture or add its images.")
        return True

    def open_project(self, path: str | None = None) -> bool:
        """File > Open: load a project folder or ``.cmproj`` (asking for it when ``path`` is None) in the
        background; False when cancelled (or put off until the changes are saved)."""
        if not self._may_discard(lambda: self.open_project(path)):
            return False
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self, "Open project (project.json in a project folder, or a "
                                                  ".cmproj file)", str(start_folder(self.project.path)),
                                                  "Projects (project.json *.cmproj)")
            if not path:
                return False
            if Path(path).name == "project.json":
                path = str(Path(path).parent)
        import shutil
        import tempfile
        # an archive's captures are unpacked to a folder the project owns until it is replaced or closed
        captures_to = Path(tempfile.mkdtemp(prefix="classmap-captures-")) if str(path).endswith(".cmproj") else None

        def drop(*_):
            if captures_to is not None:
                shutil.rmtree(captures_to, ignore_errors=True)

        def done(data):
            self.run.stop()
            if data.captures_dir is None:  # the archive had no captures
                drop()
            self.project.adopt(data, unpacked=data.captures_dir)
            self._recent_add(data.path or path)
            self.project.message.emit(f"opened {path}")
            if data.settings_notes:  # values the schema refused: replaced by defaults, the project still opens
                self._show_box("Some saved settings were replaced by their defaults.", "\n".join(data.settings_notes))
        task = self.runner.run(f"Opening {Path(path).name}",
                               lambda progress, should_stop: load_project(path, captures_to=captures_to,
                                                                          progress=progress, should_stop=should_stop),
                               done, on_error=drop, exclusive=True, abandonable=True)
        if task is None:
            drop()
        else:
            task.cancelled.connect(drop)
        return task

    def open_model(self, path: str | None = None) -> bool:
        """File > Open model: a saved recogniser folder (``model.json``; e.g. one ``classmap train --out`` or
        ``bench scale --set save_model=...`` wrote) without its images, to run it on the Run panel. The
        project becomes its class names with no images. False when cancelled (or put off until saved)."""
        if not self._may_discard(lambda: self.open_model(path)):
            return False
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self, "Open model (model.json in a model folder)",
                                                  str(start_folder(self.project.path)), "Models (model.json)")
            if not path:
                return False
        folder = Path(path).parent if Path(path).name == "model.json" else Path(path)

        def load(progress, should_stop):
            from ..core.data.imageset import ImageSet
            from ..core.recogniser import Recogniser

            t0 = time.perf_counter()
            rec = Recogniser.load(folder)  # large weights are memory-mapped, not read
            shape = (0, *rec.image_size) if rec.grey else (0, *rec.image_size, 3)
            ims = ImageSet(np.zeros(shape, np.uint8), np.zeros(0, np.int64), rec.class_names, name=folder.name)
            return rec, ims, time.perf_counter() - t0

        def done(result):
            rec, ims, seconds = result
            self.run.stop()
            self.project.reset(ims, recogniser=rec, model_folder=folder)  # a gesture added is saved there
            self.show_panel("run")
            remember_hand_model(rec, folder)  # Get the hand-pose model opens this one from now on
            self.project.message.emit(f"opened model {folder.name}: {rec.n_classes} classes in {seconds:.1f} s")
        # abandonable: a model's network may run inside a library call Cancel cannot reach
        return self.runner.run(f"Opening model {folder.name}", load, done, exclusive=True, abandonable=True)

    def save_project(self, path: str | None = None, ask: bool = False, then: Callable[[], object] | None = None):
        """File > Save / Save as: write the project to its file, or to a path asked for (``ask``), in the
        background; the task, or False when nothing is saved. ``then``: runs (on a later turn of the event
        loop) once the project was written — not after a failure or a cancel."""
        p = self.project
        if p.imageset is None:
            self.statusBar().showMessage("Nothing to save yet.", 5000)
            return False
        if path is None:
            path = None if ask else (str(p.path) if p.path else None)
            if path is None:
                name = (p.imageset.name or "untitled") if p.path is None else p.path.stem
                path = ask_save_path(self, "Save project as: one file (.cmproj), or a folder when the name has no "
                                     "extension", start_folder(p.path) / f"{name}.cmproj",
                                     "ClassMap projects (*.cmproj);;Project folder (*)")
                if not path:
                    return False
        data = p.snapshot()

        old_path = p.path

        def done(saved):
            honour_umask(saved)
            p.mark_saved(saved, data.revision)  # an edit made while it was written stays unsaved
            self._recent_add(saved)
            self._discard_autosaves(old_path, saved)
            p.message.emit(f"Saved {saved}{saved_size_text(saved, data)}.")  # kept runs' share said
            if then is not None:
                QTimer.singleShot(0, then)
        return self.runner.run(f"Saving {Path(path).name}",
                               lambda progress, should_stop: save_project(data, path, progress=progress,
                                                                          should_stop=should_stop), done)

    def export(self, path: str | None = None) -> bool:
        """File > Export: write the trained recogniser with ``predict.py`` to a new folder (asked for when
        ``path`` is None); False when cancelled or untrained."""
        rec = self.project.recogniser
        if rec is None:
            self.statusBar().showMessage("Train a recogniser first, then export it.", 5000)
            return False
        if path is None:
            stem = self.project.path.stem if self.project.path else (self.project.title or "recogniser")
            path = ask_save_path(self, "Export the recogniser as a new folder (it will hold predict.py)",
                                 start_folder(self.project.path) / f"{stem}-export")
            if not path:
                return False

        def work(progress, should_stop):
            from ..core.export.folder import export_recogniser
            return export_recogniser(rec, path)

        def done(out):
            honour_umask(out)
            self.last_export = Path(out)
            self.project.message.emit(f"Exported to {out}: run python {Path(out) / 'predict.py'} IMAGE…")
        return self.runner.run("Exporting the recogniser", work, done)

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt API
        """Closing the window: ask about unsaved changes, stop tasks, streams and capture, and drop the
        autosave when nothing is unsaved."""
        if not self._may_discard(self.close):  # Save: the save's completion closes the window
            event.ignore()
            return
        self.runner.cancel()  # tasks and streams end by themselves; the threads still running at exit are joined
        for panel in self.panels():
            panel.shutdown()
        if not self.project.dirty:  # saved (or nothing to save): no autosave should greet the next start
            self._discard_autosaves(self.project.path)
        self.project.close()
        if not self.isMaximized() and not self.isFullScreen():  # the next start opens at this size
            app_settings.put(WINDOW_SIZE, [self.width(), self.height()])
        super().closeEvent(event)
