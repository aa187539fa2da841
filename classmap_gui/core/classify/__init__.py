"""Classifier banks (one-vs-all, all-pairs, compressive), ClassMap, its filter indexes, and the one prediction result type.

Build a bank by name with :func:`classmap_gui.core.registry.make_bank` (``ova-liblinear``,
``ova-ridge``, ``ova-rbf``, ``all-pairs``, ``all-pairs-ridge``, ``compressive``): one class per trainer.
The folders show the method: ``banks/``, ``classmap/``, ``filters/`` and ``kernels/`` (compiled, importing
nothing above them). The names below load on first use, so the registry can read the filter kinds' table
(``filters.INDEXES``) without the numeric stack.
"""
from __future__ import annotations

import importlib

_LAZY = {
    "AllPairsBank": ".banks.allpairs", "AllPairsRidge": ".banks.allpairs", "AllPairsSVM": ".banks.allpairs",
    "top_k": ".banks.base", "ClassMap": ".classmap.estimator", "CompressiveClassifier": ".banks.compressive",
    "CompressiveBank": ".banks.compressive_bank", "OneVsAllBank": ".banks.ova", "OneVsAllRBF": ".banks.ova",
    "OneVsAllRidge": ".banks.ova", "OneVsAllSVM": ".banks.ova", "ClassMapResult": ".result", "Prediction": ".result",
}
__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
