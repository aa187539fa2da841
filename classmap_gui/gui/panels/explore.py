"""Explore panel: the 2-D ClassMap embedding (paper Fig. 2), the k-means centroid mosaic,
accuracy against evaluations per query (Fig. 3), and one image's candidates."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QGroupBox, QHBoxLayout, QHeaderView, QLabel, QListWidget, QListWidgetItem,
                               QPushButton, QScrollArea, QSpinBox, QSplitter, QTableWidget, QTableWidgetItem,
                               QVBoxLayout, QWidget)

from ...core import views
from ..imageutil import to_pixmap
from .explore_data import MOSAIC_DEFAULT, ExploreData, _colours, explore_task, mosaic_of, readable_range  # noqa: F401

MAX_POINTS = 1500


class ExplorePanel(QWidget):
    """The Explore tab: the 2-D ClassMap embedding, the k-means centroid mosaic, accuracy vs evaluations
    and one image's candidates, for a trained recogniser on a sample of the images."""
    def __init__(self, project, runner, parent=None):
        super().__init__(parent)
        self.project, self.runner = project, runner
        self.data: ExploreData | None = None
        self.embedding = None
        self.chosen = -1

        self.compute_btn = QPushButton("Compute views")
        self.compute_btn.clicked.connect(lambda: self.compute())
        self.dim_a, self.dim_b = QSpinBox(), QSpinBox()
        for s in (self.dim_a, self.dim_b):
            s.setRange(0, 0)
            s.valueChanged.connect(lambda _v: self._update_embedding())
        self.dims_label = QLabel()
        self.info = QLabel("Train a recogniser (with ClassMap for the embedding views), then press Compute views.")
        self.info.setWordWrap(True)
        top = QHBoxLayout()
        top.addWidget(self.compute_btn)
        top.addWidget(QLabel("reference classifiers: x"))
        top.addWidget(self.dim_a)
        top.addWidget(QLabel("y"))
        top.addWidget(self.dim_b)
        top.addWidget(self.dims_label, 1)

        # (a) the embedding scatter
        self.plot = pg.PlotWidget(background="w")
        self.plot.setLabel("bottom", "reference classifier x output")
        self.plot.setLabel("left", "reference classifier y output")
        self.plot.setMenuEnabled(False)
        self.points = pg.ScatterPlotItem(size=7, pen=None, hoverable=True, hoverSize=11,
                                         hoverPen=pg.mkPen("k", width=1.5))
        self.points.sigHovered.connect(self._hovered)
        self.points.sigClicked.connect(self._clicked)
        self.class_points = pg.ScatterPlotItem(size=18, symbol="star", pen=pg.mkPen("k", width=1.2))
        self.chosen_point = pg.ScatterPlotItem(size=22, symbol="o", pen=pg.mkPen("r", width=3), brush=None)
        for it in (self.points, self.class_points, self.chosen_point):
            self.plot.addItem(it)
        self.class_list = QListWidget()
        self.class_list.setMaximumWidth(210)
        self.class_list.setTextElideMode(Qt.ElideMiddle)
        self.class_list.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)  # elide, never scroll sideways
        self.class_list.setMinimumWidth(190)
        self.class_list.itemChanged.connect(lambda _i: self._update_embedding())
        all_btn, none_btn = QPushButton("All"), QPushButton("None")
        all_btn.clicked.connect(lambda: self._check_all(True))
        none_btn.clicked.connect(lambda: self._check_all(False))
        self.hover = QLabel()
        self.hover.setFixedSize(96, 96)
        self.hover.setAlignment(Qt.AlignCenter)
        self.hover.setStyleSheet("QLabel { border: 1px solid #aaa; background: white; }")
        self.hover_text = QLabel("hover a point")
        self.hover_text.setWordWrap(True)
        self.hover_text.setMaximumWidth(210)
        cls_col = QWidget()
        cc = QVBoxLayout(cls_col)
        cc.setContentsMargins(0, 0, 0, 0)
        cc.addWidget(QLabel("Show classes"))
        cc.addWidget(self.class_list, 1)
        ab = QHBoxLayout()
        ab.addWidget(all_btn)
        ab.addWidget(none_btn)
        cc.addLayout(ab)
        cc.addWidget(self.hover, 0, Qt.AlignHCenter)
        cc.addWidget(self.hover_text)
        emb = QWidget()
        el = QHBoxLayout(emb)
        el.setContentsMargins(0, 0, 0, 0)
        el.addWidget(self.plot, 1)
        el.addWidget(cls_col)
        emb_box = self.emb_box = QGroupBox("ClassMap embedding: patterns (dots) and classes (stars)")
        QVBoxLayout(emb_box).addWidget(emb)

        # (b) centroid mosaic
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
        mosaic_box = self.mosaic_box = QGroupBox("Learned centroids (whitened patches)")
        mb = QVBoxLayout(mosaic_box)
        mb.addLayout(mrow)
        mb.addWidget(self.mosaic_scroll, 1)

        # (c) accuracy vs evaluations
        self.trade_plot = pg.PlotWidget(background="w")
        self.trade_plot.setLabel("bottom", "classifier evaluations per query")
        self.trade_plot.setLabel("left", "accuracy")
        self.trade_plot.setMenuEnabled(False)
        self.trade_plot.getAxis("left").enableAutoSIPrefix(False)
        self.trade_plot.getAxis("left").setWidth(52)  # room for "1.00" without clipping
        self.trade_plot.getAxis("bottom").enableAutoSIPrefix(False)
        self.trade_plot.addLegend(offset=(-10, -10))
        self.trade_curve = self.trade_plot.plot([], [], pen=pg.mkPen((31, 119, 180), width=2), symbol="o",
                                                symbolSize=6, name="ClassMap, sweep of p")
        self.brute_line = pg.InfiniteLine(angle=0, pen=pg.mkPen((214, 39, 40), width=2, style=Qt.DashLine))
        self.brute_item = self.trade_plot.plot([], [], pen=None, symbol="s", symbolBrush=(214, 39, 40),
                                               symbolSize=9, name="brute force")
        self.trade_plot.addItem(self.brute_line)
        self.brute_line.setVisible(False)
        trade_box = self.trade_box = QGroupBox("Accuracy against evaluations per query")
        QVBoxLayout(trade_box).addWidget(self.trade_plot)

        # (d) one image's candidates
        self.img_index = QSpinBox()
        self.img_index.setRange(0, 0)
        self.img_index.valueChanged.connect(lambda v: self.choose(v))
        self.img_view = QLabel()
        self.img_view.setFixedSize(80, 80)
        self.img_view.setAlignment(Qt.AlignCenter)
        self.cands = QTableWidget(0, 2)
        self.cands.setHorizontalHeaderLabels(["candidate", "score"])
        self.cands.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        self.cands.verticalHeader().setVisible(False)
        self.cands.setEditTriggers(QTableWidget.NoEditTriggers)
        one_box = QGroupBox("One image: its top candidates (red ring in the plot)")
        ol = QHBoxLayout(one_box)
        c1 = QVBoxLayout()
        c1.addWidget(QLabel("image #"))
        c1.addWidget(self.img_index)
        c1.addWidget(self.img_view)
        c1.addStretch(1)
        ol.addLayout(c1)
        ol.addWidget(self.cands, 1)

        right = QSplitter(Qt.Vertical)
        right.addWidget(mosaic_box)
        right.addWidget(trade_box)
        right.addWidget(one_box)
        right.setSizes([240, 240, 220])
        split = QSplitter()
        split.addWidget(emb_box)
        split.addWidget(right)
        split.setSizes([720, 440])
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(self.info)
        lay.addWidget(split, 1)
        project.modelChanged.connect(self._model_changed)
        runner.busyChanged.connect(lambda b: self.compute_btn.setEnabled(not b))

    # ------------------------------------------------------------------ compute
    def _model_changed(self) -> None:
        self.data, self.embedding = None, None
        self.emb_box.setVisible(True)
        self.trade_box.setVisible(True)
        self.points.clear()
        self.class_points.clear()
        self.chosen_point.clear()
        self.trade_curve.setData([], [])
        self.brute_item.setData([], [])
        self.brute_line.setVisible(False)
        self.mosaic.clear()
        self.mosaic.setText("k-means centroids appear here after training with k-means features.")
        self.mosaic_count.setText("")
        self.trade_plot.enableAutoRange()
        self.cands.setRowCount(0)
        self.info.setText("Press Compute views to see inside the trained recogniser." if self.project.recogniser
                          is not None else "Train a recogniser (with ClassMap for the embedding views), then press "
                                           "Compute views.")

    def sample(self):
        """Up to MAX_POINTS held-out images (the last training's test split), else from the whole set."""
        p = self.project
        test = p.split[1] if p.split is not None and p.split[1] is not None else None
        ims = test if test is not None and len(test) else p.imageset
        rng = np.random.default_rng(0)
        idx = np.sort(rng.choice(len(ims), size=min(MAX_POINTS, len(ims)), replace=False))
        return ims.images[idx], ims.labels[idx]

    def compute(self) -> bool:
        """Compute views button: run the explore task on a sample in the background; False when untrained."""
        rec = self.project.recogniser
        if rec is None or self.project.imageset is None:
            self.info.setText("Nothing to explore yet: train a recogniser first.")
            return False
        images, labels = self.sample()
        return self.runner.run("Computing views", explore_task(rec, images, labels), self._show)

    def _show(self, data: ExploreData) -> None:
        self.data = data
        rec = self.project.recogniser
        cm = getattr(rec, "classmap", None)
        names = self.project.class_names
        self.class_list.blockSignals(True)
        self.class_list.clear()
        cols = _colours(len(names))
        self._brushes = [pg.mkBrush(c) for c in cols]
        show_default = set(range(min(len(names), 12)))
        for c, n in enumerate(names):
            it = QListWidgetItem(n)
            it.setToolTip(n)
            it.setFlags(it.flags() | Qt.ItemIsUserCheckable)
            it.setCheckState(Qt.Checked if c in show_default else Qt.Unchecked)
            it.setForeground(pg.mkBrush(cols[c]))
            self.class_list.addItem(it)
        self.class_list.blockSignals(False)
        # views that need ClassMap or centroids are hidden rather than shown as empty axes
        self.emb_box.setVisible(cm is not None)
        self.trade_box.setVisible(data.trade is not None)
        for w in (self.mosaic_n, self.mosaic_zoom):
            w.setVisible(data.mosaic is not None)
        if cm is not None:
            d = len(cm.reference_)
            for s in (self.dim_a, self.dim_b):
                s.blockSignals(True)
                s.setRange(0, d - 1)
                s.blockSignals(False)
            self.dim_a.setValue(0)
            self.dim_b.setValue(min(1, d - 1))
            what = "held-out test images" if self.project.split is not None else "images of the set"
            self.info.setText(f"{len(data.labels)} {what}. Hover a dot to see the image, click it to see "
                              "its candidates. Showing the first 12 classes; tick more on the right.")
        else:
            self.info.setText("This recogniser has no ClassMap (brute force or compressive): the embedding and the "
                              "accuracy-vs-evaluations views need ClassMap. Centroids and candidates are shown.")
        self._update_embedding()
        if data.trade is not None:
            t = data.trade
            self.trade_curve.setData(t.evaluations, t.accuracy)
            self.brute_item.setData([t.brute_evaluations], [t.brute_accuracy])
            self.brute_line.setPos(t.brute_accuracy)
            self.brute_line.setVisible(True)
            ys = np.concatenate([np.asarray(t.accuracy, np.float64), [t.brute_accuracy]])
            xs = np.concatenate([np.asarray(t.evaluations, np.float64), [t.brute_evaluations]])
            self.trade_plot.setYRange(*readable_range(ys), padding=0.05)
            self.trade_plot.setXRange(0, max(1.0, float(xs.max())) * 1.05, padding=0)
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
        self.img_index.setRange(0, max(0, len(data.labels) - 1))
        self.choose(0)

    def _show_mosaic(self, mosaic) -> None:
        self.mosaic.setPixmap(to_pixmap(mosaic))
        k = self.data.mosaic_k if self.data is not None else 0
        self.mosaic_count.setText(f"of {k} centroids")

    def _draw_mosaic(self, auto: bool = False) -> None:
        """Redraw the mosaic with the chosen number of centroids and zoom (auto: a readable zoom)."""
        rec = self.project.recogniser
        if self.data is None or self.data.mosaic is None or rec is None:
            return
        mosaic, cols, scale, p = mosaic_of(rec.features, self.mosaic_n.value(),
                                           0 if auto else self.mosaic_zoom.value())
        if auto:
            self.mosaic_zoom.blockSignals(True)
            self.mosaic_zoom.setValue(scale)
            self.mosaic_zoom.blockSignals(False)
        self.data.mosaic, self.data.columns, self.data.scale, self.data.patch_size = mosaic, cols, scale, p
        self._show_mosaic(mosaic)

    def shown_classes(self) -> np.ndarray:
        """Labels ``(k,)`` int64 of the classes ticked in the class list (the embedding shows only these)."""
        return np.array([c for c in range(self.class_list.count())
                         if self.class_list.item(c).checkState() == Qt.Checked], np.int64)

    def _check_all(self, on: bool) -> None:
        self.class_list.blockSignals(True)
        for c in range(self.class_list.count()):
            self.class_list.item(c).setCheckState(Qt.Checked if on else Qt.Unchecked)
        self.class_list.blockSignals(False)
        self._update_embedding()

    def _update_embedding(self) -> None:
        rec = self.project.recogniser
        if self.data is None or rec is None or getattr(rec, "classmap", None) is None:
            return
        a, b = self.dim_a.value(), self.dim_b.value()
        self.embedding = views.embedding_2d(rec.classmap, rec.classifier, self.data.X, self.data.labels, (a, b))
        refs = self.embedding.reference
        names = self.project.class_names
        ref_names = [names[r] if len(rec.classmap.class_embeddings_) == len(names) and r < len(names) else f"#{r}"
                     for r in refs]
        self.dims_label.setText(f"x = classifier of {ref_names[0]!r}, y = classifier of {ref_names[1]!r}")
        self.plot.setLabel("bottom", f"output of the {ref_names[0]!r} classifier")
        self.plot.setLabel("left", f"output of the {ref_names[1]!r} classifier")
        E = self.embedding.classes
        shown = self.shown_classes()
        shown = shown[shown < len(E)]  # classes added after training have no embedding yet
        mask = np.isin(self.embedding.labels, shown)
        idx = np.flatnonzero(mask)
        P = self.embedding.patterns
        self.points.setData(x=P[idx, 0], y=P[idx, 1], data=idx,
                            brush=[self._brushes[c] for c in self.embedding.labels[idx]])
        self.class_points.setData(x=E[shown, 0], y=E[shown, 1], data=shown,
                                  brush=[self._brushes[c] for c in shown])
        self._mark_chosen()

    def _hovered(self, _item, points, _ev) -> None:
        if self.data is None or len(points) == 0:
            return
        i = int(points[0].data())
        self.hover.setPixmap(to_pixmap(self.data.images[i], 92))
        self.hover_text.setText(f"#{i}: {self.project.class_names[int(self.data.labels[i])]}")

    def _clicked(self, _item, points, _ev) -> None:
        if len(points):
            self.img_index.setValue(int(points[0].data()))

    def choose(self, i: int) -> None:
        """Show image ``i`` of the sample, its top candidates, and ring it in the plot."""
        rec = self.project.recogniser
        if self.data is None or rec is None or not 0 <= i < len(self.data.labels):
            return
        self.chosen = i
        if self.img_index.value() != i:
            self.img_index.blockSignals(True)
            self.img_index.setValue(i)
            self.img_index.blockSignals(False)
        img = self.data.images[i]
        self.img_view.setPixmap(to_pixmap(img, 76))
        self.hover.setPixmap(to_pixmap(img, 92))
        self.hover_text.setText(f"#{i}: {self.project.class_names[int(self.data.labels[i])]}")
        pred = rec.predict(rec.prepare(img[None]), top=10)
        names = self.project.class_names
        true = int(self.data.labels[i])
        top = [int(c) for c in pred.top_classes[0]]
        missed = true not in top  # the filter left the true class out: say so, a person would wonder
        self.cands.setRowCount(len(top) + missed)
        for r, (c, s) in enumerate(zip(top, pred.top_scores[0])):
            name = QTableWidgetItem(names[c] + ("  ✓ true class" if c == true else ""))
            if c == true:
                name.setForeground(pg.mkBrush(26, 127, 55))
            self.cands.setItem(r, 0, name)
            self.cands.setItem(r, 1, QTableWidgetItem("–" if not np.isfinite(s) else f"{float(s):.3f}"))
        if missed:
            note = QTableWidgetItem(f"✗ true class {names[true]} is not among the candidates")
            note.setForeground(pg.mkBrush(180, 30, 30))
            self.cands.setItem(len(top), 0, note)
            self.cands.setItem(len(top), 1, QTableWidgetItem(""))
        self._mark_chosen()

    def _mark_chosen(self) -> None:
        if self.embedding is None or not 0 <= self.chosen < len(self.embedding.patterns):
            self.chosen_point.clear()
            return
        p = self.embedding.patterns[self.chosen]
        self.chosen_point.setData(x=[p[0]], y=[p[1]])
