"""The main window: four panels over one Project, menus, status bar, the task runner."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QLabel, QMainWindow, QMessageBox, QTabWidget

from . import projectio
from .panels.dataset import DatasetPanel
from .panels.explore import ExplorePanel
from .panels.run import RunPanel
from .panels.train import TrainPanel
from .project import Project
from .tasks import TaskRunner
from .widgets import TaskProgress

PANELS = ("dataset", "train", "run", "explore")


class MainWindow(QMainWindow):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.project = Project(self)
        self.runner = TaskRunner(self)
        self.error_box: QMessageBox | None = None
        self.resize(1180, 760)

        self.dataset = DatasetPanel(self.project, self.runner)
        self.train = TrainPanel(self.project, self.runner)
        self.run = RunPanel(self.project)
        self.explore = ExplorePanel(self.project, self.runner)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        for w, name in ((self.dataset, "Dataset"), (self.train, "Train"), (self.run, "Run"), (self.explore, "Explore")):
            self.tabs.addTab(w, name)
        self.setCentralWidget(self.tabs)

        self.progress = TaskProgress()
        self.progress.cancelRequested.connect(self.runner.cancel)
        self.data_label = QLabel()
        sb = self.statusBar()
        sb.addPermanentWidget(self.progress)
        sb.addPermanentWidget(self.data_label)
        self.runner.started.connect(self.progress.start)
        self.runner.progressed.connect(self.progress.update_progress)
        self.runner.finished.connect(lambda _t: self.progress.stop())
        self.runner.failed.connect(self.show_error)
        self.runner.cancelled.connect(lambda t: sb.showMessage(f"{t}: cancelled", 8000))
        self.project.message.connect(lambda m: sb.showMessage(m, 8000))
        self.project.stateChanged.connect(self._update_title)
        self.project.datasetChanged.connect(self._update_title)
        self.project.modelChanged.connect(self._update_title)
        self._menus()
        self._update_title()
        self._setup_autosave()
        # Load compiled kernels now (~0.2 s) rather than mid-training or mid-stream, where their
        # first call would hold the GIL and freeze the window.
        from ..core.warmup import warm_compiled_kernels  # noqa: PLC0415
        warm_compiled_kernels()

    # ------------------------------------------------------------------ autosave and recent projects
    def _setup_autosave(self) -> None:
        from platformdirs import user_config_dir, user_data_dir  # noqa: PLC0415
        from PySide6.QtCore import QTimer  # noqa: PLC0415

        from ..core.project import Autosaver, RecentProjects  # noqa: PLC0415
        try:
            self.autosaver = Autosaver(Path(user_data_dir("classmap-studio", appauthor=False)) / "autosave", interval=60)
            self.recent = RecentProjects(user_config_dir("classmap-studio", appauthor=False))
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
        data = projectio.ProjectData(p.imageset, p.recogniser, dict(p.settings))
        a.mark_saved()
        self.runner.run("Autosaving", lambda progress, should_stop: a.save(
            projectio.to_core(data), p.path, progress=progress, should_stop=should_stop))

    def offer_recovery(self) -> bool:
        """At start-up: when an autosave was left behind (a crash), offer to open it."""
        if self.autosaver is None:
            return False
        try:
            pending = [a for a in self.autosaver.pending() if "error" not in a]
        except OSError:
            return False
        if not pending:
            return False
        a = pending[0]
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
        self.recent_menu = m.addMenu("Open &recent")
        self.act_save = act("&Save project", lambda: self.save_project(), QKeySequence.Save)
        self.act_save_as = act("Save project &as…", lambda: self.save_project(ask=True), QKeySequence.SaveAs)
        m.addSeparator()
        self.act_import = act("&Import folder…", lambda: self.dataset.import_folder())
        self.act_export = act("&Export recogniser…", lambda: self.export())
        m.addSeparator()
        self.act_quit = act("&Quit", self.close, QKeySequence.Quit)
        v = self.menuBar().addMenu("&View")
        for i, name in enumerate(("&Dataset", "&Train", "&Run", "&Explore")):
            a = QAction(name, self)
            a.setShortcut(f"Ctrl+{i + 1}")
            a.triggered.connect(lambda _=False, i=i: self.tabs.setCurrentIndex(i))
            v.addAction(a)
        self.runner.busyChanged.connect(lambda busy: [a.setEnabled(not busy) for a in
                                                      (self.act_new, self.act_open, self.act_save, self.act_save_as,
                                                       self.act_import, self.act_export)])

    def show_panel(self, name: str) -> None:
        self.tabs.setCurrentIndex(PANELS.index(name))

    def _update_title(self) -> None:
        p = self.project
        name = p.path.name if p.path else (p.imageset.name if p.imageset is not None and p.imageset.name else "untitled")
        self.setWindowTitle(f"{name}{' *' if p.dirty else ''} — ClassMap Studio")
        ims = p.imageset
        model = "trained" if p.model_is_current else ("trained on older data" if p.recogniser is not None else "not trained")
        self.data_label.setText("" if ims is None else f"{len(ims)} images · {ims.n_classes} classes · {model}")

    def show_error(self, title: str, message: str) -> None:
        """A non-blocking dialog: the app stays usable behind it."""
        box = QMessageBox(QMessageBox.Warning, "ClassMap Studio", f"{title} failed.", QMessageBox.Ok, self)
        box.setInformativeText(message)
        if self.runner.last_traceback:
            box.setDetailedText(self.runner.last_traceback)
        box.setModal(False)
        box.show()
        self.error_box = box
        self.statusBar().showMessage(f"{title} failed: {message}", 15000)

    # ------------------------------------------------------------------ project actions
    def _may_discard(self) -> bool:
        if not self.project.dirty or self.property("no_confirm"):
            return True
        r = QMessageBox.question(self, "Unsaved changes", "The project has unsaved changes. Discard them?",
                                 QMessageBox.Discard | QMessageBox.Cancel)
        return r == QMessageBox.Discard

    def new_project(self) -> None:
        if self._may_discard():
            self.run.stop()
            self.project.reset(None)

    def load_demo(self) -> bool:
        """Open the built-in demo set (glyph-pose-small when present, else digits)."""
        from .demo import demo_dataset  # noqa: PLC0415
        name = demo_dataset()
        return self.dataset.load_builtin(name)

    def open_project(self, path: str | None = None) -> bool:
        if not self._may_discard():
            return False
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self, "Open project (project.json in a project folder, or a "
                                                  ".cmproj file)", "", "Projects (project.json *.cmproj)")
            if not path:
                return False
            if Path(path).name == "project.json":
                path = str(Path(path).parent)
        import tempfile  # noqa: PLC0415
        captures_to = Path(tempfile.mkdtemp(prefix="classmap-captures-")) if str(path).endswith(".cmproj") else None

        def done(data):
            self.run.stop()
            self.project.reset(data.imageset, recogniser=data.recogniser, settings=data.settings,
                               path=data.path or path, captures_dir=data.captures_dir)
            self._recent_add(data.path or path)
            self.project.message.emit(f"opened {path}")
        return self.runner.run(f"Opening {Path(path).name}",
                               lambda progress, should_stop: projectio.load(path, captures_to=captures_to,
                                                                            progress=progress,
                                                                            should_stop=should_stop), done)

    def save_project(self, path: str | None = None, ask: bool = False) -> bool:
        p = self.project
        if p.imageset is None:
            self.statusBar().showMessage("Nothing to save yet.", 5000)
            return False
        if path is None:
            path = None if ask else (str(p.path) if p.path else None)
            if path is None:
                path, _ = QFileDialog.getSaveFileName(
                    self, "Save project as: a folder, or one file when the name ends in .cmproj")
                if not path:
                    return False
        data = projectio.ProjectData(p.imageset, p.recogniser, dict(p.settings),
                                     p.capture_root if p.capture_root is not None and p.capture_root.is_dir() else None)

        def done(saved):
            p.mark_saved(saved)
            self._recent_add(saved)
            if self.autosaver is not None:
                self.autosaver.discard(saved)
                self.autosaver.mark_saved()
            p.message.emit(f"saved {saved}")
        return self.runner.run(f"Saving {Path(path).name}",
                               lambda progress, should_stop: projectio.save(data, path, progress=progress,
                                                                            should_stop=should_stop), done)

    def export(self, path: str | None = None) -> bool:
        rec = self.project.recogniser
        if rec is None:
            self.statusBar().showMessage("Train a recogniser first, then export it.", 5000)
            return False
        if path is None:
            path = QFileDialog.getExistingDirectory(self, "Export the recogniser into a folder")
            if not path:
                return False

        def work(progress, should_stop):
            from ..core.export import export_recogniser  # noqa: PLC0415
            return export_recogniser(rec, path)
        return self.runner.run("Exporting the recogniser", work,
                               lambda out: self.project.message.emit(f"exported to {out}"))

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt API
        if not self._may_discard():
            event.ignore()
            return
        self.runner.cancel()
        self.runner.wait(5000)
        self.run.stop()
        self.dataset.capture.shutdown()
        super().closeEvent(event)
