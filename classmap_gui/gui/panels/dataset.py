"""Dataset panel: import a folder or a built-in set, edit classes and images, capture new ones."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QGroupBox, QHBoxLayout, QInputDialog,
                               QLabel, QListView, QListWidget, QListWidgetItem, QMessageBox, QPushButton,
                               QScrollArea, QSplitter, QVBoxLayout, QWidget)

from ...core.data import builtin_datasets, load_dataset
from ...core.errors import ClassMapError
from ..dialogs import ImportDialog
from ..imageutil import to_pixmap
from ..widgets import ElidedLabel, ReportDialog, show_message, strip_icon
from .capture import CapturePanel

MAX_GRID = 400  # images shown per class; the rest are counted, not drawn


class DatasetPanel(QWidget):
    """The Dataset tab: load built-in sets or folders, list classes, browse and edit images, capture more."""
    def __init__(self, project, runner, parent=None):
        super().__init__(parent)
        self.project, self.runner = project, runner
        self._grid_index = np.zeros(0, np.int64)
        self.last_error = ""
        # the window asks about unsaved changes before a set replaces them: may_replace(then) is False when the
        # person cancelled, or chose Save (then ``then`` runs again once the project is saved)
        self.may_replace = lambda then: True
        self.report_dialog = None

        # -- source row
        self.builtin = QComboBox()
        self.builtin.setToolTip("Built-in data sets")
        for ds in builtin_datasets():
            self.builtin.addItem(ds.name, ds.name)
            self.builtin.setItemData(self.builtin.count() - 1, ds.description, Qt.ToolTipRole)
        self.load_builtin_btn = QPushButton("Load built-in")
        self.load_builtin_btn.clicked.connect(lambda: self.load_builtin(self.builtin.currentData()))
        self.import_btn = QPushButton("Import folder…")
        self.import_btn.setToolTip("A folder with one sub-folder of images per class")
        self.import_btn.clicked.connect(lambda: self.import_folder())
        self.summary = QLabel()
        self.summary.setWordWrap(True)  # a long project name wraps rather than widening a 1024 px window
        top = QHBoxLayout()
        top.addWidget(self.import_btn)
        top.addSpacing(12)
        top.addWidget(QLabel("Built-in set:"))
        top.addWidget(self.builtin)
        top.addWidget(self.load_builtin_btn)
        top.addSpacing(12)
        top.addWidget(self.summary, 1)

        # -- class list with thumbnail strips
        self.classes = QListWidget()
        self.classes.setIconSize(QSize(5 * 28, 28))
        # long names (hand poses: "1 · palm forward · turned 60° left · …") wrap onto a second line and
        # are cut at the end beyond it; the tooltip has the whole name
        self.classes.setWordWrap(True)
        self.classes.setUniformItemSizes(True)
        self.classes.setTextElideMode(Qt.ElideRight)
        self.classes.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.classes.currentRowChanged.connect(self._show_class)
        self.add_btn, self.rename_btn, self.del_class_btn = (QPushButton(t) for t in ("Add class…", "Rename…", "Delete class"))
        self.add_btn.clicked.connect(lambda: self.add_class())
        self.rename_btn.clicked.connect(lambda: self.rename_class())
        self.del_class_btn.clicked.connect(lambda: self.delete_class())
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.addWidget(QLabel("Classes: images · name"))
        ll.addWidget(self.classes, 1)
        row = QHBoxLayout()
        for b in (self.add_btn, self.rename_btn, self.del_class_btn):
            row.addWidget(b)
        ll.addLayout(row)

        # -- images of the selected class
        self.grid = QListWidget()
        self.grid.setViewMode(QListView.IconMode)
        self.grid.setIconSize(QSize(56, 56))
        self.grid.setResizeMode(QListView.Adjust)
        self.grid.setMovement(QListView.Static)
        self.grid.setSpacing(3)
        self.grid.setUniformItemSizes(True)
        self.grid.setSelectionMode(QAbstractItemView.ExtendedSelection)
        self.grid_label = ElidedLabel("Images")
        self.del_img_btn = QPushButton("Delete selected")
        self.del_img_btn.clicked.connect(lambda: self.delete_selected())
        self.move_target = QComboBox()
        self.move_target.setMinimumContentsLength(8)
        self.move_target.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.move_target.currentTextChanged.connect(self.move_target.setToolTip)  # the whole name
        self.move_btn = QPushButton("Move selected to:")
        self.move_btn.clicked.connect(lambda: self.move_selected(self.move_target.currentIndex()))
        mid = QWidget()
        ml = QVBoxLayout(mid)
        ml.setContentsMargins(0, 0, 0, 0)
        ml.addWidget(self.grid_label)
        ml.addWidget(self.grid, 1)
        row2 = QHBoxLayout()
        row2.addWidget(self.del_img_btn)
        row2.addStretch(1)
        row2.addWidget(self.move_btn)
        row2.addWidget(self.move_target)
        ml.addLayout(row2)

        # -- capture
        self.capture = CapturePanel(project, self.current_class)
        self.capture.framesRecorded.connect(self._recording_count)
        self.capture.classRequested.connect(self.classes.setCurrentRow)
        self.classes.currentRowChanged.connect(lambda _r: self.capture.update_progress())
        cap_box = QGroupBox("Capture into the selected class")
        cl = QVBoxLayout(cap_box)
        cl.setContentsMargins(6, 6, 6, 6)
        cl.addWidget(self.capture)
        # the capture pane scrolls when the window is smaller than it (a 1024 x 600 screen): its preview and
        # controls would otherwise set the window's smallest size
        cap_scroll = QScrollArea()
        cap_scroll.setWidgetResizable(True)
        cap_scroll.setFrameShape(QScrollArea.NoFrame)
        cap_scroll.setWidget(cap_box)
        cap_scroll.setMinimumWidth(min(cap_box.minimumSizeHint().width() + 16, 360))

        split = QSplitter()
        split.addWidget(left)
        split.addWidget(mid)
        split.addWidget(cap_scroll)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 4)
        split.setStretchFactor(2, 3)
        split.setSizes([300, 380, 450])  # the capture pane whole at 1024 px, the lists take the rest
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(split, 1)

        project.datasetChanged.connect(self.refresh)
        project.stateChanged.connect(self._show_summary)  # saved as / opened: the header takes the file's name
        runner.busyChanged.connect(lambda busy: [b.setEnabled(not busy) for b in (self.import_btn, self.load_builtin_btn)])
        self.refresh()

    # ------------------------------------------------------------------ loading
    def load_builtin(self, name: str):
        """Open a built-in set as a new project (asks first when that would lose unsaved work)."""
        if not self.may_replace(lambda: self.load_builtin(name)):
            return None

        def work(progress, should_stop):
            return load_dataset(name, progress=progress, should_stop=should_stop)
        task = self.runner.run(f"Loading {name}", work, lambda ims: self.project.reset(ims), exclusive=True)
        i = self.builtin.findData(name)
        if task is not None and i >= 0:  # the picker names the set being opened, not the first of the list
            self.builtin.setCurrentIndex(i)
        return task

    def import_folder(self, path: str | None = None, *, size: tuple[int, int] = (64, 64), colour: bool = False):
        """Open a folder (one sub-folder per class) as a new project; unreadable files are listed after."""
        if path is None:
            dlg = ImportDialog(parent=self)
            if dlg.exec() != ImportDialog.Accepted or not dlg.folder.text().strip():
                return None
            path, size, colour = dlg.folder.text().strip(), dlg.format.size(), dlg.format.is_colour()
        if not self.may_replace(lambda: self.import_folder(path, size=size, colour=colour)):
            return None

        def work(progress, should_stop):
            return load_dataset(path, size=size, grey=not colour, progress=progress, should_stop=should_stop)

        def done(ims):
            self.project.reset(ims)
            self.project.message.emit(f"Imported {len(ims)} images of {ims.n_classes} classes"
                                      + (f"; {len(ims.skipped)} file(s) skipped." if ims.skipped else "."))
            if ims.skipped:
                self.show_skipped(ims)
        return self.runner.run(f"Importing {path}", work, done, exclusive=True)

    def show_skipped(self, ims) -> None:
        """List every file an import skipped, with the reason, in a window that stays open."""
        lines = [f"{path}\n    {reason}" for path, reason in ims.skipped]
        self.report_dialog = ReportDialog(
            "Import report", f"Imported {len(ims)} images of {ims.n_classes} classes. "
            f"{len(ims.skipped)} file(s) could not be used and were skipped:", lines, self)
        self.report_dialog.show()

    # ------------------------------------------------------------------ view
    def current_class(self) -> int:
        """Row of the selected class in the class list, -1 when none."""
        return self.classes.currentRow()

    def _show_summary(self) -> None:
        """The header: the project's name (its file's, once saved or opened), images, classes and format."""
        ims = self.project.imageset
        if ims is None:
            return
        path = getattr(self.project, "path", None)
        name = path.stem if path is not None else (ims.name or "untitled")
        h, w = ims.image_size
        self.summary.setText(f"<b>{name}</b>: {len(ims)} images, {ims.n_classes} classes, "
                             f"{w}×{h} {'colour' if ims.is_color else 'grey'}")

    def refresh(self) -> None:
        """Redraw the summary, class list and image grid from the project (after any change to the data)."""
        ims = self.project.imageset
        cur = max(0, self.classes.currentRow())
        self.classes.blockSignals(True)
        self.classes.clear()
        self.move_target.clear()
        if ims is None:
            self.summary.setText("No project open: File > New project, import a folder or load a built-in set.")
        else:
            counts = ims.counts()
            self._show_summary()
            i = self.builtin.findData(ims.name)
            if i >= 0:
                self.builtin.setCurrentIndex(i)
            order = np.argsort(ims.labels, kind="stable")
            starts = np.concatenate([[0], np.cumsum(counts)])
            blank = None  # one empty strip for every class without images (a model opened alone: 10^5 of them)
            for c, name in enumerate(ims.class_names):
                idx = order[starts[c]:starts[c] + 6]
                if counts[c] == 0:
                    blank = strip_icon(ims.images[:0], 5) if blank is None else blank
                item = QListWidgetItem(blank if counts[c] == 0 else strip_icon(ims.images[idx], 5),
                                       f"{counts[c]:>4} · {name}")
                item.setToolTip(f"{name}: {counts[c]} images")
                self.classes.addItem(item)
                self.move_target.addItem(name)
                self.move_target.setItemData(c, name, Qt.ToolTipRole)
        self.classes.blockSignals(False)
        if self.classes.count():
            self.classes.setCurrentRow(min(cur, self.classes.count() - 1))
        self._show_class(self.classes.currentRow())

    def _recording_count(self, cls: int, n: int) -> None:
        """While a burst is recorded into the class shown, its header counts the frames already on disk."""
        ims = self.project.imageset
        if ims is not None and cls == self.classes.currentRow() and 0 <= cls < ims.n_classes:
            have = len(self.project.images_of(cls))
            self.grid_label.setText(f"{have} images of {ims.class_names[cls]} + {n} being recorded")

    def _show_class(self, cls: int) -> None:
        self.grid.clear()
        ims = self.project.imageset
        if ims is None or cls < 0:
            self._grid_index = np.zeros(0, np.int64)
            self.grid_label.setText("Images")
            return
        idx = self.project.images_of(cls)
        self._grid_index = idx[:MAX_GRID]
        more = f" (showing the first {MAX_GRID})" if len(idx) > MAX_GRID else ""
        self.grid_label.setText(f"{len(idx)} images{more} of {ims.class_names[cls]}")
        for i in self._grid_index:
            item = QListWidgetItem(QIcon(to_pixmap(ims.images[i], 56)), "")
            if ims.sources is not None and ims.sources[i]:
                item.setToolTip(ims.sources[i])
            self.grid.addItem(item)

    def selected_images(self) -> np.ndarray:
        """Project indices ``(k,)`` int64 of the images selected in the grid, in grid order."""
        rows = sorted(self.grid.row(it) for it in self.grid.selectedItems())
        return self._grid_index[rows] if rows else np.zeros(0, np.int64)

    # ------------------------------------------------------------------ edits
    def _guard(self, fn, *args):
        try:
            return fn(*args)
        except ClassMapError as exc:
            self.last_error = str(exc)
            self.error_box = show_message(self, "That did not work.", str(exc))  # non-modal: the app stays usable
            return None

    def add_class(self, name: str | None = None):
        """Add class button: add a class named ``name`` (asked for when None) and select it; its label or None."""
        if name is None:
            name, ok = QInputDialog.getText(self, "Add class", "Name of the new class:")
            if not ok:
                return None
        c = self._guard(self.project.add_class, name)
        if c is not None:
            self.classes.setCurrentRow(c)
        return c

    def rename_class(self, name: str | None = None) -> None:
        """Rename button: rename the selected class to ``name`` (asked for when None)."""
        c = self.current_class()
        if c < 0:
            return
        if name is None:
            name, ok = QInputDialog.getText(self, "Rename class", "New name:", text=self.project.class_names[c])
            if not ok:
                return
        self._guard(self.project.rename_class, c, name)

    def delete_class(self, confirm: bool = True) -> None:
        """Delete class button: delete the selected class and its images, after confirming when ``confirm``."""
        c = self.current_class()
        if c < 0:
            return
        n = len(self.project.images_of(c))
        if confirm and QMessageBox.question(
                self, "Delete class", f"Delete class {self.project.class_names[c]!r} and its {n} image(s) "
                "from the project? (Files on disk are kept.) The trained recogniser is discarded.") != QMessageBox.Yes:
            return
        self._guard(self.project.delete_class, c)

    def delete_selected(self) -> None:
        """Delete selected button: remove the images selected in the grid from the project."""
        idx = self.selected_images()
        if len(idx):
            self._guard(self.project.delete_images, idx)

    def move_selected(self, cls: int) -> None:
        """Move-to menu: relabel the images selected in the grid as class ``cls``."""
        idx = self.selected_images()
        if len(idx) and cls >= 0:
            self._guard(self.project.move_images, idx, cls)

    # the panel protocol (panel_table.Panel)
    def stop(self) -> None:
        """The project is being replaced: finish any recording and stop the camera preview."""
        self.capture.shutdown()

    def shutdown(self) -> None:
        """The window closes: as :meth:`stop`."""
        self.capture.shutdown()
