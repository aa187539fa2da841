"""The Explore panel's mosaic of the learned k-means centroids (whitened patches): how many to draw and at what
zoom, redrawn from the recogniser's feature map (:func:`~classmap_gui.core.explore.overview.mosaic_of`)."""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGroupBox, QHBoxLayout, QLabel, QScrollArea, QSpinBox, QVBoxLayout

from ...core.explore.overview import MOSAIC_DEFAULT, mosaic_of
from ..imageutil import to_pixmap


class MosaicBox(QGroupBox):
    """The centroid mosaic of the shown views (``data()``: the panel's :class:`~classmap_gui.core.explore.overview.
    ExploreData`, or None) for ``project``'s recogniser; hidden when its feature map has no centroids."""

    def __init__(self, project, data: Callable, parent=None):
        super().__init__("Learned centroids (whitened patches)", parent)
        self.project, self.data = project, data
        self.mosaic = QLabel("k-means centroids appear here after training with k-means features.")
        self.mosaic.setAlignment(Qt.AlignCenter)
        self.mosaic.setWordWrap(True)
        self.mosaic_scroll = QScrollArea()
        self.mosaic_scroll.setWidget(self.mosaic)
        self.mosaic_scroll.setWidgetResizable(True)
        self.mosaic_scroll.setAlignment(Qt.AlignCenter)
        self.mosaic_scroll.setMinimumSize(180, 150)
        self.mosaic_n = QSpinBox()
        self.mosaic_n.setRange(1, 1)
        self.mosaic_n.setPrefix("show ")
        self.mosaic_n.setToolTip("How many of the learned centroids to draw (the first ones)")
        self.mosaic_zoom = QSpinBox()
        self.mosaic_zoom.setRange(1, 16)
        self.mosaic_zoom.setSuffix("× zoom")
        self.mosaic_n.valueChanged.connect(lambda _v: self._draw_mosaic(auto=True))
        self.mosaic_zoom.valueChanged.connect(lambda _v: self._draw_mosaic())
        mrow = QHBoxLayout()
        mrow.addWidget(self.mosaic_n)
        mrow.addWidget(self.mosaic_zoom)
        self.mosaic_count = QLabel("")
        mrow.addWidget(self.mosaic_count, 1)
        mb = QVBoxLayout(self)
        mb.addLayout(mrow)
        mb.addWidget(self.mosaic_scroll, 1)

    def clear(self) -> None:
        """No mosaic (no model): the box shown with what will appear in it."""
        self.setVisible(True)
        self.mosaic.clear()
        self.mosaic.setText("k-means centroids appear here after training with k-means features.")
        self.mosaic_count.setText("")

    def show_controls(self, shown: bool) -> None:
        """The count and zoom boxes shown only for a feature map with centroids."""
        for w in (self.mosaic_n, self.mosaic_zoom):
            w.setVisible(shown)

    def show_data(self, data) -> None:
        """Show ``data``'s mosaic at its own zoom (the first :data:`MOSAIC_DEFAULT` centroids), or hide the box."""
        if data.mosaic is not None:
            self.mosaic_n.blockSignals(True)
            self.mosaic_n.setRange(1, data.mosaic_k)
            self.mosaic_n.setValue(min(data.mosaic_k, MOSAIC_DEFAULT))
            self.mosaic_n.blockSignals(False)
            self.mosaic_zoom.blockSignals(True)
            self.mosaic_zoom.setValue(data.scale)
            self.mosaic_zoom.blockSignals(False)
            self._show_mosaic(data.mosaic)
        else:
            self.mosaic.setText("The feature map has no centroids (choose k-means features to see them).")
        self.setVisible(data.mosaic is not None)  # room for the map when there is nothing to show

    def _show_mosaic(self, mosaic) -> None:
        self.mosaic.setPixmap(to_pixmap(mosaic))
        data = self.data()
        k = data.mosaic_k if data is not None else 0
        self.mosaic_count.setText(f"of {k} centroids")

    def _draw_mosaic(self, auto: bool = False) -> None:
        """Redraw the mosaic with the chosen number of centroids and zoom (auto: a readable zoom)."""
        rec, data = self.project.recogniser, self.data()
        if data is None or data.mosaic is None or rec is None:
            return
        mosaic, cols, scale, p = mosaic_of(rec.features, self.mosaic_n.value(),
                                           0 if auto else self.mosaic_zoom.value())
        if auto:
            self.mosaic_zoom.blockSignals(True)
            self.mosaic_zoom.setValue(scale)
            self.mosaic_zoom.blockSignals(False)
        data.mosaic, data.columns, data.scale, data.patch_size = mosaic, cols, scale, p
        self._show_mosaic(mosaic)
