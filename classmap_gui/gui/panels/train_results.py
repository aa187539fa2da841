"""The Train panel's results: headline figures, the per-class table, the top confusions as a sortable
list with thumbnails, and the confusion matrix (up to ``MATRIX_MAX`` classes; past that it is unreadable).

The table lists classes in the matrix's order (class number), the matrix's axes carry class names
(a readable subset when there are many; every name is in the hover text), a cell's pop-up names
both classes, and with no results the matrix is replaced by a note instead of stale axes.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QGridLayout, QHeaderView, QLabel, QSplitter, QStackedWidget, QTableWidget,
                               QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget)

from ...core.explore import views
from ...core.train.evaluation import cost_line
from ..widgets import ImageGridDialog, elided_item
from .confusion_list import ConfusionList

MAX_TICKS = 24  # class names drawn on each axis; the rest are in the hover text
MATRIX_MAX = 100  # classes up to which the confusion matrix is drawn (beyond: the list only)


def short(name: str, n: int = 14) -> str:
    """``name`` cut at the end to ``n`` characters (the start tells a class apart: its shape)."""
    return name if len(name) <= n else name[: n - 1].rstrip() + "…"


def class_ticks(names: list[str], max_ticks: int = MAX_TICKS, numbers: bool = False) -> list[tuple[float, str]]:
    """Tick positions (cell centres) and short names (or class numbers) for at most ``max_ticks`` classes."""
    step = max(1, int(np.ceil(len(names) / max_ticks)))
    return [(i + 0.5, str(i) if numbers else short(names[i])) for i in range(0, len(names), step)]


#: classes from which ClassMap's filter-and-refine can save time (the Train panel's ClassMap tooltip)
FILTER_PAYS_FROM = 50
#: the confusion matrix writes each cell's count up to this many classes (beyond, the numbers would not fit)
CELL_NUMBERS_MAX = 20


class TrainResults(QWidget):
    """Results of the last training: headline figures, per-class accuracy table and confusion matrix."""
    def __init__(self, parent=None):
        super().__init__(parent)
        self.names: list[str] = []
        self.confusion = None
        self.test_labels = self.test_pred = None
        self.test_set = None
        self.cell_dialog = None
        self.status = QLabel("Not trained yet. Choose settings and press Train.")
        self.status.setWordWrap(True)
        self.figures = {}
        grid = QGridLayout()
        self.titles = {"accuracy": "test accuracy", "evaluations": "evaluations / query",
                       "speedup": "fewer evaluations", "time": "training time"}
        for i, (key, title) in enumerate(self.titles.items()):
            big, small = QLabel("–"), QLabel(title)
            big.setStyleSheet("QLabel { font-size: 20pt; font-weight: bold; }")
            big.setAlignment(Qt.AlignCenter)
            small.setAlignment(Qt.AlignCenter)
            grid.addWidget(big, 0, i)
            grid.addWidget(small, 1, i)
            self.figures[key] = big
        self.figure_titles = {k: grid.itemAtPosition(1, i).widget() for i, k in enumerate(self.figures)}
        self.per_class = QTableWidget(0, 4)
        self.per_class.setHorizontalHeaderLabels(["#", "class", "accuracy %", "tested"])
        hh = self.per_class.horizontalHeader()
        hh.setSectionResizeMode(1, QHeaderView.Stretch)
        for c in (0, 2, 3):
            hh.setSectionResizeMode(c, QHeaderView.ResizeToContents)
        self.per_class.verticalHeader().setVisible(False)
        self.per_class.setEditTriggers(QTableWidget.NoEditTriggers)
        # a long name (a hand pose: shape, then its orientation) wraps onto three lines, then is cut at the
        # end; the end tells orientations apart, so rows of one shape still differ (tooltip: the whole name)
        self.per_class.setWordWrap(True)
        self.per_class.setTextElideMode(Qt.ElideRight)
        self.per_class.setToolTip("Same order as the matrix (class number); click a header to sort")

        self.conf_plot = pg.PlotWidget(background="w")
        self.conf_plot.setAspectLocked(True)
        self.conf_plot.invertY(True)
        self.conf_plot.setLabel("left", "true class")
        self.conf_plot.setLabel("bottom", "predicted class")
        self.conf_plot.setMenuEnabled(False)
        for ax in ("left", "bottom"):
            self.conf_plot.getAxis(ax).enableAutoSIPrefix(False)
        self.conf_img = pg.ImageItem(axisOrder="row-major")
        self.conf_img.setLookupTable(pg.colormap.get("viridis").getLookupTable(nPts=256))
        self.conf_plot.addItem(self.conf_img)
        # the colour key: what a cell's colour means (a share of the true class's test images)
        self.conf_key = pg.ColorBarItem(values=(0, 1), colorMap=pg.colormap.get("viridis"), interactive=False,
                                        width=14, label="share of the true class's test images")
        self.conf_key.setImageItem(self.conf_img, insert_in=self.conf_plot.getPlotItem())
        self.cell_texts: list = []   # each cell's count, drawn on it up to CELL_NUMBERS_MAX classes
        self.conf_plot.scene().sigMouseClicked.connect(self._conf_clicked)
        self.conf_plot.scene().sigMouseMoved.connect(self._conf_hover)
        self.conf_hint = QLabel("Confusion matrix (rows: true class, share of its test images). "
                                "Click a cell to see those images.")
        self.conf_hint.setWordWrap(True)
        self.conf_empty = QLabel("The confusion matrix appears here after training.")
        self.conf_empty.setAlignment(Qt.AlignCenter)
        self.conf_stack = QStackedWidget()
        self.conf_stack.addWidget(self.conf_empty)
        self.conf_stack.addWidget(self.conf_plot)
        conf = QWidget()
        cl = QVBoxLayout(conf)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.addWidget(self.conf_hint)
        cl.addWidget(self.conf_stack, 1)
        self.conf_list = ConfusionList()
        self.conf_list.pairChosen.connect(self.open_cell)
        self.conf_list.setToolTip("Every pair of classes with mistakes, most frequent first; click a header to "
                                  "sort, a row to see the images")
        self.conf_tabs = QTabWidget()
        self.conf_tabs.addTab(conf, "Matrix")
        self.conf_tabs.addTab(self.conf_list, "Top confusions")
        split = QSplitter()
        split.addWidget(self.per_class)
        split.addWidget(self.conf_tabs)
        split.setSizes([360, 440])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.status)
        lay.addLayout(grid)
        lay.addWidget(split, 1)

    def clear(self, status: str = "Not trained yet. Choose settings and press Train.") -> None:
        """Empty every figure and the confusion matrix and show ``status`` (data changed or new training)."""
        for key, lab in self.figures.items():  # the figures and their titles: nothing of an old run stays
            lab.setText("–")
            self.figure_titles[key].setText(self.titles[key])
            self.figure_titles[key].setToolTip("")
        self.conf_tabs.setTabText(1, "Top confusions")
        self.per_class.setRowCount(0)
        self.conf_img.clear()
        self.confusion = None
        self._number_cells(None)
        self.test_labels = self.test_pred = None
        self.conf_list.set_confusions(views.top_confusions([], [], 1), [], None, [], [])
        self.conf_stack.setCurrentWidget(self.conf_empty)
        self.conf_tabs.setTabEnabled(0, True)
        self.status.setText(status)

    def show_report(self, report, names: list[str], test_set, test_pred, seconds: float | None,
                    classmap: bool | None = None) -> None:
        """Show an EvalReport on ``test_set`` (an ImageSet) whose predictions are ``test_pred (n,) int64``;
        ``classmap``: whether the recogniser has ClassMap (None: not known), so the cost line says why every
        classifier was evaluated."""
        self.names, self.test_set = list(names), test_set
        self.test_labels, self.test_pred = np.asarray(test_set.labels), np.asarray(test_pred, np.int64)
        C = len(names)
        acc = float(report.accuracy)
        ev = float(report.evaluations_per_query)
        brute = float(report.brute_force_evaluations)
        self.figures["accuracy"].setText(f"{100 * acc:.1f}%")
        self.figures["evaluations"].setText(f"{ev:.1f} of {brute:.0f}")
        if ev >= brute - 1e-9 and classmap:
            # ClassMap on, but its references and candidates cost as much as every class: no saving, said so
            self.figures["speedup"].setText("no saving")
            self.figure_titles["speedup"].setText(f"ClassMap on: {ev:.0f} evaluations for {C} classes")
            self.figure_titles["speedup"].setToolTip(
                f"ClassMap evaluates its reference classifiers and p candidates per image: with {C} classes that "
                f"is no fewer than brute force's {brute:.0f}; it pays from about {FILTER_PAYS_FROM} classes")
        elif ev >= brute - 1e-9:
            self.figures["speedup"].setText("brute force")
            self.figure_titles["speedup"].setText("every classifier evaluated" if classmap is None else
                                                  "ClassMap off · every classifier evaluated")
            self.figure_titles["speedup"].setToolTip(
                f"Trained without ClassMap: with {C} classes brute force evaluates only {C} classifiers per image; "
                f"filter-and-refine pays off from about {FILTER_PAYS_FROM} classes")
        else:
            # a count ratio, and beside it the measured wall-clock one (cost_line names both)
            self.figures["speedup"].setText(f"{report.evaluations_ratio:.1f}×" if ev > 0 else "–")
            line = cost_line(report)
            self.figure_titles["speedup"].setText(line.split(" ", 1)[1] if ev > 0 else line)
            self.figure_titles["speedup"].setToolTip("evaluations: classifiers evaluated per image, a count; "
                                                     "faster: measured time per image against brute force, as "
                                                     "timed when this run was trained (timings vary with the "
                                                     "machine's load; the Runs table keeps each run's)")
            single = (report.latency_speedup or {}).get("single")
            if C < FILTER_PAYS_FROM and (report.evaluations_ratio < 2 or (single is not None and single < 1)):
                # said, not left as a "0.8×" to puzzle over: with few classes the filter costs what it saves
                self.figure_titles["speedup"].setText(f"too few classes ({C}) for ClassMap to help")
                self.figure_titles["speedup"].setToolTip(
                    f"{line}. With {C} classes filter-and-refine cannot save time: ranking the classes costs "
                    "about what evaluating them all does. Untick ClassMap and every classifier is evaluated at "
                    "once (brute force), as the suggested settings do below about 50 classes.")
        self.figures["time"].setText("–" if seconds is None or not np.isfinite(seconds) else f"{seconds:.1f} s")
        conf = report.confusion
        if C <= MATRIX_MAX and (conf is None or np.asarray(conf).shape != (C, C)):
            conf = views.confusion_from_labels(self.test_labels, self.test_pred, C)
        # beyond MATRIX_MAX classes no C x C table is kept (2430 classes: 6 million cells, unreadable)
        self.confusion = np.asarray(conf) if C <= MATRIX_MAX else None
        pairs = views.top_confusions(self.test_labels, self.test_pred, C)
        self.conf_list.set_confusions(pairs, self.names, test_set.images, self.test_labels, self.test_pred)
        self.conf_tabs.setTabText(1, f"Top confusions ({len(pairs)})")
        per = np.asarray(report.per_class_accuracy, np.float64)
        counts = np.bincount(self.test_labels, minlength=C)
        self.per_class.setSortingEnabled(False)
        longest = max((self.per_class.fontMetrics().horizontalAdvance(n) for n in names), default=0)
        lines = 1 if longest < 200 else 3  # short names keep the table dense
        self.per_class.verticalHeader().setDefaultSectionSize(lines * self.per_class.fontMetrics().lineSpacing() + 6)
        self.per_class.setRowCount(C)
        for c, name in enumerate(names):
            cells = [QTableWidgetItem(), elided_item(name), QTableWidgetItem(), QTableWidgetItem()]
            cells[0].setData(Qt.DisplayRole, c)
            a = per[c] if c < len(per) else np.nan
            cells[2].setData(Qt.DisplayRole, round(100 * float(a), 1) if np.isfinite(a) else "–")
            cells[3].setData(Qt.DisplayRole, int(counts[c]))
            for k, it in enumerate(cells):
                self.per_class.setItem(c, k, it)
        self.per_class.setSortingEnabled(True)
        self.per_class.sortItems(0, Qt.AscendingOrder)
        matrix = self.confusion is not None
        self.conf_tabs.setTabEnabled(0, matrix)
        self.conf_tabs.setTabToolTip(0, "" if matrix else f"The matrix is drawn up to {MATRIX_MAX} classes; "
                                     f"with {C} use the list of top confusions")
        self.conf_tabs.setCurrentIndex(0 if matrix else 1)
        if not matrix:
            self.conf_img.clear()
            self._number_cells(None)
            self.conf_stack.setCurrentWidget(self.conf_empty)
            return
        rates = views.confusion_rates(self.confusion)
        self.conf_img.setImage(rates, levels=(0, 1))
        self.conf_img.setRect(0, 0, C, C)
        self._number_cells(rates)
        # names side by side overlap beyond a few classes: the bottom axis then shows class numbers (the
        # table's # column); the left axis has room for names; every cell's tooltip names both classes
        few = C <= 6
        self.conf_plot.getAxis("bottom").setTicks([class_ticks(self.names, 6 if few else 10, numbers=not few), []])
        self.conf_plot.getAxis("left").setTicks([class_ticks(self.names), []])
        self.conf_plot.setLabel("bottom", "predicted class" + ("" if few else " (number, as in the table)"))
        self.conf_stack.setCurrentWidget(self.conf_plot)
        self.conf_plot.setRange(xRange=(0, C), yRange=(0, C), padding=0.02)

    def _number_cells(self, rates) -> None:
        """Each cell's count of test images written on it (light on dark cells), up to CELL_NUMBERS_MAX classes."""
        for t in self.cell_texts:
            self.conf_plot.removeItem(t)
        self.cell_texts = []
        if self.confusion is None or len(self.confusion) > CELL_NUMBERS_MAX:
            return
        for (i, j), n in np.ndenumerate(self.confusion):
            t = pg.TextItem(str(int(n)), color="k" if rates[i, j] > 0.6 else "w", anchor=(0.5, 0.5))
            t.setPos(j + 0.5, i + 0.5)
            self.conf_plot.addItem(t)
            self.cell_texts.append(t)

    def _cell_at(self, scene_pos) -> tuple[int, int]:
        pos = self.conf_img.mapFromScene(scene_pos)
        # the image item maps the C x C cells onto C x C units, so a unit is a cell
        return int(np.floor(pos.y())), int(np.floor(pos.x()))

    def _conf_hover(self, scene_pos) -> None:
        if self.confusion is None:
            return
        i, j = self._cell_at(scene_pos)
        C = len(self.names)
        if 0 <= i < C and 0 <= j < C:
            n = int(self.confusion[i, j])
            self.conf_plot.setToolTip(f"true {self.names[i]} → predicted {self.names[j]}: {n} test image(s)")
        else:
            self.conf_plot.setToolTip("")

    def _conf_clicked(self, ev) -> None:
        if self.confusion is not None:
            self.open_cell(*self._cell_at(ev.scenePos()))

    def open_cell(self, i: int, j: int):
        """Show the test images of true class i predicted as j (the misclassified ones when i != j)."""
        n = len(self.names)
        if self.test_labels is None or not (0 <= i < n and 0 <= j < n):
            return None
        idx = views.cell_examples(self.test_labels, self.test_pred, i, j)
        names = self.names
        title = (f"{len(idx)} test image(s) of {names[i]} predicted as {names[j]}" if i != j else
                 f"{len(idx)} test image(s) of {names[i]} recognised correctly")
        src = self.test_set.sources
        caps = [(src[k].rsplit("/", 1)[-1] if src is not None and src[k] else f"test #{k}") for k in idx]
        self.cell_dialog = ImageGridDialog(title, self.test_set.images[idx], caps, self.window())
        self.cell_dialog.info.setText(title)
        self.cell_dialog.show()
        return self.cell_dialog
