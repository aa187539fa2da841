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
    """The result of classifying ``n`` queries.

    labels: ``(n,) int64`` best class per query.
    top_classes: ``(n, top) int64`` best classes, best first.
    top_scores: ``(n, top) float32`` their scores (one-vs-all response, all-pairs votes; NaN for a
    candidate a thresholded refine stopped before evaluating).
    evaluations: ``(n,) int64`` binary classifier evaluations spent on each query.
    timings: seconds per stage for the whole batch, e.g. ``"features"``, ``"classify"`` (brute force)
    or ``"embedding+filter"`` and ``"refine"`` (ClassMap), and ``"total"``.
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
