"""Explore panel: a map of the whole ClassMap embedding (PCA, t-SNE, or the paper's Fig. 2 on two
reference classifiers) with a chosen class's images, nearest and most confused classes; the k-means
centroid mosaic, accuracy against evaluations per query (Fig. 3), and one image's candidates."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (QComboBox, QGroupBox, QHBoxLayout, QHeaderView, QLabel, QPushButton, QScrollArea,
                               QSpinBox, QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from ...core.explore.class_factors import colour_choices, factors_of
from ...core.explore.overview import ExploreData
from ..imageutil import to_pixmap
from .explore_class import ClassDetail
from .explore_data import explore_task
from .explore_map import MapPlot
from .explore_mapping import MODES, MapControls
from .explore_mosaic import MosaicBox
from .explore_trade import TradeBox
from .live_map import LiveMapBox

MAX_POINTS = 5000  # held-out images drawn as dots (t-SNE of 2430 classes + 5000 dots: under a minute here)
MAX_TESTED = 12000  # held-out images recognised for the most confused classes (all 29 160 of hand-pose: minutes)
NO_CLASSMAP = ("This recogniser was trained without ClassMap (brute force or compressive: the proposal for a few "
               "classes, where ClassMap saves nothing): the embedding map and the accuracy-vs-evaluations views "
               "need ClassMap.")


class ExplorePanel(MapControls, QWidget):
    """The Explore tab: the 2-D ClassMap embedding, the k-means centroid mosaic, accuracy vs evaluations
    and one image's candidates, for a trained recogniser on a sample of the images."""
    def __init__(self, project, runner, parent=None):
        super().__init__(parent)
        self.project, self.runner = project, runner
        self.data: ExploreData | None = None
        self.embedding = None
        self.chosen = -1
        self.tsne_task = None

        self.compute_btn = QPushButton("Compute views")
        self.compute_btn.clicked.connect(lambda: self.compute())
        self.mode = QComboBox()
        for key, text in MODES.items():
            self.mode.addItem(text, key)
        self.mode.setCurrentIndex(self.mode.findData("pca"))
        self.mode.setToolTip("PCA: instant. t-SNE: keeps neighbours together, runs in the background (Cancel "
                             "below). Two reference classifiers: the paper's Fig. 2 on two embedding dimensions")
        self.mode.currentIndexChanged.connect(lambda _i: self._update_embedding())
        self.colour_by = QComboBox()
        self.colour_by.currentIndexChanged.connect(lambda _i: self._recolour())
        self.dim_a, self.dim_b = QSpinBox(), QSpinBox()
        for s in (self.dim_a, self.dim_b):
            s.setRange(0, 0)
            s.valueChanged.connect(lambda _v: self._update_embedding())
        self.dims_label = QLabel()
        self.dims_box = QWidget()
        db = QHBoxLayout(self.dims_box)
        db.setContentsMargins(0, 0, 0, 0)
        for w in (QLabel("x"), self.dim_a, QLabel("y"), self.dim_b):
            db.addWidget(w)
        self.dims_box.setVisible(False)
        self.info = QLabel("Train a recogniser (with ClassMap for the embedding views), then press Compute views.")
        self.info.setWordWrap(True)
        # a recogniser without ClassMap (the proposal for a few classes): one press trains it again with
        # ClassMap on (the Train panel does, asked through the project) and draws the map when it is done
        self.classmap_btn = QPushButton("Train again with ClassMap on and show the map")
        self.classmap_btn.setToolTip("Trains the same feature map and classifiers with ClassMap on (Train panel), "
                                     "then computes the views: ClassMap places every class on the embedding map")
        self.classmap_btn.clicked.connect(self._train_with_classmap)
        self.classmap_btn.hide()
        self._map_after_training = False
        top = QHBoxLayout()
        top.addWidget(self.compute_btn)
        top.addWidget(QLabel("Map:"))
        top.addWidget(self.mode)
        top.addWidget(self.dims_box)
        top.addWidget(QLabel("Colour by:"))
        top.addWidget(self.colour_by)
        top.addWidget(self.dims_label, 1)

        # (a) the map of the whole embedding, and the chosen class beside it
        self.map = MapPlot()
        self.map.classClicked.connect(self.select_class)
        self.map.dotClicked.connect(lambda i: self.img_index.setValue(i))
        self.map.dotHovered.connect(self._hovered)
        self.points, self.class_points, self.plot = self.map.dots, self.map.stars, self.map.plot
        self.detail = ClassDetail()
        self.detail.classChosen.connect(self.select_class)
        self.hover = QLabel()
        self.hover.setFixedSize(72, 72)
        self.hover.setAlignment(Qt.AlignCenter)
        self.hover.setStyleSheet("QLabel { border: 1px solid #aaa; background: white; }")
        self.hover_text = QLabel("hover a dot")
        self.hover_text.setWordWrap(True)
        side = QWidget()
        side.setMinimumWidth(230)
        side.setMaximumWidth(300)
        sl = QVBoxLayout(side)
        sl.setContentsMargins(0, 0, 0, 0)
        sl.addWidget(self.detail, 1)
        hv = QHBoxLayout()
        hv.addWidget(self.hover)
        hv.addWidget(self.hover_text, 1)
        sl.addLayout(hv)
        emb = QSplitter()
        emb.addWidget(self.map)
        emb.addWidget(side)
        emb.setStretchFactor(0, 1)
        emb_box = self.emb_box = QGroupBox("ClassMap embedding: every class (stars) and held-out images (dots)")
        QVBoxLayout(emb_box).addWidget(emb)
        self.selected: int | None = None
        self.factors = None
        self.train_idx = None
        self.map_names: list[str] = []

        # (b) centroid mosaic
        mosaic_box = self.mosaic_box = MosaicBox(project, lambda: self.data)

        # (c) accuracy vs evaluations (its parts are the panel's too: scripts and tests read them)
        trade_box = self.trade_box = TradeBox()
        self.trade_plot, self.trade_curve, self.trade_note = trade_box.plot, trade_box.curve, trade_box.note
        self.brute_line, self.brute_item = trade_box.brute_line, trade_box.brute_item

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
        self.live = LiveMapBox(project, self.map)  # the Run panel's frames on the map (mainwindow: watch)
        right.addWidget(self.live)
        right.addWidget(mosaic_box)
        right.addWidget(trade_box)
        right.addWidget(one_box)
        right.setSizes([560, 200, 200, 180])
        split = QSplitter()
        split.addWidget(emb_box)
        # the right column scrolls when the window is shorter than its views (a 1366x768 laptop screen):
        # its minimum height would otherwise set the window's, taller than the screen
        right_scroll = QScrollArea()
        right_scroll.setWidgetResizable(True)
        right_scroll.setFrameShape(QScrollArea.NoFrame)
        right_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        right_scroll.setWidget(right)
        split.addWidget(right_scroll)
        split.setSizes([880, 400])
        split.setStretchFactor(0, 1)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        info_row = QHBoxLayout()
        info_row.addWidget(self.info, 1)
        info_row.addWidget(self.classmap_btn)
        lay.addLayout(info_row)
        lay.addWidget(split, 1)
        project.modelChanged.connect(self._model_changed)
        runner.busyChanged.connect(lambda b: self.compute_btn.setEnabled(not b))

    # ------------------------------------------------------------------ compute
    def _model_changed(self) -> None:
        if self.tsne_task is not None:
            self.tsne_task.cancel()
        self.data, self.embedding, self.selected, self.chosen = None, None, None, -1
        self.emb_box.setVisible(True)
        self.trade_box.setVisible(True)
        self.map.clear()
        self.detail.set_names([])
        self.trade_box.clear()
        self.mosaic_box.clear()
        self.cands.setRowCount(0)
        # nothing of the last model or project stays: its search, its image, its colour groups (a hand model's
        # shape and angles), its axes
        self.detail.search.clear()
        self.img_view.clear()
        self.img_index.setRange(0, 0)
        self.colour_by.clear()
        self.dims_label.setText("")
        self.dims_box.setVisible(False)
        rec = self.project.recogniser
        no_map = rec is not None and getattr(rec, "classmap", None) is None
        self.classmap_btn.setVisible(no_map and self.project.imageset is not None and len(self.project.imageset) > 0)
        self.info.setText(NO_CLASSMAP if no_map else "Press Compute views to see inside the trained recogniser."
                          if rec is not None else "Train a recogniser (with ClassMap for the embedding views), then "
                                                  "press Compute views.")
        self.map.set_empty("No map: this recogniser has no ClassMap. The button above trains it again with ClassMap "
                           "on." if no_map else "Press Compute views to draw the map." if rec is not None else
                           "Train a recogniser with ClassMap, then press Compute views to draw the map.")
        if self._map_after_training and rec is not None and not no_map:
            self._map_after_training = False
            QTimer.singleShot(0, self.compute)                 # the map the person asked for, at once

    def _train_with_classmap(self) -> None:
        """The button beside "no ClassMap": ask the Train panel (through the project) to train with ClassMap on."""
        self._map_after_training = True
        self.info.setText("Training with ClassMap on (Train panel); the map is drawn when it is done…")
        self.project.request_training("classmap")

    def held_out(self):
        """Up to MAX_TESTED held-out test images of the last training (else of the whole set), a fixed
        random sample: ``(images, labels)``; the most confused classes are counted on these."""
        p = self.project
        test = p.split[1] if p.split is not None and p.split[1] is not None else None
        ims = test if test is not None and len(test) else p.imageset
        cm = getattr(p.recogniser, "classmap", None)
        mapped = len(cm.class_embeddings_) if cm is not None else p.recogniser.n_classes
        known = np.flatnonzero(ims.labels < mapped)  # classes added since training are not on the map
        idx = known[self._pick(len(known), MAX_TESTED)]
        return ims.images[idx], ims.labels[idx]

    def sample(self):
        """Up to MAX_POINTS of the held-out images: the dots of the map."""
        images, labels = self.held_out()
        idx = self._pick(len(labels), MAX_POINTS)
        return images[idx], labels[idx]

    @staticmethod
    def _pick(n: int, k: int) -> np.ndarray:
        return np.sort(np.random.default_rng(0).choice(n, size=min(k, n), replace=False))

    def compute(self) -> bool:
        """Compute views button: run the explore task on the held-out images in the background; False when untrained."""
        rec = self.project.recogniser
        if rec is None or self.project.imageset is None:
            self.info.setText("Nothing to explore yet: train a recogniser first.")
            return False
        images, labels = self.held_out()
        return self.runner.run("Computing views", explore_task(rec, images, labels, self._pick(len(labels), MAX_POINTS),
                                                               self.project.imageset, dict(self.project.settings)),
                               self._show) is not None

    def _show(self, data: ExploreData) -> None:
        self.data = data
        rec = self.project.recogniser
        cm = getattr(rec, "classmap", None)
        names = self.project.class_names
        self.map_names = names[: len(cm.class_embeddings_)] if cm is not None else list(names)
        self.factors = factors_of(self.map_names)
        self.train_idx = data.train_idx
        self.detail.set_names(self.map_names)
        self.colour_by.blockSignals(True)
        self.colour_by.clear()
        self.colour_by.addItems(colour_choices(self.factors))
        self.colour_by.blockSignals(False)
        # views that need ClassMap or centroids are hidden rather than shown as empty axes
        self.emb_box.setVisible(cm is not None)
        self.trade_box.setVisible(data.trade is not None)
        self.mosaic_box.show_controls(data.mosaic is not None)
        if cm is not None:
            d = len(cm.reference_)
            # signals held: the map is drawn once, below (a changed spin box drew all of it a second time)
            for s, v in ((self.dim_a, 0), (self.dim_b, min(1, d - 1))):
                s.blockSignals(True)
                s.setRange(0, d - 1)
                s.setValue(v)
                s.blockSignals(False)
            what = "held-out test images" if self.project.split is not None else "images of the set"
            if len(data.labels):
                self.info.setText(f"All {len(self.map_names)} classes (stars) and {len(data.labels)} {what} (dots). "
                                  "Click a star or search to choose a class; hover a dot to see it, click it for "
                                  "its candidates.")
            else:
                self.info.setText(f"All {len(self.map_names)} classes (stars). This model came without its images, so "
                                  "there are no held-out images to place on the map or to draw the accuracy curve "
                                  "with: open the project it was trained from to see them.")
        else:
            self.info.setText(NO_CLASSMAP + " Centroids and candidates are shown.")
        self._update_embedding()
        # the rest on the next turn of the event loop: the map is painted first and the window stays responsive
        # between the two paints (all views at once held the UI thread 60-170 ms, a pause a person notices)
        QTimer.singleShot(0, lambda: self._show_rest(data))

    def _show_rest(self, data: ExploreData) -> None:
        """The accuracy curve, the centroid mosaic and the first chosen image of ``data`` (still the shown data)."""
        if self.data is not data:
            return
        if data.trade is not None:
            self.show_trade(data.trade, held_out=len(data.labels))
        self.mosaic_box.show_data(data)
        self.img_index.setRange(0, max(0, len(data.labels) - 1))
        self.choose(0)

    def show_trade(self, t, held_out: int | None = None) -> None:
        """Draw the accuracy-vs-evaluations curve ``t`` (:meth:`.explore_trade.TradeBox.draw`)."""
        self.trade_box.draw(t, held_out)

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
        self.hover.setPixmap(to_pixmap(img, 68))
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
        self._mark()

    # the panel protocol (panel_table.Panel)
    def stop(self) -> None:
        """The project is being replaced: the live map lets go of the Run panel's stream."""
        self.live.shutdown()

    def shutdown(self) -> None:
        """The window closes: end the live map's worker thread."""
        self.live.shutdown()
