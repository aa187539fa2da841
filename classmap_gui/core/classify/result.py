"""`Prediction`: what every prediction path returns — labels, ranked candidates and what they cost.

Brute-force scoring (:meth:`Recogniser.predict`) and filter-and-refine (:meth:`ClassMap.predict_result`)
return this one type, so a caller (GUI, CLI, benchmark) reads cost the same way whichever path ran.
The cost is computed from what was evaluated for each query, never read from a counter on the bank:
predicting changes no object, so queries from several threads cannot disturb each other's counts.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Prediction:
    """The result of classifying ``n`` queries: the one result type of ``Recogniser.predict``,
    ``Recogniser.predict_features`` and ``ClassMap.predict_result``.

    Parameters
    ----------
    labels : ndarray of shape (n,), int64
        Best class per query.
    top_classes : ndarray of shape (n, top), int64
        Best classes, best first.
    top_scores : ndarray of shape (n, top), float32
        Their scores (one-vs-all response, all-pairs votes; NaN for a candidate a thresholded refine stopped
        before evaluating).
    evaluations : ndarray of shape (n,), int64
        Binary classifier evaluations spent on each query, counted from what was evaluated: brute force
        ``n_classifiers_``, ClassMap its d references plus the refine's own.
    timings : dict
        Seconds per stage for the whole batch, e.g. ``"features"``, ``"classify"`` (brute force) or
        ``"embedding+filter"`` and ``"refine"`` (ClassMap), and ``"total"``.

    Examples
    --------
    >>> import numpy as np
    >>> from classmap_gui.core.classify.result import Prediction
    >>> p = Prediction(np.array([2]), np.array([[2, 0]]), np.array([[0.9, 0.1]], np.float32), np.array([12]), {})
    >>> int(p.labels[0]), int(p.evaluations[0])
    (2, 12)
    """

    labels: np.ndarray
    top_classes: np.ndarray
    top_scores: np.ndarray
    evaluations: np.ndarray
    timings: dict[str, float] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.labels)


#: The name ClassMap's results had before both paths shared one type.
ClassMapResult = Prediction
