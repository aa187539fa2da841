"""The hand-vs-background detector (Dalal & Triggs): one linear classifier on the window HOG.

The class bank's hand responses are all near -1 (2430 one-vs-all ridge classifiers), so ranking windows
by them compares differences of hundredths, and a part of the hand can outrank the whole. This stage
answers one question for every window, *does it frame a hand?*, with every hand class pooled:

* training windows are the scan's own windows (:class:`.pyramid.WindowPyramid`, every scale, one cell
  apart) over generated hand scenes (:mod:`..data.hand_scene`, their own random stream, never a
  validation or test video's), so positives are framed exactly as the scan frames a hand;
* a window is positive when it overlaps the true hand box by IoU >= :data:`POSITIVE_IOU`; negatives are
  every other window near the hand (IoU >= 0.05: shifted, parts of the hand, boxes too large) and a
  random share of the clutter windows;
* the classifier is a class-balanced ridge (labels +-1, the two classes weighted equally), fitted from
  normal equations accumulated scene by scene (no window matrix kept); its output is scaled to unit
  standard deviation over the training windows, so the weight a scan gives it is comparable across models.

Stored in the model's metadata (``metadata["detection"]["detector"]``: ``{"w": [...], "b": ...}``, plain
JSON, no pickles); :class:`.scanner.Scanner` evaluates it on every window with both methods.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError, ModelFormatError
from ..progress import ProgressFn, StopFn, check_stop, report
from .pyramid import DEFAULT_SIDES

#: a window overlapping the true hand box by at least this is a hand (the scan's hit criterion)
POSITIVE_IOU = 0.5
#: windows overlapping the hand less than this are clutter: a random share of them is kept
NEAR_IOU = 0.05


@dataclass
class HandDetector:
    """``score(X) = X @ w + b`` for window rows ``X (n, D)``; higher: more like a framed hand."""

    w: np.ndarray
    b: float

    def score(self, X: np.ndarray) -> np.ndarray:
        # np.dot, not @: numpy's matmul holds the GIL for a matrix-vector product (the window would freeze)
        return np.dot(np.asarray(X, np.float32), self.w) + np.float32(self.b)

    def to_json(self) -> dict:
        return {"w": [float(v) for v in self.w], "b": float(self.b), "positive_iou": POSITIVE_IOU}

    @classmethod
    def from_json(cls, doc, n_features: int) -> "HandDetector":
        try:
            w = np.asarray(doc["w"], np.float32)
            b = float(doc["b"])
        except (KeyError, TypeError, ValueError) as e:
            raise ModelFormatError(f"model metadata: detection.detector is malformed ({e})") from None
        if w.shape != (n_features,) or not np.all(np.isfinite(w)) or not np.isfinite(b):
            raise ModelFormatError(f"model metadata: detection.detector needs {n_features} finite weights, got {w.shape}")
        return cls(np.ascontiguousarray(w), b)


def window_ious(boxes: np.ndarray, box) -> np.ndarray:
    """IoU of every window ``(n, 4)`` (x, y, w, h) with the square ``box`` (x, y, side)."""
    bx, by, s = (float(v) for v in box)
    ix = np.clip(np.minimum(boxes[:, 0] + boxes[:, 2], bx + s) - np.maximum(boxes[:, 0], bx), 0, None)
    iy = np.clip(np.minimum(boxes[:, 1] + boxes[:, 3], by + s) - np.maximum(boxes[:, 1], by), 0, None)
    inter = ix * iy
    return inter / (boxes[:, 2] * boxes[:, 3] + s * s - inter)


def training_scene(seed: int, i: int, scene_size=(240, 320)):
    """Generated scene ``i``: ``(grey (h, w) uint8, true box (x, y, side))`` — a hand of a random pose,
    orientation, skin and light, 0.33-0.57 of the shorter side, over clutter."""
    from ..data.hand_scene import random_hand_scene

    return random_hand_scene(np.random.default_rng([seed, 1103, i]), *scene_size)


def _solve(A, s, count, groups, alpha):
    """Weighted ridge from the groups' normal equations: positives weigh 1 (label +1), every negative
    group weighs 1 (label -1), the penalty ``alpha`` per window of the first two groups."""
    D = len(s[True])
    M = sum(A[g] / count[g] for g in groups)
    rhs = sum((1.0 if g is True else -1.0) * s[g] / count[g] for g in groups)
    M[np.arange(D - 1), np.arange(D - 1)] += alpha / (count[True] + count[False]) * 2
    return np.linalg.solve(M, rhs)


def train_detector(features, n_scenes: int = 400, *, alpha: float = 10.0, seed: int = 0, sides=DEFAULT_SIDES,
                   clutter_share: float = 0.08, rounds: int = 0, mined_per_scene: int = 10, scene_size=(240, 320),
                   progress: ProgressFn = None, should_stop: StopFn = None) -> HandDetector:
    """Fit the detector on the windows of ``n_scenes`` generated scenes (see the module docstring).
    ``features``: the recogniser's fitted HOG (the windows' features are its descriptor).
    ``rounds``: Dalal-Triggs bootstrap rounds — each scans ``n_scenes`` new scenes with the detector so
    far, keeps each scene's ``mined_per_scene`` best-scoring windows that miss the hand (IoU < 0.5: its
    false alarms) as a third group weighing as much as all other negatives, and refits."""
    from .dense_hog import DenseHOG
    from .pyramid import WindowPyramid

    if n_scenes < 1 or alpha <= 0 or not 0 <= clutter_share <= 1 or rounds < 0:
        raise ConfigError(f"hand detector: needs n_scenes >= 1, alpha > 0, 0 <= clutter_share <= 1 "
                          f"(got {n_scenes}, {alpha}, {clutter_share})")
    pyr = WindowPyramid(DenseHOG(features), sides)
    D = pyr.dense.n_features + 1
    A = {True: np.zeros((D, D)), False: np.zeros((D, D)), "hard": np.zeros((D, D))}
    s = {True: np.zeros(D), False: np.zeros(D), "hard": np.zeros(D)}
    count = {True: 0, False: 0, "hard": 0}
    steps = n_scenes * (1 + rounds)
    rng = np.random.default_rng([seed, 1109])
    for i in range(n_scenes):
        check_stop(should_stop)
        grey, box = training_scene(seed, i, scene_size)
        X = pyr.features(grey)
        o = window_ious(pyr.boxes(*grey.shape), box)
        keep = (o >= NEAR_IOU) | (rng.random(len(o)) < clutter_share)
        Xa = np.hstack([X[keep], np.ones((int(keep.sum()), 1), np.float32)])
        pos = o[keep] >= POSITIVE_IOU
        for lab in (True, False):
            part = Xa[pos == lab]
            A[lab] += (part.T @ part).astype(np.float64)
            s[lab] += part.sum(axis=0, dtype=np.float64)
            count[lab] += len(part)
        report(progress, (i + 1) / steps, "hand detector")
    if count[True] == 0 or count[False] == 0:
        raise ConfigError("hand detector: the training scenes gave no positive or no negative window")
    groups = [True, False]
    sol = _solve(A, s, count, groups, alpha)
    for r in range(rounds):
        for i in range(n_scenes):
            check_stop(should_stop)
            grey, box = training_scene(seed, n_scenes * (r + 1) + i, scene_size)
            X = pyr.features(grey)
            o = window_ious(pyr.boxes(*grey.shape), box)
            sc = X @ sol[:-1].astype(np.float32) + np.float32(sol[-1])
            sc[o >= POSITIVE_IOU] = -np.inf
            top = np.argsort(-sc)[:mined_per_scene]
            Xa = np.hstack([X[top], np.ones((len(top), 1), np.float32)])
            A["hard"] += (Xa.T @ Xa).astype(np.float64)
            s["hard"] += Xa.sum(axis=0, dtype=np.float64)
            count["hard"] += len(top)
            report(progress, (n_scenes * (r + 1) + i + 1) / steps, "hand detector: false alarms")
        groups = [True, False, "hard"]
        sol = _solve(A, s, count, groups, alpha)
    sol = np.asarray(sol)
    w, b = sol[:-1], sol[-1]
    # unit standard deviation of the output over the training windows (positives and negatives weighing half)
    mean = 0.5 * (s[True] / count[True] + s[False] / count[False]) @ sol
    second = 0.5 * (sol @ (A[True] / count[True]) @ sol + sol @ (A[False] / count[False]) @ sol)
    sd = float(np.sqrt(max(second - mean ** 2, 1e-12)))
    return HandDetector(np.ascontiguousarray(w / sd, np.float32), float(b / sd))


__all__ = ["HandDetector", "NEAR_IOU", "POSITIVE_IOU", "train_detector", "training_scene", "window_ious"]
