"""What the Explore panel shows, computed without a window: every held-out image's prediction (for the
most confused classes), and on a sample of them (the map's dots) their features, the ClassMap map points
and their PCA layout, the accuracy-against-evaluations curve, and the k-means centroid mosaic.

:func:`explore_views` is long work in the DESIGN.md sense (``progress`` / ``should_stop``); the GUI runs it
in a worker and draws the :class:`ExploreData` it returns.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import embedding_map, views
from ..progress import ProgressFn, StopFn, report, sub_progress
from ..train.training import TrainConfig, split_parts

MOSAIC_DEFAULT = 64  # centroids drawn at first: enough to see the kinds of filters, each big enough to read
CHUNK = 2000         # images recognised per step: features stay a few MB, progress and cancel stay prompt


@dataclass
class ExploreData:
    """Features of a sample of images and what is computed from them.

    ``images``, ``labels``, ``X``: the dots drawn (a sample of the held-out images), their labels ``(n,)
    int64`` and features ``(n, D) float32``; ``trade``: the :class:`~.views.TradeOff` curve or None;
    ``mosaic`` (uint8 image or None), ``mosaic_k`` (centroids in all), ``columns``, ``scale``, ``patch_size``;
    ``pred``: the dots' predicted classes; ``tested_labels`` / ``tested_pred``: every held-out image's true
    and predicted class (for "most confused"); ``points``: the ClassMap map points
    (:class:`~.embedding_map.MapPoints`) or None; ``layouts``: computed 2-D layouts by name ("pca",
    "tsne"), each ``(C + n, 2) float32``, classes first; ``train_idx``: indices ``(m,) int64`` into the
    project's image set of the images training used (its whole set when that cannot be told), or None.
    """

    images: np.ndarray
    labels: np.ndarray
    X: np.ndarray
    trade: views.TradeOff | None = None
    mosaic: np.ndarray | None = None
    mosaic_k: int = 0
    columns: int = 0
    scale: int = 1
    patch_size: int = 0
    pred: np.ndarray | None = None
    tested_labels: np.ndarray | None = None
    tested_pred: np.ndarray | None = None
    points: embedding_map.MapPoints | None = None
    layouts: dict = field(default_factory=dict)
    train_idx: np.ndarray | None = None


def explore_views(rec, images: np.ndarray, labels: np.ndarray, dots: np.ndarray | None = None, *,
                  imageset=None, settings: dict | None = None, progress: ProgressFn = None,
                  should_stop: StopFn = None) -> ExploreData:
    """The Explore views of recogniser ``rec`` on held-out ``images`` with ``labels (n,)``: every image's
    prediction, and on the ``dots`` sample (indices ``(k,)``, default all) features, map points and their
    PCA layout, accuracy vs evaluations and the centroid mosaic; with the project's ``imageset`` and training
    ``settings``, which of its images training used (:func:`training_part`)."""
    n = len(labels)
    idx = np.arange(n) if dots is None else np.asarray(dots, np.int64)
    keep = np.zeros(n, bool)
    keep[idx] = True
    pred_all = np.empty(n, np.int64)
    parts = []
    for s in range(0, n, CHUNK):  # features once per image; the sample's are kept for the map
        report(progress, 0.4 * s / max(n, 1), "recognising the held-out images")
        Xs = rec.transform(images[s:s + CHUNK], should_stop=should_stop)
        pred_all[s:s + CHUNK] = rec.predict_features(Xs, top=1, should_stop=should_stop).labels
        parts.append(Xs[keep[s:s + CHUNK]])
    X = np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)
    X = X[np.argsort(np.argsort(idx, kind="stable"), kind="stable")]  # features in the order of idx
    y = np.asarray(labels)[idx]
    data = ExploreData(images[idx], y, X, pred=pred_all[idx], tested_labels=np.asarray(labels, np.int64),
                       tested_pred=pred_all)
    cm = getattr(rec, "classmap", None)
    if cm is not None:
        data.points = embedding_map.map_points(cm, rec.classifier, X)
        report(progress, 0.5, "PCA of the embedding")
        data.layouts["pca"] = embedding_map.pca_layout(data.points.stacked)
        data.trade = views.accuracy_vs_evaluations(cm, rec.classifier, X, y, should_stop=should_stop,
                                                   progress=sub_progress(progress, 0.5, 1.0))
    if imageset is not None:
        data.train_idx = training_part(imageset, settings or {})
    cents = getattr(rec.features, "centroids_", None)
    if cents is not None:
        data.mosaic_k = len(cents)
        data.mosaic, data.columns, data.scale, data.patch_size = mosaic_of(rec.features, min(len(cents),
                                                                                             MOSAIC_DEFAULT))
    return data


def training_part(imageset, settings: dict) -> np.ndarray:
    """Indices ``(m,) int64`` of the images of ``imageset`` that training with ``settings`` (TrainConfig
    fields) used; all of them when that cannot be told (settings or images edited since training)."""
    try:
        cfg = TrainConfig.from_dict({k: v for k, v in settings.items() if k in TrainConfig.__dataclass_fields__})
        return split_parts(imageset.labels, cfg, imageset.groups)["train"]
    except Exception:  # noqa: BLE001 - whatever no longer fits: every image of the class is shown
        return np.arange(len(imageset))


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
