"""The map of the whole embedding: every class (stars) and held-out images (dots) in one plot.

Two pyqtgraph ``ScatterPlotItem``s in pixel mode draw all points (no Python item per point, so 2430
classes and 10^4 dots redraw smoothly); colours come from :mod:`core.explore.class_factors` groups through a
small palette of shared brushes. Rings mark the selected class, its nearest classes and its images.
The widget only draws and reports clicks: the Explore panel computes layouts and chooses.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QIcon, QPixmap
from PySide6.QtWidgets import QAbstractItemView, QLabel, QListView, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from .explore_data import class_colours

DOT_SIZE, STAR_SIZE = 5, 10
#: colours cycled when colouring by class: 2430 hues cannot be told apart anyway, and each distinct brush
#: costs pyqtgraph one rendered symbol per item (2430 classes: 3.4 s to recolour; 60: a tenth of that)
CLASS_HUES = 60


def scale_colours(n: int) -> list:
    """``n`` colours from dark blue through light blue, dark grey and orange to dark red: the steps of one
    angle, each readable on white and told apart from its neighbours."""
    stops = np.array([(33, 90, 170), (70, 170, 220), (80, 80, 80), (245, 130, 40), (180, 20, 40)], np.float64)
    out = []
    for t in (np.linspace(0, 1, n) if n > 1 else [0.5]):
        x = t * (len(stops) - 1)
        a = min(len(stops) - 2, int(x))
        f = x - a
        out.append(pg.mkColor(*[int(round(v)) for v in stops[a] * (1 - f) + stops[a + 1] * f]))
    return out


def group_colours(names: list[str], ordered: bool, right_wrong: bool = False) -> list:
    """One colour per group: a blue-red scale for angles, green/amber/red for right/wrong, else distinct hues."""
    if right_wrong:
        fixed = [(26, 140, 60), (230, 150, 0), (200, 30, 30)] if len(names) == 4 else [(26, 140, 60), (200, 30, 30)]
        return [pg.mkColor(*c) for c in fixed] + [pg.mkColor(190, 190, 190)]
    if ordered:
        return scale_colours(len(names))
    base = class_colours(min(len(names), CLASS_HUES))
    return [base[k % len(base)] for k in range(len(names))]


class Legend(QWidget):
    """The colour key under the map: one swatch and name per group, laid out in rows that wrap, scrolling
    past three rows (25 hand shapes or 2430 classes stay readable one by one), and a line saying how many
    groups there are (and when hues repeat)."""

    ROWS = 3

    def __init__(self, parent=None):
        super().__init__(parent)
        self.note = QLabel()
        self.list = QListWidget()
        self.list.setViewMode(QListView.ListMode)
        self.list.setFlow(QListView.LeftToRight)
        self.list.setWrapping(True)
        self.list.setResizeMode(QListView.Adjust)
        self.list.setSelectionMode(QAbstractItemView.NoSelection)
        self.list.setFocusPolicy(Qt.NoFocus)
        self.list.setIconSize(QSize(12, 12))
        self.list.setSpacing(1)
        self.list.setStyleSheet("QListWidget { background: transparent; border: none; }")
        row = max(16, self.list.fontMetrics().height() + 4)
        self.list.setFixedHeight(self.ROWS * (row + 2) + 4)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self.note)
        lay.addWidget(self.list)
        self._icons: dict = {}

    def set_groups(self, colours: list, names: list[str], note: str = "") -> None:
        """Show ``names`` with their ``colours`` (QColor) and the ``note``."""
        self.list.clear()
        for c, n in zip(colours, names):
            key = c.rgba()
            if key not in self._icons:
                pm = QPixmap(12, 12)
                pm.fill(c)
                self._icons[key] = QIcon(pm)
            it = QListWidgetItem(self._icons[key], str(n))
            it.setToolTip(str(n))
            self.list.addItem(it)
        self.note.setText(note)
        self.note.setVisible(bool(note))

    def names(self) -> list[str]:
        """The group names listed, in order."""
        return [self.list.item(i).text() for i in range(self.list.count())]

    def text(self) -> str:
        """The note and every name, as one line of text."""
        return " ".join([self.note.text(), *self.names()]).strip()


class _Marks(pg.ScatterPlotItem):
    """Rings drawn over the map that let clicks through to the stars and dots beneath."""

    def mouseClickEvent(self, ev):  # noqa: N802 - pyqtgraph API
        ev.ignore()


class MapPlot(QWidget):
    """The scatter of classes and dots with its legend. Signals: ``classClicked(int)``,
    ``dotClicked(int)``, ``dotHovered(int)`` (indices into the classes / the dots)."""

    classClicked = Signal(int)
    dotClicked = Signal(int)
    dotHovered = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.plot = pg.PlotWidget(background="w")
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.names: list[str] = []
        self.dots = pg.ScatterPlotItem(size=DOT_SIZE, pen=None, pxMode=True, hoverable=True, hoverSize=9,
                                       hoverPen=pg.mkPen("k", width=1.5), tip=None)
        self.stars = pg.ScatterPlotItem(size=STAR_SIZE, symbol="star", pxMode=True, pen=pg.mkPen(40, 40, 40, 160, width=0.6),
                                        hoverable=True, hoverSize=16, hoverPen=pg.mkPen("k", width=1.5),
                                        tip=lambda x, y, data: self.names[data] if data < len(self.names) else "")
        self.class_dots = _Marks(size=9, pen=pg.mkPen("k", width=1.5), brush=None, pxMode=True)
        self.near = _Marks(size=20, symbol="o", pen=pg.mkPen((255, 140, 0), width=2), brush=None, pxMode=True)
        self.chosen = _Marks(size=26, symbol="o", pen=pg.mkPen((220, 0, 0), width=3), brush=None, pxMode=True)
        self.dot_ring = _Marks(size=16, symbol="o", pen=pg.mkPen((220, 0, 0), width=2), brush=None, pxMode=True)
        for it in (self.dots, self.stars, self.class_dots, self.near, self.chosen, self.dot_ring):
            self.plot.addItem(it)
        self.stars.setZValue(1)
        for z, it in enumerate((self.class_dots, self.near, self.dot_ring, self.chosen)):
            it.setZValue(2 + z)
        self.dots.sigClicked.connect(lambda _i, pts, _e: len(pts) and self.dotClicked.emit(int(pts[0].data())))
        self.stars.sigClicked.connect(lambda _i, pts, _e: len(pts) and self.classClicked.emit(int(pts[0].data())))
        self.dots.sigHovered.connect(lambda _i, pts, _e: len(pts) and self.dotHovered.emit(int(pts[0].data())))
        self._brushes: dict = {}  # one QBrush per colour, reused: pyqtgraph caches a symbol per brush object
        self.legend = Legend()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.plot, 1)
        # what stands in for the map until there is one (no empty axes, no last model's axis names)
        self.empty = QLabel("Press Compute views to draw the map.")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignCenter)
        self.empty.setStyleSheet("QLabel { background: white; color: #505050; padding: 24px; }")
        lay.addWidget(self.empty, 1)
        self.plot.hide()
        lay.addWidget(self.legend)
        self.Y = None
        self.n_classes = 0
        self.dot_labels = np.zeros(0, np.int64)

    def clear(self) -> None:
        """Empty plot (no model or no ClassMap)."""
        self.Y, self.n_classes = None, 0
        for it in (self.dots, self.stars, self.class_dots, self.near, self.chosen, self.dot_ring):
            it.clear()
        self.legend.set_groups([], [])

    def set_empty(self, text: str) -> None:
        """No map: ``text`` in its place (cleared points, no axes); :meth:`set_points` brings the plot back."""
        self.clear()
        self.plot.setLabel("bottom", "")
        self.plot.setLabel("left", "")
        self.empty.setText(text)
        self.plot.hide()
        self.empty.show()

    def set_points(self, Y: np.ndarray, names: list[str], dot_labels: np.ndarray, axes: tuple[str, str]) -> None:
        """Coordinates ``Y (C + n, 2)``: the classes ``names`` first, then dots of classes ``dot_labels (n,)``."""
        self.empty.hide()
        self.plot.show()
        self.names = list(names)
        self.Y, self.n_classes = np.asarray(Y, np.float32), len(names)
        self.dot_labels = np.asarray(dot_labels, np.int64)
        self.plot.setLabel("bottom", axes[0])
        self.plot.setLabel("left", axes[1])

    def colour(self, class_codes: np.ndarray, dot_codes: np.ndarray, colours: list, names: list[str],
               legend_max: int = 12) -> None:
        """Draw every point coloured by its group code; the legend lists every group, and beyond
        ``legend_max`` says how many there are."""
        if self.Y is None:
            return
        C = self.n_classes
        brushes = [self._brush(c) for c in colours]
        S, D = self.Y[:C], self.Y[C:]
        self.dots.setData(x=D[:, 0], y=D[:, 1], data=np.arange(len(D)), brush=[brushes[k] for k in dot_codes])
        self.stars.setData(x=S[:, 0], y=S[:, 1], data=np.arange(C), brush=[brushes[k] for k in class_codes])
        note = "" if len(names) <= legend_max else (
            f"{len(names)} groups" + (f" in {CLASS_HUES} repeating hues (hover a star to see its class)"
                                      if len(names) > CLASS_HUES else ""))
        self.legend.set_groups(colours, names, note)
        self.plot.enableAutoRange()

    def _brush(self, colour):
        key = colour.rgba()
        if key not in self._brushes:
            self._brushes[key] = pg.mkBrush(colour)
        return self._brushes[key]

    def mark(self, chosen: int | None, near: np.ndarray, dot: int | None = None) -> None:
        """Ring class ``chosen``, its nearest classes ``near`` and its dots; ring dot ``dot``."""
        if self.Y is None:
            return
        C = self.n_classes
        if chosen is None or not 0 <= chosen < C:
            self.chosen.clear()
            self.near.clear()
            self.class_dots.clear()
        else:
            self.chosen.setData(x=[self.Y[chosen, 0]], y=[self.Y[chosen, 1]])
            near = np.asarray(near, np.int64)
            self.near.setData(x=self.Y[near, 0], y=self.Y[near, 1])
            own = C + np.flatnonzero(self.dot_labels == chosen)
            self.class_dots.setData(x=self.Y[own, 0], y=self.Y[own, 1])
        if dot is None or not 0 <= dot < len(self.Y) - C:
            self.dot_ring.clear()
        else:
            self.dot_ring.setData(x=[self.Y[C + dot, 0]], y=[self.Y[C + dot, 1]])
