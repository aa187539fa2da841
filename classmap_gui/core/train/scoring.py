"""How the one search scores a model on its validation part: by what a person is told.

``"label"`` (the default): on every row, whether the model's label is the true one (the bank's argmax over
every class; ClassMap's top-1). ``"foreground"``: as the hand reader reads a hand (:mod:`.detect.reading`):
on the rows of the foreground classes only, whether the best foreground class among the classes a method
evaluated is the true one. The ``background`` class is never named there: the scan's own "hand found"
threshold, not the bank's argmax, says *no hand*. On the hand model's validation part the bank's argmax put
brute force at 56 % where the reader gives 73 %, and chose a weaker ClassMap than the reader needs.
"""
from __future__ import annotations

import numpy as np

from ..errors import ConfigError

SCORINGS = ("label", "foreground")


def check_kind(kind: str) -> None:
    """ConfigError unless ``kind`` is one of :data:`SCORINGS` (a setting checked before any work)."""
    if kind not in SCORINGS:
        raise ConfigError(f"search scoring must be one of {', '.join(SCORINGS)}, got {kind!r}")


class Scoring:
    """``kind``: one of :data:`SCORINGS`; ``background``: the label never named under ``"foreground"``."""

    def __init__(self, kind: str = "label", background=None):
        check_kind(kind)
        if kind == "foreground" and background is None:
            raise ConfigError("search scoring 'foreground' needs the background class's label")
        self.kind, self.background = kind, background

    def describe(self) -> str:
        """One line for a selection record."""
        return ("label: the predicted label, every row" if self.kind == "label" else
                f"foreground: the best class other than label {self.background} among those a method evaluated "
                "(as the hand reader reads), on the rows of the other classes")

    def rows(self, y) -> np.ndarray:
        """``(n,) bool``: the rows scored (every row, or those of a foreground class)."""
        y = np.asarray(y)
        return np.ones(len(y), bool) if self.kind == "label" else y != self.background

    def brute_hits(self, bank, X, y) -> np.ndarray:
        """``(n,) bool``: brute force (every classifier of ``bank``) right on each row of ``X (n, D)``."""
        y = np.asarray(y)
        if self.kind == "label":
            return np.asarray(bank.predict(X)) == y
        classes = np.asarray(bank.classes_)
        S = np.array(bank.decision_function(X), np.float32, ndmin=2)
        S[:, classes == self.background] = -np.inf
        return classes[S.argmax(axis=1)] == y

    def classmap_hits(self, cm, bank, X, y) -> tuple[np.ndarray, np.ndarray]:
        """``((n,) bool, (n,) evaluations)``: ClassMap ``cm`` (its p and refine as set) right on each row."""
        y = np.asarray(y)
        if self.kind == "label":
            res = cm.predict_result(X, top=1, bank=bank)
            return np.asarray(res.labels) == y, np.asarray(res.evaluations)
        res = cm.predict_result(X, top=int(cm.p), bank=bank)
        c, sc = np.asarray(res.top_classes), np.asarray(res.top_scores, np.float64)
        sc = np.where(np.isnan(sc) | (c == self.background), -np.inf, sc)   # unevaluated or background: never named
        return c[np.arange(len(c)), sc.argmax(axis=1)] == y, np.asarray(res.evaluations)


__all__ = ["SCORINGS", "Scoring", "check_kind"]
