"""Reading the hand a scan found: which shape, which orientation, how sure — what a person is shown.

The scan ranks windows to find *where* the hand is; the winning window's own classes name it poorly (a
window one cell off, 2430 responses a hundredth apart). A detector would classify what it found the way the
classes were trained, so :class:`HandReader`:

1. **re-crops** the voted box (:func:`.boxes.vote_box`) to the training framing — the box is the square
   that frames the hand as the ``hand-pose`` images do — at ``crops`` small shifts of it, and classifies each
   crop with the scan's method (ClassMap's filter-and-refine, or every classifier: brute force); or, with
   ``crops`` 0 (the **frame-pass reading**), runs no network at all: the windows that voted for the box,
   already embedded and classified by the scan, are read with their votes as weights
   (:class:`.box_windows.BoxWindows`, ``ScanResult.box_windows``);
2. turns each crop's (window's) responses into **probabilities**: a softmax of response / ``temperature`` over
   the classes evaluated (ClassMap: its refined candidates, every other class 0), averaged over the crops
   (the windows: weighted by their votes);
3. **integrates** them along the hand's track in a video: the mean over the last ``history`` frames whose
   boxes overlap (IoU >= :data:`TRACK_IOU`); a frame without a hand, or a jump, starts a new track;
4. scores every **shape by its orientation classes together** (the sum of their probabilities): the shape
   with the most wins, its best class names the orientation, and the shape's probability is the confidence.
   A class of its own among the shapes (a gesture a person added: one class, no orientations) would be
   outweighed by a shape's 30 classes' summed mass; with ``rule`` "fair" it is compared against the winning
   shape's best class instead (:func:`read_probabilities`), so the shapes among themselves read as before
   and a model without added classes reads exactly as with "sum".

Whether there is a hand at all is the scan's decision (its "hand found" threshold, calibrated on validation
videos against clutter scenes): the reader then names it among the hand classes. Reading one crop on its
own (:func:`read_probabilities`, the Run panel), the background class's probability is a shape of its own:
when it wins, the reading is "no hand".
Classes whose names are not hand-pose names (a person's own classes) are each their own shape, with no
orientation. ``bench scan`` chooses ``temperature``, ``history`` and ``crops`` on validation videos and the
model carries them (``metadata["detection"]["reading"]``).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import cv2
import numpy as np

from ..classify.classmap.bank_view import linear_weights
from ..data.imageset import BACKGROUND_CLASS
from .boxes import iou
from ..settings.hand import defaults, model_detection
from ..timing import blas_limit

#: a box overlapping the previous frame's by this much continues the hand's track
TRACK_IOU = 0.3
#: shifts of the re-crop, as fractions of the box side, for ``crops`` = 1, 5 or 9
_SHIFTS = ((0.0, 0.0), (0.04, 0.0), (-0.04, 0.0), (0.0, 0.04), (0.0, -0.04),
           (0.04, 0.04), (-0.04, -0.04), (0.04, -0.04), (-0.04, 0.04))
#: the re-crop shifts by their public name (a recorded gesture's crops take the same framings)
RECROP_SHIFTS = _SHIFTS
#: the reader's settings when a model carries none (:mod:`..settings.hand`)
DEFAULTS = defaults("reading")


@dataclass
class Reading:
    """What the person is told: ``found`` (a hand is there), ``label`` (the best class of the winning
    shape, an index into the model's classes, or None), ``shape`` and ``orientation`` (text; orientation ""
    for classes without one), ``confidence`` (the shape's probability, 0..1) and ``box`` (x, y, w, h)."""

    found: bool
    label: int | None
    shape: str | None
    orientation: str
    confidence: float
    box: np.ndarray | None = None


def shape_groups(class_names) -> tuple[np.ndarray, list[str], list[str]]:
    """``(group (C,) int64, group names, orientation text per class)``: hand-pose classes grouped by their
    shape ("V · palm forward · …" -> "V"), any other class its own group; the background class is group -1."""
    from ..data.hand_shapes import SHAPE_NAMES

    known = set(SHAPE_NAMES)
    groups, names, orient = [], [], []
    index: dict[str, int] = {}
    for n in class_names:
        n = str(n)
        if n == BACKGROUND_CLASS:
            groups.append(-1)
            orient.append("")
            continue
        shape, sep, rest = n.partition(" · ")
        key, text = (shape, rest) if sep and shape in known else (n, "")
        if key not in index:
            index[key] = len(names)
            names.append(key)
        groups.append(index[key])
        orient.append(text)
    return np.asarray(groups, np.int64), names, orient


#: how a one-class group (an added gesture) competes with the shapes: "sum" (its probability against a shape's
#: summed classes) or "fair" (against the best shape's best class). The app reads with "sum"; ``bench add-gesture``
#: measures both (``docs/bench/add-gesture.json``, ``choices.adding``: "fair" with weighed re-crops chosen on
#: validation took 10 % of other shapes' frames on test with brute force, and cost ClassMap recall)
GROUP_RULES = ("sum", "fair")
GROUP_RULE = "sum"


def read_probabilities(prob: np.ndarray, groups: np.ndarray, group_names: list[str], orient: list[str],
                       found: bool = True, box=None, rule: str | None = None) -> Reading:
    """A :class:`Reading` from class probabilities ``prob (C,)``: shapes scored by their classes together;
    ``rule`` (None: :data:`GROUP_RULE`) "fair": a class of its own (no hand shape's, e.g. an added gesture) beats
    the best-scoring hand shape when its probability beats that shape's best class (module docstring)."""
    hand = groups >= 0
    shape_p = np.bincount(groups[hand], weights=prob[hand], minlength=len(group_names))
    g = int(np.argmax(shape_p)) if len(shape_p) else -1
    if (GROUP_RULE if rule is None else rule) == "fair" and g >= 0:
        g = _fair_group(prob, groups, group_names, shape_p, g)
    bg = float(prob[~hand].sum())
    if g < 0 or not found or bg > shape_p[g]:
        return Reading(False, None, None, "", bg if g >= 0 else 0.0, box)
    members = np.flatnonzero(groups == g)
    c = int(members[np.argmax(prob[members])])
    return Reading(True, c, group_names[g], orient[c], float(shape_p[g]), box)


def _fair_group(prob, groups, group_names, shape_p, g) -> int:
    """The winning group under the "fair" rule: the best hand shape by its classes' summed probability, unless a
    class of its own (a group that is no hand shape: an added gesture) beats that shape's best class."""
    from ..data.hand_shapes import SHAPE_NAMES

    is_shape = np.isin(np.asarray(group_names, dtype=object), list(SHAPE_NAMES))
    if not is_shape.any() or is_shape.all():
        return g
    hand = groups >= 0
    best = np.zeros(len(shape_p))
    np.maximum.at(best, groups[hand], prob[hand])
    shape = int(np.argmax(np.where(is_shape, shape_p, -np.inf)))
    own = int(np.argmax(np.where(is_shape, -np.inf, best)))
    return own if best[own] > best[shape] else shape


def softmax_scores(classes: np.ndarray, scores: np.ndarray, n_classes: int, temperature: float) -> np.ndarray:
    """``(C,) float64`` probabilities: a softmax of ``scores / temperature`` over ``classes`` (the classes
    evaluated; non-finite scores skipped), every other class 0."""
    ok = np.isfinite(scores)
    out = np.zeros(n_classes)
    if not ok.any():
        return out
    s = scores[ok].astype(np.float64) / max(float(temperature), 1e-9)
    e = np.exp(s - s.max())
    np.add.at(out, classes[ok], e / e.sum())
    return out


def square_crop(grey: np.ndarray, box, size: tuple[int, int], shift=(0.0, 0.0), context: float = 0.0) -> np.ndarray:
    """The square ``box`` (x, y, w, h; its larger side) of ``grey``, moved by ``shift`` (fractions of the
    side) and widened by ``context`` of its side on every side (a window network's crop carries its window's
    surroundings), resized to ``size`` (h, w) by area averaging; the part outside the frame repeats its edge."""
    x, y, w, h = (float(v) for v in box)
    s0 = max(w, h, 1.0)
    s = s0 * (1.0 + 2.0 * float(context))
    cx, cy = x + w / 2 + shift[0] * s0, y + h / 2 + shift[1] * s0
    x0, y0, side = int(round(cx - s / 2)), int(round(cy - s / 2)), int(round(s))
    H, W = grey.shape
    pad = max(0, -x0, -y0, x0 + side - W, y0 + side - H)
    g = cv2.copyMakeBorder(grey, pad, pad, pad, pad, cv2.BORDER_REPLICATE) if pad else grey
    crop = g[y0 + pad:y0 + pad + side, x0 + pad:x0 + pad + side]
    return cv2.resize(crop, (size[1], size[0]), interpolation=cv2.INTER_AREA)


class HandReader:
    """Names the hand a :class:`.scanner.Scanner` found, frame after frame (module docstring).

    ``recogniser``: the scanner's; ``method``: "classmap" or "brute_force" (the scanner's). ``temperature``,
    ``history``, ``crops``: None takes the model's ``metadata["detection"]["reading"]``, else
    :data:`DEFAULTS`; ``crops`` 0 reads the scan's own windows (the frame-pass reading: no network run; a scan
    result without them is read from one re-crop). Keeps the track's recent probabilities: one reader per video or camera.
    ``blas_threads``: brute force's product on at most this many BLAS threads (None: BLAS's own; default one:
    a few re-crops make a small product, and BLAS's spinning workers would slow the next frame, see
    :class:`.scanner.Scanner`).
    """

    def __init__(self, recogniser, method: str = "classmap", temperature: float | None = None,
                 history: int | None = None, crops: int | None = None, blas_threads: int | None = 1,
                 rule: str | None = None):
        rec = recogniser
        self.rule = rule  # how added one-class groups compete (None: GROUP_RULE), see read_probabilities
        saved = {**DEFAULTS, **(model_detection(rec).get("reading") or {})}  # checked settings
        self.rec, self.method = rec, method
        self.temperature = float(saved["temperature"] if temperature is None else temperature)
        self.history = max(1, int(saved["history"] if history is None else history))
        self.crops = min(len(_SHIFTS), max(0, int(saved["crops"] if crops is None else crops)))
        self.groups, self.group_names, self.orient = shape_groups(rec.class_names)
        W, b = linear_weights(rec.classifier)
        self.W = np.ascontiguousarray(W, np.float32)
        self.b = np.ascontiguousarray(b, np.float32)
        self._track: deque = deque(maxlen=self.history)
        self._last_box = None
        self.blas_threads = None if blas_threads is None else int(blas_threads)

    def set_history(self, history: int) -> None:
        """Integrate over the last ``history`` frames from now on (the track is forgotten)."""
        self.history = max(1, int(history))
        self._track = deque(maxlen=self.history)
        self._last_box = None

    def reset(self) -> None:
        """Forget the track (a new video, or the hand left)."""
        self._track.clear()
        self._last_box = None

    def responses(self, grey: np.ndarray, box, crops: int | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per re-crop of ``box`` (``crops`` of them, None: the reader's own, at least one): ``(classes,
        responses)`` by the reader's method (ClassMap: its refined candidates; brute force: every class)."""
        ctx = float(getattr(self.rec.features, "context_", 0.0))
        k = max(1, self.crops if crops is None else int(crops))
        crops = np.stack([square_crop(grey, box, self.rec.image_size, sh, ctx) for sh in _SHIFTS[:k]])
        X = np.ascontiguousarray(self.rec.transform(crops), np.float32)
        if self.method == "brute_force":
            with blas_limit(self.blas_threads):
                S = X @ self.W.T + self.b
            every = np.arange(S.shape[1])
            return [(every, S[i]) for i in range(len(S))]
        pred = self.rec.classmap.predict_result(X, bank=self.rec.classifier)
        return [(np.asarray(pred.top_classes[i]), np.asarray(pred.top_scores[i], np.float64)) for i in range(len(X))]

    def probabilities(self, parts, temperature: float | None = None, weights=None) -> np.ndarray:
        """The crops' responses (:meth:`responses`) or the scan's windows' (:meth:`parts`) as one ``(C,)``
        probability vector over the hand classes (their mean, weighted by ``weights (k,)`` when given; the
        background class left out: the scan's calibrated "hand found" has decided that)."""
        t = self.temperature if temperature is None else temperature
        C = len(self.groups)
        hand = [(c[self.groups[c] >= 0], s[self.groups[c] >= 0]) for c, s in parts]
        return np.average([softmax_scores(c, s, C, t) for c, s in hand], axis=0, weights=weights)

    def parts(self, frame: np.ndarray, result, crops: int | None = None) -> tuple[list, np.ndarray | None]:
        """``(parts, weights or None)`` this reader reads a scanned frame (RGB or grey) from (``crops``: None, its
        own): with crops 0 the windows that voted for the box and their votes (``result.box_windows``; a result
        without them: one re-crop), else the re-crops' responses (:meth:`responses`), equal weights. One path for
        every caller (Find the hand, ``bench scan``, the build's choice): a chosen setting reads the same everywhere."""
        crops = self.crops if crops is None else int(crops)
        win = getattr(result, "box_windows", None)
        if crops == 0 and win is not None:
            return win.parts, win.weights
        grey = frame if frame.ndim == 2 else cv2.cvtColor(np.asarray(frame), cv2.COLOR_RGB2GRAY)
        return self.responses(grey, result.best_box, max(1, crops)), None

    def integrate(self, prob: np.ndarray | None, box) -> np.ndarray | None:
        """Add this frame's probabilities to the track (None: no hand, the track ends) and return the
        track's mean over its last ``history`` frames."""
        if prob is None:
            self.reset()
            return None
        if self._last_box is not None and iou(self._last_box, box) < TRACK_IOU:
            self._track.clear()
        self._track.append(prob)
        self._last_box = box
        return np.mean(self._track, axis=0)

    def read(self, frame: np.ndarray, result) -> Reading:
        """The reading of one scanned frame (``result``: the scanner's :class:`.scanner.ScanResult` of it)."""
        box = result.best_box
        self.last_probabilities = None  # (C,) what the reading was made of: the candidates a view lists
        if box is None or not result.hand_found:
            self.integrate(None, None)
            return Reading(False, None, None, "", 0.0, box)
        parts, weights = self.parts(frame, result)
        prob = self.last_probabilities = self.integrate(self.probabilities(parts, weights=weights), box)
        return read_probabilities(prob, self.groups, self.group_names, self.orient, True, box, self.rule)


class CropReading:
    """Reads one crop per frame from its candidates, as the Run panel does (its capture box, no scan): the
    ``top`` classes and scores the recogniser gave the crop, a softmax at the model's ``temperature``, the mean
    over the last ``history`` frames (None: the model's ``metadata["detection"]["reading"]["history"]``, chosen
    on validation videos by ``bench scan``; 1 reads each frame alone), shapes scored by their classes together,
    the background class a shape of its own ("no hand" when it wins), its score less the model's
    ``no_hand_margin`` (:mod:`.capture`: a hand filling the box must not read as none). One per stream:
    :meth:`reset` between streams."""

    def __init__(self, recogniser, history: int | None = None, rule: str | None = None, settings: dict | None = None):
        self.rule = rule  # how added one-class groups compete (None: GROUP_RULE), see read_probabilities
        # ``settings``: reading settings over the model's saved ones (the build's choice, before it saves them)
        saved = {**DEFAULTS, **(model_detection(recogniser).get("reading") or {}), **(settings or {})}
        # the capture box reads at its own temperature where the build calibrated one (its confidences then mean
        # what they say: :mod:`.capture`), else at the scan reader's
        capture = saved.get("capture_temperature")
        self.temperature = float(saved["temperature"] if capture is None else capture)
        self.history = max(1, int(saved["history"] if history is None else history))
        self.n_classes = len(recogniser.class_names)
        self.groups, self.group_names, self.orient = shape_groups(recogniser.class_names)
        self.no_hand_margin = float(saved["no_hand_margin"])
        self._recent: deque = deque(maxlen=self.history)

    def reset(self) -> None:
        """Forget the recent frames (a new stream, or a new model)."""
        self._recent.clear()

    def read(self, classes, scores) -> Reading:
        """The reading of this frame's candidates ``classes`` / ``scores`` with the recent frames'."""
        self._recent.append(self.probabilities(classes, scores))
        prob = self._recent[0] if len(self._recent) == 1 else np.mean(self._recent, axis=0)
        return read_probabilities(prob, self.groups, self.group_names, self.orient, rule=self.rule)

    def probabilities(self, classes, scores) -> np.ndarray:
        """``(C,)``: one frame's class probabilities from its candidates, the background's score less the margin."""
        classes, scores = np.asarray(classes, np.int64), np.asarray(scores, np.float64)
        if self.no_hand_margin:
            scores = np.where(self.groups[classes] < 0, scores - self.no_hand_margin, scores)
        return softmax_scores(classes, scores, self.n_classes, self.temperature)


__all__ = ["CropReading", "DEFAULTS", "GROUP_RULE", "GROUP_RULES", "HandReader", "RECROP_SHIFTS", "Reading", "TRACK_IOU", "read_probabilities", "shape_groups", "softmax_scores",
           "square_crop"]
