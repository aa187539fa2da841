"""What ClassMap needs to know about a classifier bank, read from its attributes (no base class).

The bank interface (docs/CONTRACTS.md): ``classes_``; linear banks ``coef_ (K, D) float32`` +
``intercept_ (K,) float32`` (K = C for one-vs-all, row k is class k); an all-pairs bank also has
``pairs_ (K, 2) int64``, the class indices (i < j) of each row in lexicographic order, a response
> 0 favouring ``pairs_[k, 0]``. Non-linear banks (no ``coef_``) are reached through
``decision_function`` / ``decision_function_subset``. Nothing here changes the bank.
"""
from __future__ import annotations

import numpy as np

from .classmap_ops import pair_rows  # noqa: F401  (re-exported: part of the bank's row layout)


def bank_kind(bank) -> str:
    """``"pairs"`` for an all-pairs bank (it has ``pairs_``), else ``"ova"``."""
    return "pairs" if getattr(bank, "pairs_", None) is not None else "ova"


def linear_weights(bank) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``(W (K, D) float32, b (K,) float32)`` C-contiguous for a linear bank, ``(None, None)`` otherwise."""
    W = getattr(bank, "coef_", None)
    if W is None:
        return None, None
    W = np.ascontiguousarray(W, np.float32)
    b = np.ascontiguousarray(getattr(bank, "intercept_", np.zeros(W.shape[0], np.float32)), np.float32)
    return W, b


def n_classifiers(bank) -> int:
    """Binary classifiers in the bank: K rows (C one-vs-all, C(C-1)/2 all-pairs)."""
    if bank_kind(bank) == "pairs":
        return len(bank.pairs_)
    return len(bank.classes_)


def classifier_outputs(bank, X: np.ndarray, rows: np.ndarray | None = None, chunk: int = 4096) -> np.ndarray:
    """Raw outputs of classifiers ``rows`` (default all) on ``X (n, D)`` -> ``(n, k) float32``."""
    W, b = linear_weights(bank)
    X = np.asarray(X, np.float32)
    if W is not None:
        if rows is not None:
            W, b = W[rows], b[rows]
        out = np.empty((len(X), W.shape[0]), np.float32)
        for i in range(0, len(X), chunk):
            np.dot(X[i:i + chunk], W.T, out=out[i:i + chunk])
        out += b
        return out
    if rows is None:
        if bank_kind(bank) == "pairs":
            rows = np.arange(len(bank.pairs_))
        else:
            return np.asarray(bank.decision_function(X), np.float32)
    sel = np.broadcast_to(np.asarray(rows, np.int64), (len(X), len(rows)))
    return np.asarray(bank.decision_function_subset(X, sel), np.float32)
