"""Classifier banks (one-vs-all, all-pairs), ClassMap and the compressive classifier.

Build a bank by name with :func:`make_bank` (``ova-liblinear``, ``ova-ridge``, ``ova-rbf``,
``all-pairs`` and whatever other modules register with :func:`register_bank`).
"""
from __future__ import annotations

from .allpairs import AllPairsBank
from .classmap import ClassMap, ClassMapResult
from .banks import bank_descriptions, bank_names, make_bank, register_bank, top_k
from .ova import OneVsAllBank

__all__ = ["AllPairsBank", "ClassMap", "ClassMapResult", "OneVsAllBank", "bank_descriptions", "bank_names", "make_bank", "register_bank",
           "top_k"]
