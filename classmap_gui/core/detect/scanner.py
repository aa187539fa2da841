"""`Scanner`: find the hand in a frame — every window classified, background rejected, best boxes kept.

One frame: grey -> :class:`.pyramid.WindowPyramid` (dense HOG of every window at every scale, one
matrix ``X (n, D)``) -> the recogniser's classes for all windows at once, by

* ``"classmap"``: the recogniser's own ClassMap on the window matrix (``ClassMap.predict_result``, the batch
  filter-and-refine; d + ~p classifier evaluations per window), or
* ``"brute_force"``: every classifier on every window, one GEMM ``X @ W.T`` (the fastest honest
  baseline: same features, same threads);

then background rejection and non-maximum suppression (OpenCV's ``cv2.dnn.NMSBoxes``).

The cascade (a recogniser whose features are not HOG, e.g. the trained hand network): the window HOG is
scored by the model's hand detector alone (``metadata["detection"]["finder"]`` holds its HOG settings), and
only its best ``candidates`` windows (``metadata["detection"]["candidates"]``, default :data:`CANDIDATES`) are
cropped, embedded by the recogniser's own features and classified as above; the network's forward pass on
every window would cost ~20x more. ``ScanResult.windows`` then counts the windows classified.

Background: the recogniser has a class named :data:`~..data.imageset.BACKGROUND_CLASS` (clutter crops,
images a person filed there). A window is a hand candidate when a hand class beats it; its score is
the margin ``best hand response - background_weight * background response`` (the background
classifier is evaluated on every window by both methods: one more evaluation each; ``bench scan``
chooses the weight on a validation video). Without a background class the score is the
best response and nothing is rejected.

Hand detector: when the model carries one (:mod:`.detector`, ``metadata["detection"]["detector"]``, a
linear hand-vs-background classifier on the same window HOG), its output is added to the score with the
weight ``detector_weight`` (``metadata["detection"]["detector_weight"]``, chosen on validation videos):
``score = best hand - background_weight * background + detector_weight * detector``. Both methods
evaluate it on every window: ClassMap through its numba dot kernel, brute force as one more row of its GEMM.

Box voting: each box kept by non-maximum suppression is refined by the windows overlapping it
(:func:`.boxes.vote_box`; ``vote_temperature`` 0 switches it off).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import cv2
import numpy as np

from ..classify.kernels.batch import embed_batch
from ..classify.classmap.bank_view import linear_weights
from ..data.imageset import BACKGROUND_CLASS
from ..errors import ConfigError, NotFittedError
from ..timing import blas_limit
from .dense_hog import DenseHOG, is_hog
from .boxes import vote_box
from .box_windows import BoxWindows, voters
from .cascade import finder_hog, window_crop
from .detector import HandDetector
from .pyramid import DEFAULT_SIDES, NetworkPyramid, WindowPyramid, is_window_network
from ..settings.hand import defaults, model_detection

METHODS = ("classmap", "brute_force")
#: the scan's settings when a model holds none (:mod:`..settings.hand`: box voting, the cascade's windows per frame,
#: the weights in a window's score, the window sides)
SCAN_DEFAULTS = defaults("scan")
VOTE_OVERLAP, VOTE_TEMPERATURE = SCAN_DEFAULTS["vote_overlap"], SCAN_DEFAULTS["vote_temperature"]
CANDIDATES = SCAN_DEFAULTS["candidates"]


@dataclass
class ScanResult:
    """What one scanned frame gave.

    ``boxes (k, 4) float32`` (x, y, w, h, frame pixels), ``scores (k,)`` and ``labels (k,) int64`` of
    the best windows after non-maximum suppression, best first; ``found (k,) bool``: a hand class beats
    the background class there (by more than the scanner's ``threshold``).
    ``top_classes (t,)`` / ``top_scores (t,)``: the best window's candidate classes (hand classes only).
    ``windows``: windows classified; ``evaluations``: mean classifier evaluations per window;
    ``timings``: seconds per stage (features, classify, select, total) and within classify ("classify:
    embedding+filter", "classify: refine", "classify: background" for ClassMap; "classify: gemm",
    "classify: best class" for brute force) and "select: box windows".
    ``box_windows``: the windows that voted for the best box, with their responses and votes
    (:class:`.box_windows.BoxWindows`: what a frame-pass reading reads), None without a box.
    """

    boxes: np.ndarray
    scores: np.ndarray
    labels: np.ndarray
    found: np.ndarray
    top_classes: np.ndarray
    top_scores: np.ndarray
    windows: int
    evaluations: float
    timings: dict = field(default_factory=dict)
    box_windows: BoxWindows | None = None

    @property
    def best_box(self) -> np.ndarray | None:
        """The best window's box (x, y, w, h) (found or not), or None for a frame without windows."""
        return self.boxes[0] if len(self.boxes) else None

    @property
    def hand_found(self) -> bool:
        """True when a hand class beats the background class in the best window."""
        return bool(len(self.found) and self.found[0])

    @property
    def label(self) -> int | None:
        """The winning class (index into the recogniser's class names), or None."""
        return int(self.labels[0]) if len(self.labels) else None


class Scanner:
    """Scans frames with a trained :class:`~..recogniser.Recogniser` (linear one-vs-all bank; HOG features, or any
    features with the model's HOG hand detector: the cascade of the module docstring).

    ``method``: "classmap" (needs the recogniser's ClassMap) or "brute_force". ``sides``: window sides
    as fractions of the frame's shorter side (None: the model's ``metadata["detection"]["sides"]``, else
    :data:`.pyramid.DEFAULT_SIDES`). ``top``: candidates reported for the best window.
    ``max_boxes`` / ``overlap``: boxes kept by non-maximum suppression and the IoU above which a weaker
    box is dropped. ``threshold``: how far the best hand response must beat the background response for
    a window to count as a hand (0: beat it); ``background_weight``: the background response's weight
    in the score that ranks windows (None: the model's ``metadata["detection"]["background_weight"]``,
    else 1). ``detector_weight``: the hand detector's weight (None: the model's
    ``metadata["detection"]["detector_weight"]``, else 1 when the model has a detector; 0 switches it off).
    ``vote_overlap`` / ``vote_temperature``: box voting (module docstring; None: the model's
    ``metadata["detection"]`` values, else :data:`VOTE_OVERLAP` / :data:`VOTE_TEMPERATURE`).
    ``found_threshold``: a box holds a hand when its score reaches this ("model": the model's
    ``metadata["detection"]["found_threshold"][method]``, calibrated on validation; None, or a model without
    one: when the best hand response beats the background response by ``threshold``).
    ``blas_threads``: brute force's GEMM on at most this many BLAS threads (None: BLAS's own number; "auto":
    one in the cascade, whose few windows make a small product, else BLAS's own). After a threaded GEMM,
    BLAS's workers spin and take cores from the next frame's features (measured on the network model's
    32-window frames: 72 ms per frame with two threads, 37 with one); ``bench scan`` gives brute force's
    scanner and reader whichever is faster on a validation video.
    ``bench scan`` and the screenshot script set them from their validation choice.
    Not thread-safe (buffers are reused): one scanner per thread.
    """

    def __init__(self, recogniser, method: str = "classmap", sides=None, top: int = 5,
                 max_boxes: int = 3, overlap: float = 0.3, threshold: float = 0.0, background_weight: float | None = None,
                 detector_weight: float | None = None, vote_overlap: float | None = None,
                 vote_temperature: float | None = None, found_threshold: float | None | str = "model",
                 blas_threads: int | None | str = "auto"):
        if method not in METHODS:
            raise ConfigError(f"scan method must be one of {', '.join(METHODS)}, got {method!r}")
        rec = recogniser
        if rec is None or getattr(rec, "classifier", None) is None:
            raise NotFittedError("find the hand needs a trained recogniser")
        if method == "classmap" and rec.classmap is None:
            raise ConfigError("this recogniser has no ClassMap: train with ClassMap on, or scan with brute force")
        W, b = linear_weights(rec.classifier)
        if W is None or getattr(rec.classifier, "pairs_", None) is not None:
            raise ConfigError("find the hand needs a linear one-vs-all classifier bank (e.g. ova-ridge)")
        self.rec, self.method = rec, method
        self.W, self.b = np.ascontiguousarray(W, np.float32), np.ascontiguousarray(b, np.float32)
        detection = model_detection(rec)  # checked: ModelFormatError naming a bad saved setting
        if sides is None:
            sides = detection.get("sides", DEFAULT_SIDES)
        # a window network embeds every window of a pyramid level in one pass (NetworkPyramid); the cascade:
        # other features that are not HOG (a crop network) find the hand with the model's HOG hand detector
        # and classify only the detector's best windows
        self.windowed = is_window_network(rec.features)
        self.cascade = not self.windowed and not is_hog(rec.features)
        self.candidates = int(detection.get("candidates", CANDIDATES))
        if self.cascade and (detection.get("detector") is None or detection.get("finder") is None):
            raise ConfigError("this model's features are not HOG: finding the hand needs its HOG hand detector "
                              "(metadata detection.detector and detection.finder); rebuild it with classmap hand-model")
        self.pyramid = (NetworkPyramid(rec.features, sides) if self.windowed else
                        WindowPyramid(DenseHOG(finder_hog(detection["finder"], rec.image_size) if self.cascade
                                               else rec.features), sides))
        names = list(rec.class_names)
        self.background = names.index(BACKGROUND_CLASS) if BACKGROUND_CLASS in names else None
        self.top = max(1, int(top))
        self.max_boxes = max(1, int(max_boxes))
        self.overlap = float(overlap)
        self.threshold = float(threshold)
        if background_weight is None:
            background_weight = detection.get("background_weight", SCAN_DEFAULTS["background_weight"])
        self.background_weight = float(background_weight)
        vote_overlap = detection.get("vote_overlap", VOTE_OVERLAP) if vote_overlap is None else vote_overlap
        vote_temperature = (detection.get("vote_temperature", VOTE_TEMPERATURE) if vote_temperature is None
                            else vote_temperature)
        try:
            self.vote_overlap, self.vote_temperature = float(vote_overlap), float(vote_temperature)
        except (TypeError, ValueError):
            raise ConfigError(f"box voting needs numbers, got overlap {vote_overlap!r}, temperature "
                              f"{vote_temperature!r} (model metadata detection.vote_*?)") from None
        if not 0 < self.vote_overlap <= 1 or not self.vote_temperature >= 0:
            raise ConfigError(f"box voting needs 0 < vote_overlap <= 1 and vote_temperature >= 0, got "
                              f"{self.vote_overlap}, {self.vote_temperature}")
        if found_threshold == "model":
            found_threshold = (detection.get("found_threshold") or {}).get(method)
        self.found_threshold = None if found_threshold is None else float(found_threshold)
        self.detector = None
        if detection.get("detector") is not None:
            self.detector = HandDetector.from_json(detection["detector"], self.pyramid.dense.n_features)
        if detector_weight is None:
            detector_weight = detection.get("detector_weight", SCAN_DEFAULTS["detector_weight"])
        self.detector_weight = float(detector_weight) if self.detector is not None else 0.0
        self._det_W = None if self.detector is None else self.detector.w[None, :].copy()
        self._det_b = None if self.detector is None else np.array([self.detector.b], np.float32)
        # brute force: the detector as one more row of the GEMM (column C of the scores)
        joint = self.detector is not None and not self.cascade
        self._W_all = np.ascontiguousarray(np.vstack([self.W, self._det_W])) if joint else self.W
        self._b_all = np.concatenate([self.b, self._det_b]) if joint else self.b
        self._S = None                                          # brute force's (n, C [+1]) score buffer
        if blas_threads == "auto":
            blas_threads = 1 if self.cascade else None
        self.blas_threads = None if blas_threads is None else int(blas_threads)
        self._bg_row = np.array([-1 if self.background is None else self.background], np.int64)
        self._hand_mask = np.ones(len(names), bool)
        if self.background is not None:
            self._hand_mask[self.background] = False

    def _grey(self, frame: np.ndarray) -> np.ndarray:
        frame = np.asarray(frame)
        if frame.ndim == 3 and frame.shape[2] == 3:
            return cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY)
        if frame.ndim == 3 and frame.shape[2] == 1:
            return frame[..., 0]
        return frame

    def window_scores(self, frame: np.ndarray, parts: bool = False):
        """``(score (n,), boxes (n, 4))`` of every window by this scanner's method, before rejection and
        suppression (for mining hard negatives and for analysis). ``parts``: ``(hand (n,), background
        (n,) or None, boxes)`` instead — the best hand response and the background response;
        ``parts="all"``: ``(hand, background or None, detector (n,) or None, boxes)``."""
        X, boxes, det = self._windows(self._grey(frame))
        if parts:
            w, g = self.background_weight, self.detector_weight
            self.background_weight = self.detector_weight = 0.0
            try:
                hand, *_ = self._classify(X, det)
            finally:
                self.background_weight, self.detector_weight = w, g
            bg = None if self.background is None else self._background_response(X)
            if parts == "all":
                if det is None and self.detector is not None:
                    det = self._detector_response(X)
                return hand, bg, det, boxes
            return hand, bg, boxes
        score, *_ = self._classify(X, det)
        return score, boxes

    def _windows(self, grey: np.ndarray):
        """``(X, boxes, detector responses or None)`` of the windows this scanner classifies: every window
        (its HOG rows), or in the cascade the :attr:`candidates` windows the hand detector scores highest
        (their crops through the recogniser's own features). ``self.window_index``: their rows in the pyramid."""
        Xh = self.pyramid.features(grey)
        boxes = self.pyramid.boxes(*grey.shape)
        if not self.cascade:
            self.window_index = None
            return Xh, boxes, None
        det = self._detector_response(Xh)
        k = min(self.candidates, len(det))
        top = np.argpartition(-det, k - 1)[:k]
        top = top[np.lexsort((top, -det[top]))]                # best first, ties by the lower row
        self.window_index = top
        size = tuple(int(v) for v in self.rec.image_size)
        crops = np.stack([window_crop(grey, boxes[i], size) for i in top])
        X = np.ascontiguousarray(self.rec.transform(crops), np.float32)
        return X, boxes[top], det[top]

    def _background_response(self, X: np.ndarray) -> np.ndarray:
        """``(n,) float32``: the background classifier on every window row of ``X``, by ClassMap's own
        numba dot kernel (the batch embedding's): a BLAS GEMV here would wake BLAS's worker threads,
        which keep spinning after the call and take a core from the dense HOG and the filter."""
        F = np.empty((len(X), 1), np.float32)
        embed_batch(np.ascontiguousarray(X, np.float32), self.W, self.b, self._bg_row, F)
        return F[:, 0]

    def _detector_response(self, X: np.ndarray) -> np.ndarray:
        """``(n,) float32``: the hand detector on every window row, by the same numba dot kernel."""
        F = np.empty((len(X), 1), np.float32)
        embed_batch(np.ascontiguousarray(X, np.float32), self._det_W, self._det_b, np.zeros(1, np.int64), F)
        return F[:, 0]

    def _classify(self, X: np.ndarray, det_given: np.ndarray | None = None):
        """``(score, best label, candidates or None, mean evaluations)`` of every window row of ``X``
        (``det_given``: the cascade's detector responses of those rows, computed on their HOG)."""
        n = len(X)
        bg = self.background
        if self.method == "brute_force":
            if self._S is None or self._S.shape != (n, len(self._W_all)):
                self._S = np.empty((n, len(self._W_all)), np.float32)
            S = self._S
            t0 = time.perf_counter()
            with blas_limit(self.blas_threads):               # (n, C [+1]): every classifier (+ detector) on every window
                np.dot(X, self._W_all.T, out=S)
            t1 = time.perf_counter()
            S += self._b_all
            det = det_given
            if self.detector is not None and det_given is None:
                det = S[:, -1].copy()
                S[:, -1] = -np.inf                             # never a class
            if bg is not None:
                bg_resp = S[:, bg].copy()
                S[:, bg] = -np.inf
            best = S.argmax(axis=1)
            hand = S[np.arange(n), best]
            evaluations = float(S.shape[1])                    # the classes (+ the detector)
            cands = None
            self._stages = {"gemm": t1 - t0, "best class": time.perf_counter() - t1}
        else:
            t0 = time.perf_counter()
            # the frame's windows as one batch: each candidate's weight row read once for all of them
            pred = self.rec.classmap.predict_result(X, bank=self.rec.classifier, batch_size=max(1, n))
            t1 = time.perf_counter()
            cls, sc = pred.top_classes, pred.top_scores          # (n, p) best first
            evaluations = float(np.mean(pred.evaluations))
            # candidates a v3 refine stopped before are NaN (not evaluated): never the best
            sc = np.where(np.isnan(sc) | (cls == bg) if bg is not None else np.isnan(sc), -np.inf, sc)
            if bg is not None:
                bg_resp = self._background_response(X)         # one more evaluation per window
                evaluations += 1.0
            t2 = time.perf_counter()
            det = det_given
            if self.detector is not None:
                if det is None:
                    det = self._detector_response(X)           # and one more for the detector
                evaluations += 1.0
            self._stages = {**pred.timings, "background": t2 - t1}
            if det is not None:
                self._stages["detector"] = time.perf_counter() - t2
            j = sc.argmax(axis=1)
            best = cls[np.arange(n), j]
            hand = sc[np.arange(n), j]
            cands = (cls, sc)
        score = hand - self.background_weight * bg_resp if bg is not None else hand
        if det is not None and self.detector_weight:
            score = score + self.detector_weight * det
        self._is_hand = hand > bg_resp + self.threshold if bg is not None else np.ones(n, bool)
        return score, best, cands, evaluations

    def scan(self, frame: np.ndarray) -> ScanResult:
        """Find the hand in one frame ``(h, w, 3)`` RGB or ``(h, w)`` grey uint8."""
        t0 = time.perf_counter()
        X, boxes, det = self._windows(self._grey(frame))
        n = len(X)
        t1 = time.perf_counter()
        score, best, cands, evaluations = self._classify(X, det)
        t2 = time.perf_counter()
        keep = np.flatnonzero(np.isfinite(score))
        labels = np.zeros(0, np.int64)
        top_c, top_s = np.zeros(0, np.int64), np.zeros(0, np.float32)
        kept = np.zeros(0, np.int64)
        if len(keep):
            order = keep[np.argsort(-score[keep], kind="stable")][:200]
            s_ord = score[order].astype(float)
            idx = cv2.dnn.NMSBoxes(boxes[order].tolist(), (s_ord - s_ord.min() + 1.0).tolist(), 0.0,  # needs >= 0
                                   self.overlap, top_k=self.max_boxes)
            kept = order[np.asarray(idx, np.int64).reshape(-1)[:self.max_boxes]]
            labels = best[kept].astype(np.int64)
            w0 = int(kept[0])
            if cands is None:                                  # brute force: the best window's full ranking,
                row = self._S[w0]                              # already in the GEMM's scores (background: -inf)
                k = min(self.top, int(self._hand_mask.sum()))
                part = np.argpartition(-row, k - 1)[:k]
                top_c = part[np.lexsort((part, -row[part]))]   # best first, ties by the lower class
                top_s = row[top_c]
            else:
                c, s = cands[0][w0], cands[1][w0]
                ok = np.isfinite(s)
                top_c, top_s = c[ok][:self.top], s[ok][:self.top]
        out = boxes[kept].copy()
        if self.vote_temperature > 0:
            for i, k in enumerate(kept):
                out[i] = vote_box(boxes, score, int(k), self.vote_overlap, self.vote_temperature)
        t3 = time.perf_counter()
        windows = None if not len(kept) else self._box_windows(boxes, score, int(kept[0]), cands)
        t4 = time.perf_counter()
        found = self._is_hand[kept] if self.found_threshold is None else score[kept] >= self.found_threshold
        stages = {f"features: {k}": v for k, v in self.pyramid.stage_seconds.items()} if self.windowed else {}
        return ScanResult(out, score[kept].astype(np.float32), labels, found, np.asarray(top_c, np.int64),
                          np.asarray(top_s, np.float32), n, evaluations,
                          {"features": t1 - t0, "classify": t2 - t1, "select": t4 - t2, "total": t4 - t0,
                           **stages, **{f"classify: {k}": v for k, v in self._stages.items()},
                           "select: box windows": t4 - t3}, windows)

    def _box_windows(self, boxes: np.ndarray, score: np.ndarray, k: int, cands) -> BoxWindows:
        """The windows that voted for window ``k``'s box (:func:`.box_windows.voters`, this scanner's voting) with
        copies of their responses: brute force's GEMM rows over the classes (the background -inf, the detector's
        column left out), or ClassMap's refined candidates (not evaluated, or the background: -inf)."""
        rows, weights = voters(boxes, score, k, self.vote_overlap, self.vote_temperature)
        if cands is None:
            every = np.arange(len(self.W))
            parts = [(every, self._S[r, :len(self.W)].copy()) for r in rows]
        else:
            parts = [(cands[0][r].copy(), cands[1][r].copy()) for r in rows]
        return BoxWindows(parts, weights, rows)


__all__ = ["METHODS", "VOTE_OVERLAP", "VOTE_TEMPERATURE", "ScanResult", "Scanner"]
