"""A benchmark's selected model and test features, saved so its latency rounds can be re-run alone.

``bench classmap --set save_model=DIR`` writes the selected bank, its ClassMap (the selected refine and p)
and the test part's features and labels; ``bench roofline --set model=DIR`` loads them and times brute
force and ClassMap on them in interleaved rounds (and checks both accuracies) in a few minutes instead of
the bench's whole run. A bundle like a model folder: JSON and ``.npz`` through the store, no pickles.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..core.errors import ModelFormatError
from ..core.store import dump_estimator, load_estimator
from ..core.store.format import load_bundle, save_bundle

FORMAT = "classmap-latency-model"
VERSION = 1
JSON_NAME = "latency-model.json"


def save_latency_model(path: str | Path, bank, cm, X: np.ndarray, y: np.ndarray, info: dict | None = None) -> Path:
    """Save ``bank``, ``cm`` (a fitted ClassMap of it) and the queries ``X (n, D) float32`` / labels ``y (n,)``."""
    arrays: dict[str, np.ndarray] = {"queries": np.ascontiguousarray(X, np.float32), "labels": np.asarray(y)}
    doc = {"format": FORMAT, "version": VERSION, "bank": dump_estimator(bank, arrays, "bank"),
           "classmap": dump_estimator(cm, arrays, "classmap"), "info": dict(info or {})}
    return save_bundle(path, JSON_NAME, doc, arrays)


def save_if_asked(path, bank, cm, X: np.ndarray, y: np.ndarray, info: dict | None = None) -> Path | None:
    """:func:`save_latency_model` when a bench's ``save_model`` option names a folder (None, "" or "none": nothing)."""
    if path in (None, "", "none"):
        return None
    return save_latency_model(path, bank, cm, X, y, info)


def load_latency_model(path: str | Path):
    """``(bank, cm, X, y, info)`` saved by :func:`save_latency_model`; ModelFormatError when it is not one."""
    doc, arrays = load_bundle(path, JSON_NAME, FORMAT, VERSION)
    where = str(path)
    bank = load_estimator(doc.get("bank"), arrays, where=f"{where}: bank")
    cm = load_estimator(doc.get("classmap"), arrays, where=f"{where}: classmap")
    cm.estimator_ = bank
    X, y = arrays.get("queries"), arrays.get("labels")
    if X is None or y is None or X.ndim != 2 or X.dtype != np.float32 or len(y) != len(X):
        raise ModelFormatError(f"{where}: queries must be (n, D) float32 with n labels")
    if X.shape[1] != bank.coef_.shape[1]:
        raise ModelFormatError(f"{where}: queries have {X.shape[1]} features, the bank {bank.coef_.shape[1]}")
    cm.bank_for(bank)
    return bank, cm, X, y, doc.get("info") or {}
