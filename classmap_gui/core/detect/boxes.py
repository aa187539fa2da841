"""Boxes of a frame (x, y, w, h): overlap (IoU) and the scanner's box voting.

A window is one cell and one scale step away from its neighbours, and the single best one
often frames the hand a little off (IoU 0.3-0.5 with the true box: most misses on the validation
videos). Each box kept by non-maximum suppression is replaced by the score-weighted mean of every window
overlapping it by IoU >= ``vote_overlap`` (the scanner's setting), weights ``exp((score - best score) / vote_temperature)``
(:func:`vote_box`; ``vote_temperature`` 0 switches it off). Per frame, no smoothing across frames; the
cost is one IoU row per kept box.
"""
from __future__ import annotations

import numpy as np


def box_ious(boxes: np.ndarray, box) -> np.ndarray:
    """``(n,)`` IoU of every box ``(n, 4)`` (x, y, w, h) with one box (x, y, w, h)."""
    bx, by, bw, bh = (float(v) for v in box)
    ix = np.clip(np.minimum(boxes[:, 0] + boxes[:, 2], bx + bw) - np.maximum(boxes[:, 0], bx), 0, None)
    iy = np.clip(np.minimum(boxes[:, 1] + boxes[:, 3], by + bh) - np.maximum(boxes[:, 1], by), 0, None)
    inter = ix * iy
    union = boxes[:, 2] * boxes[:, 3] + bw * bh - inter
    return np.divide(inter, union, out=np.zeros(len(inter)), where=union > 0)


def vote_box(boxes: np.ndarray, score: np.ndarray, k: int, overlap: float, temperature: float,
             ious: np.ndarray | None = None) -> np.ndarray:
    """Window ``k``'s box refined by voting: the mean of the boxes ``(n, 4)`` overlapping it by IoU >=
    ``overlap`` (``ious``: their IoU with box k, when already known), weighted by
    ``exp((score - max) / temperature)`` (windows with a non-finite score do not vote). ``(4,) float32``."""
    o = box_ious(boxes, boxes[k]) if ious is None else ious
    nb = np.flatnonzero((o >= overlap) & np.isfinite(score))
    if not len(nb):
        return boxes[k].astype(np.float32, copy=True)
    s = score[nb].astype(np.float64)
    w = np.exp((s - s.max()) / temperature)
    return (w @ boxes[nb].astype(np.float64) / w.sum()).astype(np.float32)


def iou(a, b) -> float:
    """Intersection over union of two boxes (x, y, w, h); 0 when both are empty."""
    return float(box_ious(np.asarray([a], np.float64), b)[0])


__all__ = ["box_ious", "iou", "vote_box"]
