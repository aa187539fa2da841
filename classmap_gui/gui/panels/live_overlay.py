"""Marks the live frame leaves on a map plot: its marker and trail, its filter candidates, the refined
winner and the true class. Drawing only; positions come from :mod:`classmap_gui.core.explore.live_map`."""
from __future__ import annotations

from collections import deque

import numpy as np
import pyqtgraph as pg

#: recent frames drawn as the marker's trail
TRAIL = 12


class _PassThrough(pg.ScatterPlotItem):
    """Marks that let clicks through to the classes beneath."""

    def mouseClickEvent(self, ev):  # noqa: N802 - pyqtgraph API
        ev.ignore()


class LiveOverlay:
    """The live marks on ``plot`` (a pyqtgraph PlotWidget): ``marker``, ``trail``, ``rings`` (the p
    candidates), ``winner`` and ``truth``; none of them changes the plot's range by itself."""

    def __init__(self, plot: pg.PlotWidget):
        self.plot = plot
        self.positions: deque = deque(maxlen=TRAIL)
        self.trail = pg.PlotDataItem([], [], pen=pg.mkPen(90, 90, 90, 150, width=1.5), symbol="o", symbolSize=5,
                                     symbolPen=None, symbolBrush=(90, 90, 90, 150))
        self.rings = _PassThrough(size=15, symbol="o", pen=pg.mkPen((255, 120, 0), width=2), brush=None, pxMode=True)
        self.truth = _PassThrough(size=22, symbol="s", pen=pg.mkPen((30, 90, 220), width=2.5), brush=None, pxMode=True)
        self.winner = _PassThrough(size=28, symbol="star", pen=pg.mkPen((20, 150, 50), width=2.5), brush=None,
                                   pxMode=True)
        self.marker = _PassThrough(size=17, symbol="o", pen=pg.mkPen("k", width=2), brush=pg.mkBrush(255, 215, 0),
                                   pxMode=True)
        for z, it in enumerate((self.trail, self.rings, self.truth, self.winner, self.marker)):
            it.setZValue(10 + z)
            plot.addItem(it, ignoreBounds=True)

    def clear(self) -> None:
        """No live frame (a new stream, or the live map turned off)."""
        self.positions.clear()
        self.trail.setData([], [])
        for it in (self.rings, self.truth, self.winner, self.marker):
            it.clear()

    def show(self, position: np.ndarray, candidates_xy: np.ndarray, winner_xy: np.ndarray,
             truth_xy: np.ndarray | None) -> None:
        """Draw a frame at ``position (2,)`` with its candidates ``(p, 2)``, winner ``(2,)`` and truth ``(2,)``."""
        self.positions.append(np.asarray(position, np.float32))
        trail = np.asarray(self.positions)
        self.trail.setData(trail[:, 0], trail[:, 1])
        self.rings.setData(x=candidates_xy[:, 0], y=candidates_xy[:, 1])
        self.winner.setData(x=[winner_xy[0]], y=[winner_xy[1]])
        if truth_xy is None:
            self.truth.clear()
        else:
            self.truth.setData(x=[truth_xy[0]], y=[truth_xy[1]])
        self.marker.setData(x=[position[0]], y=[position[1]])

    def follow(self, position: np.ndarray, margin: float = 0.2) -> None:
        """Pan (never zoom) so ``position`` stays inside the view's middle, ``margin`` of each side away."""
        vb = self.plot.getViewBox()
        (x0, x1), (y0, y1) = vb.viewRange()
        w, h = x1 - x0, y1 - y0
        x, y = float(position[0]), float(position[1])
        if x0 + margin * w <= x <= x1 - margin * w and y0 + margin * h <= y <= y1 - margin * h:
            return
        vb.setRange(xRange=(x - w / 2, x + w / 2), yRange=(y - h / 2, y + h / 2), padding=0)
