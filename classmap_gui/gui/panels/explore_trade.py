"""The Explore panel's accuracy against classifier evaluations per query (the paper's Fig. 3): ClassMap's sweep
of p as a curve, brute force as a square and a dashed line, and a note saying what could not be measured."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGroupBox, QLabel, QVBoxLayout

from ..widgets import WrappedLabel
from .explore_data import readable_range


class TradeBox(QGroupBox):
    """The box with the plot (``plot``, ``curve``, ``brute_item``, ``brute_line``) and its ``note``; :meth:`draw`
    draws one :class:`~classmap_gui.core.explore.views.TradeOff`."""

    def __init__(self, parent=None):
        super().__init__("Accuracy against evaluations per query", parent)
        self.plot = pg.PlotWidget(background="w")
        self.plot.setLabel("bottom", "classifier evaluations per query")
        self.plot.setLabel("left", "accuracy")
        self.plot.setMenuEnabled(False)
        self.plot.getAxis("left").enableAutoSIPrefix(False)
        self.plot.getAxis("left").setWidth(52)  # room for "1.00" without clipping
        self.plot.getAxis("bottom").enableAutoSIPrefix(False)
        self.plot.setMinimumHeight(150)  # never squashed to a strip by the panes around it
        self.curve = self.plot.plot([], [], pen=pg.mkPen((31, 119, 180), width=2), symbol="o",
                                    symbolSize=6, name="ClassMap, sweep of p")
        self.brute_line = pg.InfiniteLine(angle=0, pen=pg.mkPen((214, 39, 40), width=2, style=Qt.DashLine))
        self.brute_item = self.plot.plot([], [], pen=None, symbol="s", symbolBrush=(214, 39, 40),
                                         symbolSize=9, name="brute force")
        self.plot.addItem(self.brute_line)
        self.brute_line.setVisible(False)
        # what the plot lacks (no held-out images, points that are not numbers): as tall as its lines, never cut
        self.note = WrappedLabel("")
        self.note.hide()
        # the legend above the plot, not over it (inside, it covered the curve's top right)
        legend = QLabel("<span style='color:#1f77b4'>●—</span> ClassMap, sweep of p &nbsp; "
                        "<span style='color:#d62728'>■ - -</span> brute force")
        tl = QVBoxLayout(self)
        tl.addWidget(legend)
        tl.addWidget(self.note)
        tl.addWidget(self.plot, 1)

    def clear(self) -> None:
        """Nothing drawn (no model): an empty plot, shown, without a note."""
        self.setVisible(True)
        self.curve.setData([], [])
        self.brute_item.setData([], [])
        self.brute_line.setVisible(False)
        self.note.hide()
        self.plot.show()
        self.plot.enableAutoRange()

    def draw(self, t, held_out: int | None = None) -> None:
        """Draw the accuracy-vs-evaluations curve ``t`` (a :class:`~classmap_gui.core.explore.views.TradeOff`): only its
        points that are numbers (pyqtgraph cannot draw NaN), saying what is missing instead of raising."""
        ev, acc = np.asarray(t.evaluations, np.float64), np.asarray(t.accuracy, np.float64)
        ok = np.isfinite(ev) & np.isfinite(acc)
        brute_ok = bool(np.isfinite(t.brute_accuracy) and np.isfinite(t.brute_evaluations))
        self.curve.setData(ev[ok], acc[ok])
        self.brute_item.setData([t.brute_evaluations] if brute_ok else [], [t.brute_accuracy] if brute_ok else [])
        self.brute_line.setVisible(brute_ok)
        if brute_ok:
            self.brute_line.setPos(t.brute_accuracy)
        note = ""
        if held_out == 0 or (not ok.any() and not brute_ok):
            note = "No held-out images: the accuracy of each p cannot be measured on this model alone."
        elif not ok.all() or not brute_ok:
            note = f"{int((~ok).sum()) + (not brute_ok)} point(s) could not be measured and are not drawn."
        self.note.setText(note)
        self.note.setVisible(bool(note))
        self.plot.setVisible(bool(ok.any() or brute_ok))  # no empty axes under the note
        ys = np.concatenate([acc[ok], [t.brute_accuracy] if brute_ok else []])
        xs = np.concatenate([ev[ok], [t.brute_evaluations] if brute_ok else []])
        self.plot.setYRange(*readable_range(ys), padding=0.05)
        self.plot.setXRange(0, max(1.0, float(xs.max()) if len(xs) else 1.0) * 1.05, padding=0)
