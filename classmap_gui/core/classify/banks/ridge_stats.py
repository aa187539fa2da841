"""What a fitted ridge bank keeps so that one more one-vs-all classifier is one solve (``OneVsAllRidge.add_class``).

The ridge bank (:func:`.solvers.ridge_solve`) solves ``(G + α I) W = 2 (S − n_c μ)ᵀ`` with ``G`` the centred Gram
matrix ``Σ (x − μ)(x − μ)ᵀ`` of the training rows, ``μ`` their mean and ``S − n_c μ`` each class's centred feature
sum. A new class's classifier needs only ``G``, ``μ``, ``n`` and ``α`` — the other classes' sums are not needed —
so a fitted bank keeps :class:`RidgeStatistics`: ``G`` packed as its upper triangle in float32 (``D (D + 1) / 2``
values: 0.5 MB at D = 512), ``μ`` in float64 and ``n``. A row may count as ``weight`` rows (as if it were there that many times:
``Recogniser.add_class(rows=...)`` lets a class's examples count as a chosen number of rows). Adding rows ``Z (m, D)`` updates them exactly (the
parallel-axis rule: ``G' = G + Σ (z − μ_z)(z − μ_z)ᵀ + n m / (n + m) (μ − μ_z)(μ − μ_z)ᵀ``); the new class's
weights are then the column a from-scratch solve on the union would give it (the new rows are every other class's
negatives there too), while the other classes' weights are left as they were.

:func:`worth_keeping` is the "auto" rule: the packed Gram matrix is kept when it costs at most
:data:`KEEP_RATIO` of the bank's weights (the hand model: C = 2431, D = 512, +11 % of its weights).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import ConfigError, DataError

#: "auto" keeps the statistics when the packed Gram matrix is at most this share of the weights' bytes
KEEP_RATIO = 0.2


def worth_keeping(n_classes: int, n_features: int) -> bool:
    """Whether the packed Gram matrix (``D (D + 1) / 2`` float32) costs at most :data:`KEEP_RATIO` of the weights
    (``C x D`` float32)."""
    D = int(n_features)
    return D * (D + 1) / 2 <= KEEP_RATIO * int(n_classes) * D


def pack(G: np.ndarray) -> np.ndarray:
    """The upper triangle of a symmetric ``G (D, D)``, row by row, as ``(D (D + 1) / 2,) float32``."""
    return G[np.triu_indices(len(G))].astype(np.float32)


def unpack(packed: np.ndarray, D: int) -> np.ndarray:
    """The symmetric ``(D, D) float64`` matrix :func:`pack` packed."""
    G = np.zeros((D, D), np.float64)
    G[np.triu_indices(D)] = packed
    G += np.triu(G, 1).T
    return G


def packed_size(D: int) -> int:
    """Values in the packed upper triangle of a ``(D, D)`` matrix."""
    return D * (D + 1) // 2


@dataclass
class RidgeStatistics:
    """``gram (D, D) float64`` (centred, no penalty), ``mean (D,) float64``, ``n`` rows: a ridge bank's training
    rows as a new classifier needs them."""

    gram: np.ndarray
    mean: np.ndarray
    n: float

    @classmethod
    def of_bank(cls, bank) -> "RidgeStatistics":
        """The statistics a fitted ``OneVsAllRidge`` keeps; ConfigError naming what to do when it keeps none."""
        packed = getattr(bank, "gram_", None)
        if packed is None:
            raise ConfigError("this ridge bank keeps no training statistics (a model saved before they were kept, or "
                              "fitted with keep_statistics=False), so it cannot take a new class without retraining: "
                              "retrain the model with this version (classmap train / classmap hand-model)")
        return cls(unpack(np.asarray(packed), int(bank.n_features_in_)), np.asarray(bank.mean_, np.float64),
                   _count(float(bank.n_samples_seen_)))

    def with_rows(self, Z: np.ndarray, sign: int = 1, weight: float = 1.0) -> "RidgeStatistics":
        """The statistics with the rows ``Z (m, D)`` added (``sign`` -1: taken out again, e.g. undoing a class),
        each counting as ``weight`` rows (2: as if every row were there twice; 0.5: half a row)."""
        Z = np.asarray(Z, np.float64)
        weight = _check_weight(weight)
        m = weight * len(Z)
        n = self.n + sign * m
        if len(Z) == 0:
            return self
        if n < 1:
            raise DataError(f"ridge statistics: cannot take {m:g} rows out of {self.n:g}")
        mz = Z.mean(axis=0)
        Zc = Z - mz
        scatter = weight * (Zc.T @ Zc)
        if sign > 0:
            d = self.mean - mz
            mean = (self.n * self.mean + m * mz) / n
            gram = self.gram + scatter + (self.n * m / n) * np.outer(d, d)
        else:  # the rows were part of the n: the rest's mean, then the same rule backwards
            mean = (self.n * self.mean - m * mz) / n
            d = mean - mz
            gram = self.gram - scatter - (n * m / self.n) * np.outer(d, d)
        return RidgeStatistics(gram, mean, _count(n))

    def classifier(self, Z: np.ndarray, alpha: float, weight: float = 1.0) -> tuple[np.ndarray, float]:
        """``(w (D,) float32, b float32)``: the one-vs-all ridge classifier of a class whose rows are ``Z (m, D)``
        (already added to these statistics, each counting as ``weight`` rows) against all the others, penalty
        ``alpha``."""
        from scipy.linalg import solve

        if not alpha > 0:
            raise ConfigError(f"ridge bank: alpha must be positive, got {alpha}")
        Z = np.asarray(Z, np.float64)
        m = _check_weight(weight) * len(Z)
        G = self.gram.copy()
        G[np.diag_indices_from(G)] += float(alpha)
        w = solve(G, 2.0 * m * (Z.mean(axis=0) - self.mean), assume_a="pos", overwrite_a=True, check_finite=False)
        b = (2.0 * m / self.n - 1.0) - float(self.mean @ w)
        return w.astype(np.float32), np.float32(b)


def _check_weight(weight) -> float:
    if not (np.isfinite(weight) and weight > 0):
        raise ConfigError(f"ridge statistics: a row's weight must be a positive number, got {weight!r}")
    return float(weight)


def _count(n: float):
    """A row count as an int where it is whole (weighted rows can make it fractional)."""
    return int(round(n)) if abs(n - round(n)) < 1e-9 else float(n)


__all__ = ["KEEP_RATIO", "RidgeStatistics", "pack", "packed_size", "unpack", "worth_keeping"]
