"""What the Explore panel draws, computed off the UI thread: features of a sample, the accuracy-against-
evaluations sweep, the centroid mosaic; plus its class colours and axis ranges."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from ...core import embedding_map, views

MOSAIC_DEFAULT = 64  # centroids drawn at first: enough to see the kinds of filters, each big enough to read


def _colours(n: int) -> list:
    """One colour per class, all dark enough to read as text and dots on white.

    Up to 10 classes: a ten-colour palette without light tones; beyond, golden-ratio hue steps with
    the value capped lower for yellow-green hues (which look pale at the same value).
    """
    base = [(31, 119, 180), (214, 39, 40), (44, 140, 44), (148, 103, 189), (200, 100, 0),
            (140, 86, 75), (200, 60, 160), (90, 90, 90), (120, 120, 0), (0, 130, 150)]
    if n <= 10:
        return [pg.mkColor(*base[i]) for i in range(n)]
    out = []
    for i in range(n):
        h = (i * 0.6180339887) % 1.0
        top = 0.55 if 0.1 < h < 0.5 else 0.75
        c = pg.mkColor(0, 0, 0)
        c.setHsvF(h, 0.9, top - 0.15 * ((i * 7) % 3) / 2)
        out.append(c)
    return out


def readable_range(values: np.ndarray, low: float = 0.0, high: float = 1.0, min_span: float = 0.1):
    """An axis range around ``values`` at least ``min_span`` wide inside [low, high], so ticks read like
    0.90, 0.95, 1.00 rather than ten decimals when all values are (nearly) equal."""
    v = np.asarray(values, np.float64)
    v = v[np.isfinite(v)]
    if not len(v):
        return low, high
    a, b = float(v.min()), float(v.max())
    if b - a < min_span:
        mid = (a + b) / 2
        a, b = mid - min_span / 2, mid + min_span / 2
    if b > high:
        a, b = a - (b - high), high
    if a < low:
        a, b = low, min(high, b + (low - a))
    return a, b


class ExploreData:
    """Features of a sample of images and what is computed from them (all by core).

    ``images``, ``labels``, ``X``: the dots drawn (a sample of the held-out images) and their features;
    ``pred``: their predicted classes; ``tested_labels`` / ``tested_pred``: every held-out image's true
    and predicted class (for "most confused"); ``points``: the ClassMap map points
    (:class:`~classmap_gui.core.embedding_map.MapPoints`) or None; ``layouts``: computed 2-D layouts by
    name ("pca", "tsne"), each ``(C + n, 2) float32``, classes first.
    """

    def __init__(self, images, labels, X, trade, mosaic, mosaic_k, columns, scale=1, patch_size=0, *,
                 pred=None, tested_labels=None, tested_pred=None, points=None, layouts=None):
        self.images, self.labels, self.X = images, labels, X
        self.trade, self.mosaic, self.mosaic_k, self.columns = trade, mosaic, mosaic_k, columns
        self.scale, self.patch_size = scale, patch_size
        self.pred = pred
        self.tested_labels = labels if tested_labels is None else tested_labels
        self.tested_pred = pred if tested_pred is None else tested_pred
        self.points = points
        self.layouts = dict(layouts or {})


def explore_task(rec, images, labels, dots=None):
    """A background task computing the Explore views of ``rec`` on held-out ``images`` with ``labels (n,)``:
    every image's prediction (for the most confused classes), and on the ``dots`` sample (indices, default
    all) features, map points and their PCA layout, accuracy vs evaluations and the centroid mosaic."""
    def work(progress, should_stop):
        n = len(labels)
        idx = np.arange(n) if dots is None else np.asarray(dots, np.int64)
        keep = np.zeros(n, bool)
        keep[idx] = True
        pred_all = np.empty(n, np.int64)
        parts = []
        for s in range(0, n, 2000):  # features once per image; the sample's are kept for the map
            progress(0.4 * s / max(n, 1), "recognising the held-out images")
            Xs = rec.transform(images[s:s + 2000], should_stop=should_stop)
            pred_all[s:s + 2000] = rec.predict_features(Xs, top=1, should_stop=should_stop).labels
            parts.append(Xs[keep[s:s + 2000]])
        X = np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)
        order = np.argsort(np.argsort(idx, kind="stable"), kind="stable")  # features in the order of idx
        X = X[order]
        sample, y = images[idx], np.asarray(labels)[idx]
        trade = points = None
        layouts = {}
        cm = getattr(rec, "classmap", None)
        if cm is not None:
            points = embedding_map.map_points(cm, rec.classifier, X)
            progress(0.5, "PCA of the embedding")
            layouts["pca"] = embedding_map.pca_layout(points.stacked)
            trade = views.accuracy_vs_evaluations(
                cm, rec.classifier, X, y, should_stop=should_stop,
                progress=lambda f, s: progress(0.5 + 0.5 * f, s))
        mosaic, k, cols, scale, p = None, 0, 0, 1, 0
        cents = getattr(rec.features, "centroids_", None)
        if cents is not None:
            k = len(cents)
            mosaic, cols, scale, p = mosaic_of(rec.features, min(k, MOSAIC_DEFAULT))
        return ExploreData(sample, y, X, trade, mosaic, k, cols, scale, p, pred=pred_all[idx],
                           tested_labels=np.asarray(labels, np.int64), tested_pred=pred_all, points=points,
                           layouts=layouts)
    return work


def tsne_task(points):
    """A background task laying ``points`` (MapPoints) out by t-SNE: ``(C + n, 2) float32``."""
    def work(progress, should_stop):
        # one gradient thread: the other core stays free for the window (a 2-core machine)
        return embedding_map.tsne_layout(points.stacked, n_threads=1, progress=progress, should_stop=should_stop)
    return work


def mosaic_of(features, n: int, zoom: int = 0):
    """The first ``n`` centroids of a k-means map as a mosaic: ``(image, columns, scale, patch_size)``.

    ``zoom`` 0 picks a scale that makes each tile about 24 pixels; otherwise pixels are enlarged ``zoom`` times.
    """
    cents = features.centroids_[:n]
    p = int(getattr(features, "patch_size_", features.patch_size))
    ch = int(getattr(features, "n_channels_", 1))
    cols = int(np.ceil(np.sqrt(len(cents))))
    scale = zoom or max(1, min(12, 24 // p))
    return views.centroid_mosaic(cents, p, ch, columns=cols, pad=1, scale=scale), cols, scale, p
