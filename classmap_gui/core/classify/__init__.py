"""Classifier banks (one-vs-all, all-pairs, compressive), ClassMap, and the one prediction result type.

Build a bank by name with :func:`classmap_gui.core.registry.make_bank` (``ova-liblinear``,
``ova-ridge``, ``ova-rbf``, ``all-pairs``, ``all-pairs-ridge``, ``compressive``): one class per trainer.
"""
from __future__ import annotations

from .banks.allpairs import AllPairsBank, AllPairsRidge, AllPairsSVM
from .banks.base import top_k
from .classmap.estimator import ClassMap
from .banks.compressive import CompressiveClassifier
from .banks.compressive_bank import CompressiveBank
from .banks.ova import OneVsAllBank, OneVsAllRBF, OneVsAllRidge, OneVsAllSVM
from .result import ClassMapResult, Prediction

__all__ = ["AllPairsBank", "AllPairsRidge", "AllPairsSVM", "ClassMap", "ClassMapResult", "CompressiveBank",
           "CompressiveClassifier", "OneVsAllBank", "OneVsAllRBF", "OneVsAllRidge", "OneVsAllSVM", "Prediction",
           "top_k"]
