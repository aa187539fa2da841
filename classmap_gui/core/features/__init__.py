"""Feature maps: scikit-learn transformers from uint8 images (n,h,w)|(n,h,w,3) to (n, D) float32.

``KMeansFeatures`` (single-layer k-means network), ``HOGFeatures``, ``PixelFeatures``, and the random
maps of the compressive work; build one by name with :func:`make_features`.
"""
from __future__ import annotations

from .base import FEATURE_MAPS, feature_class, make_features, register_features
from .kmeans import KMeansFeatures

__all__ = ["FEATURE_MAPS", "KMeansFeatures", "feature_class", "make_features", "register_features"]


def __getattr__(name: str):
    # HOGFeatures / PixelFeatures live in modules written separately: import on first use
    for key, target in FEATURE_MAPS.items():
        module, _, cls = target.partition(":")
        if cls == name:
            return feature_class(key)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
