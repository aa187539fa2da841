"""The Explore panel's map behaviour: which layout is drawn (PCA, t-SNE in the background, or the
paper's two reference classifiers), how it is coloured, and choosing a class (its images, nearest and
most confused classes). A mixin of :class:`~.explore.ExplorePanel`, which owns the widgets and data."""
from __future__ import annotations

import numpy as np

from ...core.explore import embedding_map, views
from ...core.explore.class_factors import RIGHT_WRONG, colouring
from ..imageutil import to_pixmap
from .explore_data import tsne_task
from .explore_map import group_colours

MODES = {"pca": "PCA of the embedding", "tsne": "t-SNE of the embedding",
         "fig2": "two reference classifiers (paper Fig. 2)"}
NEIGHBOURS = 8  # nearest and most confused classes listed for the chosen class
TRAIN_THUMBS = 12


class MapControls:
    """Map modes, colouring and class choice for the Explore panel (needs its ``map``, ``detail``,
    ``mode``, ``colour_by``, ``dim_a``/``dim_b``, ``data``, ``project`` and ``runner``)."""

    # ------------------------------------------------------------------ the map
    def map_mode(self) -> str:
        """The chosen map: "pca", "tsne" or "fig2" (two reference classifiers)."""
        return self.mode.currentData()

    def _update_embedding(self) -> None:
        rec = self.project.recogniser
        cm = getattr(rec, "classmap", None)
        mode = self.map_mode()
        self.dims_box.setVisible(mode == "fig2")
        if self.data is None or cm is None or self.data.points is None:
            return
        if mode == "fig2":
            a, b = self.dim_a.value(), self.dim_b.value()
            self.embedding = views.embedding_2d(cm, rec.classifier, self.data.X, self.data.labels, (a, b))
            names = self.project.class_names
            refs = [names[r] if len(cm.class_embeddings_) == len(names) and r < len(names) else f"#{r}"
                    for r in self.embedding.reference]
            self.dims_label.setText(f"x = classifier of {refs[0]!r}, y = classifier of {refs[1]!r}")
            Y = np.vstack([self.embedding.classes, self.embedding.patterns])
            axes = (f"output of the {refs[0]!r} classifier", f"output of the {refs[1]!r} classifier")
        elif mode == "tsne" and "tsne" not in self.data.layouts:
            if self.tsne_task is None:
                self._start_tsne()
            else:  # chosen again while it runs: it is drawn when it ends
                self.info.setText("t-SNE is still arranging the map; it appears here when it has finished.")
            return
        else:
            self.dims_label.setText("")
            Y = self.data.layouts[mode]
            axes = ("t-SNE 1", "t-SNE 2") if mode == "tsne" else ("principal component 1", "principal component 2")
        self.map.set_points(Y, self.map_names, self.data.labels, axes)
        self._recolour()

    def _start_tsne(self) -> None:
        data = self.data
        task = self.runner.run("t-SNE map", tsne_task(data.points))
        if task is None:
            self.info.setText("Another task is running; choose t-SNE again when it has finished.")
            self._set_mode("pca")
            return
        self.tsne_task = task
        n = len(data.points.classes) + len(data.points.queries)
        self.info.setText(f"Arranging {n} points by t-SNE in the background (Cancel below stops it)…")

        def done(Y):
            data.layouts["tsne"] = Y
            if self.data is data and self.map_mode() == "tsne":
                self.info.setText(f"t-SNE map of all {len(self.map_names)} classes and {len(data.labels)} held-out "
                                  "images: near on the map = near in the embedding.")
                self._update_embedding()

        def stopped(text):
            if self.data is data and self.map_mode() == "tsne":
                self.info.setText(text)
                self._set_mode("pca")
        task.succeeded.connect(done)
        task.cancelled.connect(lambda: stopped("t-SNE was cancelled; showing PCA."))
        task.failed.connect(lambda msg: stopped(f"t-SNE failed: {msg}"))
        task.finished.connect(lambda: setattr(self, "tsne_task", None))

    def _set_mode(self, key: str) -> None:
        self.mode.setCurrentIndex(self.mode.findData(key))

    def _recolour(self) -> None:
        if self.data is None or self.map.Y is None or not self.colour_by.count():
            return
        kind = self.colour_by.currentText()
        g = colouring(kind, self.map_names, self.data.labels, self.data.pred, self.factors)
        cols = group_colours(g.names, g.ordered, kind == RIGHT_WRONG)
        self.map.colour(g.classes, g.queries, cols, g.names)
        self._mark()

    def select_class(self, c: int) -> None:
        """Choose class ``c``: ring it on the map with its nearest classes; show its training images,
        nearest classes in the embedding and most confused classes."""
        if self.data is None or self.data.points is None or not 0 <= int(c) < len(self.map_names):
            return
        c = self.selected = int(c)
        near = embedding_map.nearest_classes(self.data.points.classes, c, NEIGHBOURS)
        confused = views.most_confused_with(self.data.tested_labels, self.data.tested_pred, c, NEIGHBOURS)
        ims = self.project.imageset
        own = self.train_idx[ims.labels[self.train_idx] == c]
        self.detail.show_class(c, ims.images[own[:TRAIN_THUMBS]], len(own), near, confused)
        self.detail.search.setText(self.map_names[c])
        self._mark()

    def _mark(self) -> None:
        near = np.zeros(0, np.int64)
        if self.selected is not None and self.data is not None and self.data.points is not None:
            near = embedding_map.nearest_classes(self.data.points.classes, self.selected, NEIGHBOURS)[0]
        self.map.mark(self.selected, near, self.chosen if self.chosen >= 0 else None)

    def _hovered(self, i: int) -> None:
        if self.data is None or not 0 <= i < len(self.data.labels):
            return
        self.hover.setPixmap(to_pixmap(self.data.images[i], 68))
        t, p = int(self.data.labels[i]), int(self.data.pred[i])
        names = self.project.class_names
        self.hover_text.setText(f"#{i}: {names[t]}" + ("" if t == p else f" → recognised as {names[p]}"))

