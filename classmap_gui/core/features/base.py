"""``make_features(name, **params)``: a feature map by name, for the CLI, the GUI and saved configs.

Each name maps to ``module:Class`` imported on first use, so a feature map whose module is missing
or fails to import breaks only that name, with a clear :class:`ConfigError`.
"""
from __future__ import annotations

import importlib

from ..errors import ConfigError

FEATURE_MAPS: dict[str, str] = {
    "kmeans": "classmap_gui.core.features.kmeans:KMeansFeatures",
    "hog": "classmap_gui.core.features.hog:HOGFeatures",
    "pixels": "classmap_gui.core.features.pixels:PixelFeatures",
    "rff": "classmap_gui.core.features.random_features:RandomFourierFeatures",
    "cnn": "classmap_gui.core.features.random_cnn:RandomCNNFeatures",
}


def register_features(name: str, target: str) -> None:
    """Make ``make_features(name)`` build ``target`` (``"package.module:Class"``)."""
    FEATURE_MAPS[name] = target


def feature_class(name: str) -> type:
    """The transformer class registered under ``name``."""
    target = FEATURE_MAPS.get(name)
    if target is None:
        raise ConfigError(f"unknown feature map {name!r}; known: {', '.join(sorted(FEATURE_MAPS))}")
    module, _, cls = target.partition(":")
    try:
        return getattr(importlib.import_module(module), cls)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"feature map {name!r} is not available in this installation ({exc})") from exc


def make_features(name: str, **params):
    """A new, unfitted feature map ``name`` with hyper-parameters ``params``.

    Unknown parameter names are a :class:`ConfigError` that lists the valid ones.
    """
    cls = feature_class(name)
    valid = cls().get_params(deep=False) if hasattr(cls, "get_params") else {}
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise ConfigError(f"feature map {name!r} has no parameter(s) {', '.join(unknown)}; "
                          f"valid: {', '.join(sorted(valid))}")
    return cls(**params)
