"""The Explore panel's tasks (core computes: :mod:`classmap_gui.core.explore.overview`, t-SNE in
:mod:`classmap_gui.core.explore.embedding_map`) and how it draws: class colours and readable axis ranges."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from ...core.explore import embedding_map
from ...core.explore.overview import explore_views


def class_colours(n: int) -> list:
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


def explore_task(rec, images, labels, dots=None, imageset=None, settings=None):
    """The Explore views (:func:`~classmap_gui.core.explore.overview.explore_views`) as a task for the runner."""
    return lambda progress, should_stop: explore_views(rec, images, labels, dots, imageset=imageset,
                                                       settings=settings, progress=progress, should_stop=should_stop)


def tsne_task(points):
    """The t-SNE layout of ``points`` (MapPoints) as a task for the runner: ``(C + n, 2) float32``."""
    return lambda progress, should_stop: embedding_map.tsne_layout(points.stacked, progress=progress,
                                                                   should_stop=should_stop)
