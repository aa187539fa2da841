"""The Run panel's right column: what a frame was recognised as (the winner, the hand reading, the top
candidates with their class thumbnails, the stage timings) and the per-file results of image files and
folders. The panel hands it each :class:`~.run.FrameResult`; the column draws it and owns nothing else."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFont, QIcon
from PySide6.QtWidgets import QHeaderView, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from ..imageutil import to_pixmap
from ..widgets import elided_item

STAGE_NAMES = {"features": "features", "embedding+filter": "embedding + filter", "refine": "refine",
               "classify": "classify (brute force)"}
RESULTS_WIDTH = 380  # the right column keeps its width whatever the class names


class ResultsColumn(QWidget):
    """Winner, hand reading, top candidates, stage timings and the results per file. ``project``: the open
    project (its recogniser reads the hand, its class thumbnails are the candidates' icons); ``name(c)``: the
    class name of label ``c``."""

    def __init__(self, project, name: Callable[[int], str], parent=None):
        super().__init__(parent)
        self.project, self._name = project, name
        self._icons: dict[int, QIcon] = {}
        self.brute = 0  # classifier evaluations of brute force: what ``evaluations`` is compared with
        from ..hand_reading import HandReadingView  # the shape large, its orientation second
        self.reading = HandReadingView()
        # the one name on screen: what the frame is recognised as is the reading's large line (a hand-pose
        # class's shape, its orientation under it; any other class its name), never a second line above it
        self.winner = self.reading.shape
        self.cands = QTableWidget(0, 3)
        self.cands.setHorizontalHeaderLabels(["", "class", "score"])
        self.cands.horizontalHeader().setSectionResizeMode(1, QHeaderView.Stretch)
        self.cands.verticalHeader().setVisible(False)
        self.cands.setIconSize(QSize(40, 40))
        self.cands.verticalHeader().setDefaultSectionSize(44)
        self.cands.setColumnWidth(0, 48)
        self.cands.setEditTriggers(QTableWidget.NoEditTriggers)
        self.cands.setTextElideMode(Qt.ElideRight)
        self.timings = QLabel("stage timings: –")
        self.timings.setWordWrap(True)
        self.files = QTableWidget(0, 3)
        self.files.setHorizontalHeaderLabels(["file", "recognised as", "score"])
        self.files.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        self.files.horizontalHeader().setSectionResizeMode(1, QHeaderView.Stretch)
        self.files.verticalHeader().setVisible(False)
        self.files.setEditTriggers(QTableWidget.NoEditTriggers)
        self.files.setTextElideMode(Qt.ElideMiddle)
        self.files_label = QLabel("Results per file (image files and folders)")
        self.setFixedWidth(RESULTS_WIDTH)
        rl = QVBoxLayout(self)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(QLabel("Recognised as"))
        rl.addWidget(self.reading)
        rl.addWidget(QLabel("Top candidates"))
        rl.addWidget(self.cands, 2)
        rl.addWidget(self.timings)
        rl.addWidget(self.files_label)
        rl.addWidget(self.files, 1)

    def clear(self, files: bool = True) -> None:
        """Nothing recognised yet (a new run or model); ``files``: the per-file results go too."""
        self.reading.clear()
        self.cands.setRowCount(0)
        if files:
            self.files.setRowCount(0)
        self.timings.setText("stage timings: –")

    def classes_changed(self) -> None:
        """The classes changed: their thumbnails are looked up again."""
        self._icons.clear()

    def add_file_row(self, path: str, what: str, score: str) -> None:
        """One image file's result: its name, what it was recognised as (or why it was unreadable), the score."""
        r = self.files.rowCount()
        self.files.insertRow(r)
        self.files.setItem(r, 0, elided_item(Path(path).name, tooltip=path))
        self.files.setItem(r, 1, elided_item(what))
        self.files.setItem(r, 2, QTableWidgetItem(score))
        self.files.scrollToBottom()

    def show_result(self, result) -> None:
        """Draw one frame's result (a :class:`~.run.FrameResult`)."""
        classes, scores, timings, total, evals = result[:5]
        if self.cands.rowCount() != len(classes):
            self.cands.setRowCount(len(classes))
        bold = QFont()
        bold.setBold(True)
        for r, (c, s) in enumerate(zip(classes, scores)):
            c = int(c)
            icon_item = QTableWidgetItem(self._icon(c), "")
            name_item = elided_item(self._name(c))
            score_item = QTableWidgetItem("–" if not np.isfinite(s) else f"{float(s):.3f}")
            if r == 0:
                name_item.setFont(bold)
                score_item.setFont(bold)
            self.cands.setItem(r, 0, icon_item)
            self.cands.setItem(r, 1, name_item)
            self.cands.setItem(r, 2, score_item)
        rec = getattr(result, "recogniser", None) or self.project.recogniser
        if rec is not None and len(classes):
            rd = self.reading.show_scores(rec, classes, scores)
            if rd.found and rd.label is not None and int(rd.label) != int(classes[0]):
                # the reading scores a shape by all its orientations, so the class it names can be the table's
                # second: that row is the bold one
                self._bold_row(classes, int(rd.label))
        else:
            self.reading.clear()
        parts = [f"{STAGE_NAMES.get(k, k)} {1000 * v:.2f} ms" for k, v in timings.items() if k != "total"]
        self.timings.setText("stage timings: " + " · ".join(parts) + f" · total {1000 * total:.2f} ms\n"
                             f"{evals} classifier evaluations of {self.brute}")

    def _bold_row(self, classes, label: int) -> None:
        for r, c in enumerate(classes):
            for col in (1, 2):
                item = self.cands.item(r, col)
                if item is not None:
                    f = item.font()
                    f.setBold(int(c) == label)
                    item.setFont(f)

    def _icon(self, c: int) -> QIcon:
        if c not in self._icons:
            img = self.project.class_thumbnail(c) if 0 <= c < len(self.project.class_names) else None
            if img is None:  # a model opened alone: a class added to it keeps its images (a gesture's crops)
                rec = self.project.recogniser
                kept = (getattr(rec, "class_examples", None) or {}).get(self._name(c))
                img = kept[len(kept) // 2] if kept is not None and len(kept) else None
            self._icons[c] = QIcon(to_pixmap(img, 40)) if img is not None else QIcon()
        return self._icons[c]


__all__ = ["RESULTS_WIDTH", "STAGE_NAMES", "ResultsColumn"]
