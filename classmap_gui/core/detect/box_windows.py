"""The windows behind the box a scan found, with their responses: what the frame-pass reading reads.

The scan has already classified every window of the frame (:class:`.scanner.Scanner`), and the box it keeps for
the hand is voted by the windows overlapping the best one (:func:`.boxes.vote_box`: IoU >= ``vote_overlap``,
weights ``exp((score - best) / vote_temperature)``). Those same windows, with the same weights, can name the hand
without running the network again: their responses (brute force: every class, a row of its GEMM; ClassMap: its
refined candidates) are what :class:`.reading.HandReader` turns into probabilities when its ``crops`` is 0
(instead of re-cropping the box and running the network on each crop). The scanner keeps the :data:`MOST`
heaviest voters: a window weighing less than a thousandth of the best adds nothing a person would see.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .boxes import box_ious

#: the most windows a frame-pass reading reads (the heaviest voters)
MOST = 16
#: voters weighing less than this share of the heaviest are left out
LIGHTEST = 1e-3


@dataclass
class BoxWindows:
    """The windows that voted for a scan's best box: ``parts`` a list of ``(classes (p,) int64, responses (p,))``
    per window (the scan's own responses, copied), ``weights (m,) float64`` their votes summing to 1, ``rows (m,)``
    their rows in the scan's window matrix."""

    parts: list
    weights: np.ndarray
    rows: np.ndarray


def voters(boxes: np.ndarray, score: np.ndarray, k: int, overlap: float, temperature: float,
           most: int = MOST) -> tuple[np.ndarray, np.ndarray]:
    """``(rows (m,) int64, weights (m,) float64)``: the windows that vote for window ``k``'s box (as
    :func:`.boxes.vote_box` weighs them; windows with a non-finite score do not vote), the ``most`` heaviest,
    weights normalised to sum 1. ``temperature`` 0 (no voting): window ``k`` alone."""
    if not temperature > 0:
        return np.array([k], np.int64), np.ones(1)
    o = box_ious(boxes, boxes[k])
    nb = np.flatnonzero((o >= overlap) & np.isfinite(score))
    if not len(nb):
        return np.array([k], np.int64), np.ones(1)
    s = score[nb].astype(np.float64)
    w = np.exp((s - s.max()) / temperature)
    keep = np.flatnonzero(w >= LIGHTEST)
    keep = keep[np.argsort(-w[keep], kind="stable")[:max(1, int(most))]]
    return nb[keep].astype(np.int64), w[keep] / w[keep].sum()


__all__ = ["BoxWindows", "LIGHTEST", "MOST", "voters"]
