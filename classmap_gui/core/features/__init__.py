"""Feature maps: scikit-learn transformers from uint8 images (n,h,w)|(n,h,w,3) to (n, D) float32.

``KMeansFeatures`` (single-layer k-means network), ``HOGFeatures``, ``PixelFeatures``, and the random
maps of the compressive work (``RandomFourierFeatures``, ``RandomCNNFeatures``). Build one by name with
:func:`classmap_gui.core.registry.make_features`, which checks every parameter against its schema.
"""
from __future__ import annotations

from .hog import HOGFeatures
from .kmeans import KMeansFeatures
from .pixels import PixelFeatures
from .network import NetworkFeatures
from .random_cnn import RandomCNNFeatures
from .random_features import RandomFourierFeatures

__all__ = ["HOGFeatures", "KMeansFeatures", "NetworkFeatures", "PixelFeatures", "RandomCNNFeatures",
           "RandomFourierFeatures"]
