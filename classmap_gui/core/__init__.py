"""Pure computation: data, features, classifiers, ClassMap, storage. Never imports Qt.

The names below are imported on first use (PEP 562), so a light import such as
``classmap_gui.core.errors`` (the CLI's early checks) does not load scikit-learn and numba.
"""
from .errors import Cancelled, ClassMapError, ConfigError, DataError, ModelFormatError, NotFittedError
from .numba_cache import ensure_writable_cache

ensure_writable_cache()  # before any kernel module imports numba: a read-only install must still run

__all__ = ["Cancelled", "ClassMapError", "CompressiveClassifier", "ConfigError", "DataError", "ImageSet", "ModelFormatError",
           "NotFittedError", "load_dataset"]

_LAZY = {"ImageSet": ".data", "load_dataset": ".data", "CompressiveClassifier": ".classify.banks.compressive"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
