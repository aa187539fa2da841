"""Evaluating a :class:`~classmap_gui.core.recogniser.Recogniser` on labelled images: :class:`EvalReport`.

``evaluate(recogniser, imageset)`` predicts every image, and reports accuracy, confusions, what a
prediction costs in classifier evaluations (``evaluations_ratio``, a count ratio) and, for a ClassMap
model, the measured wall-clock gain over brute force (``latency_speedup``). :func:`cost_line` says the
cost in one line for people.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..data import ImageSet
from ..errors import DataError
from ..progress import ProgressFn, StopFn, check_stop, report
from ..recogniser import SCORE_CHUNK, Prediction, Recogniser

#: above this many classes the confusion matrix is left out of reports (it would be C² numbers)
DENSE_CONFUSION_MAX = 500


@dataclass
class EvalReport:
    """How well a recogniser does on a labelled set.

    accuracy: fraction correct; top_accuracy: fraction whose class is among the ``top`` candidates.
    per_class_accuracy: ``(C,) float64`` (NaN for classes with no images here).
    confusion: ``(C, C) int64`` counts [true, predicted], or None above ``DENSE_CONFUSION_MAX`` classes;
    top_confusions: the most frequent ``(true, predicted, count)`` mistakes.
    evaluations_per_query: mean binary classifier evaluations per image; brute_force_evaluations: what
    scoring every classifier costs; evaluations_ratio: brute_force_evaluations / evaluations_per_query (a
    count ratio, not a time). latency_speedup: measured wall-clock of brute force over this recogniser's
    classification stage (features excluded), ``{"single": one image at a time, "batch": per image in
    batches}``, or None for a brute-force recogniser or when not measured.
    misclassified: ``(m,) int64`` indices (into the evaluated set) of wrong predictions.
    timings: seconds per stage, summed over the set; seconds_per_image.
    """

    n: int
    accuracy: float
    top: int
    top_accuracy: float
    per_class_accuracy: np.ndarray
    confusion: np.ndarray | None
    top_confusions: list
    evaluations_per_query: float
    brute_force_evaluations: int
    evaluations_ratio: float
    misclassified: np.ndarray
    timings: dict
    seconds_per_image: float
    class_names: list = field(default_factory=list)
    latency_speedup: dict | None = None

    def to_dict(self, *, include_confusion: bool = True) -> dict:
        """JSON-able summary (arrays as lists; NaN per-class accuracies as None)."""
        return {
            "n": self.n, "accuracy": self.accuracy, "top": self.top, "top_accuracy": self.top_accuracy,
            "per_class_accuracy": {name: (None if np.isnan(a) else float(a))
                                   for name, a in zip(self.class_names, self.per_class_accuracy)},
            "confusion": None if (self.confusion is None or not include_confusion) else self.confusion.tolist(),
            "top_confusions": [{"true": self.class_names[t], "predicted": self.class_names[p], "count": c}
                               for t, p, c in self.top_confusions],
            "evaluations_per_query": self.evaluations_per_query,
            "brute_force_evaluations": self.brute_force_evaluations, "evaluations_ratio": self.evaluations_ratio,
            "latency_speedup": self.latency_speedup,
            "misclassified": self.misclassified.tolist(), "timings": self.timings,
            "seconds_per_image": self.seconds_per_image,
        }

    def summary(self) -> str:
        """A few lines for people."""
        lines = [f"accuracy {100 * self.accuracy:.2f}% on {self.n} images "
                 f"(top-{self.top}: {100 * self.top_accuracy:.2f}%)",
                 f"classifier evaluations per image {self.evaluations_per_query:.1f} of "
                 f"{self.brute_force_evaluations} ({self.evaluations_ratio:.2f}x fewer evaluations)"
                 + ("" if not self.latency_speedup else
                    f"; measured {speed_text(self.latency_speedup['single'], 2)} per image one at a time, "
                    f"{speed_text(self.latency_speedup['batch'], 2)} in batches (classification only, "
                    "against brute force as one GEMM)"),
                 f"time per image {1000 * self.seconds_per_image:.3f} ms ("
                 + ", ".join(f"{k} {v:.3f}s" for k, v in self.timings.items()) + ")"]
        if self.top_confusions:
            lines.append("most confused: " + ", ".join(f"{self.class_names[t]}->{self.class_names[p]} ({c})"
                                                       for t, p, c in self.top_confusions[:5]))
        return "\n".join(lines)


def cost_line(report: EvalReport) -> str:
    """One line for people about what a prediction costs, e.g.
    ``"5.1× fewer evaluations · 1.8× faster per image"`` (the second part only when measured; a measured
    ratio below 1 reads ``"3.4× slower per image"``)."""
    text = f"{report.evaluations_ratio:.1f}× fewer evaluations"
    if report.latency_speedup:
        text += f" · {speed_text(report.latency_speedup['single'])} per image"
    return text


def speed_text(ratio: float, digits: int = 1) -> str:
    """A measured time ratio (brute force / ClassMap) for people: ``"1.8× faster"`` or ``"3.4× slower"``."""
    if ratio >= 1 or ratio <= 0 or not np.isfinite(ratio):
        return f"{ratio:.{digits}f}× faster"
    return f"{1 / ratio:.{digits}f}× slower"


def measure_latency_speedup(recogniser: Recogniser, X: np.ndarray, *, n_single: int = 200,
                            batch: int = 1000) -> dict | None:
    """Measured wall-clock of brute force over ``recogniser``'s classification stage on feature rows
    ``X (n, D) float32``: ``{"single": ..., "batch": ...}`` (one row at a time, and per row in batches).
    None without a ClassMap.

    ClassMap is timed through ``Recogniser.predict_features`` (what a user's prediction runs). Brute
    force is timed as the fastest honest baseline (:class:`~.classify.classmap.bank_view.BruteForce`: one GEMM
    over the stacked weights + biases and an argmax, float32, buffers kept), not through
    ``decision_function``, whose per-call input validation made ClassMap look 11-21x faster on 10
    classes. Each side gets the better of one BLAS thread and the default (:func:`~.timing.pinned`); the two
    alternate in 3 rounds (:func:`~.timing.interleaved`) and the median ratio is kept.
    """
    if recogniser.classmap is None or len(X) == 0:
        return None
    from ..classify.classmap.bank_view import BruteForce
    from ..timing import interleaved, pinned, ratio

    X = np.ascontiguousarray(X, dtype=np.float32)      # checked once here, as a batch's caller would
    brute = BruteForce(recogniser.classifier)
    classmap = lambda Z: recogniser.predict_features(Z, top=1)  # noqa: E731
    Q = X[:n_single]
    XB = X[:batch]
    out = {}
    for key, items, run in (("single", len(Q), lambda f: [f(x[None]) for x in Q]), ("batch", len(XB), lambda f: f(XB))):
        t = interleaved({"brute": pinned(lambda: run(brute)), "classmap": pinned(lambda: run(classmap))}, 3, items)
        out[key] = ratio(t, "brute", "classmap")["median"]
    return out


def evaluate(recogniser: Recogniser, imageset: ImageSet, *, top: int = 5, progress: ProgressFn = None,
             should_stop: StopFn = None, measure_latency: bool = True, return_predictions: bool = False):
    """Score ``recogniser`` on the labelled ``imageset`` (class names must be the model's, in order), or on an
    :class:`~.encode.EncodedSet` of it (its feature rows classified: ``Recogniser.predict_features``).

    Returns an :class:`EvalReport`, or ``(EvalReport, Prediction)`` with ``return_predictions`` (the
    prediction of every image, in order). ``measure_latency``: also time brute force against the
    ClassMap on up to 1000 of these images (``EvalReport.latency_speedup``).
    """
    names = recogniser.class_names
    if list(imageset.class_names) != list(names):
        mapping = {c: i for i, c in enumerate(names)}
        unknown = [c for c in imageset.class_names if c not in mapping]
        if unknown:
            raise DataError(f"the data has class(es) the model does not know: {', '.join(map(repr, unknown[:10]))}")
        labels = np.array([mapping[c] for c in imageset.class_names], np.int64)[imageset.labels]
    else:
        labels = imageset.labels
    n, C = len(imageset), len(names)
    if n == 0:
        raise DataError(f"image set {imageset.name!r} is empty: nothing to evaluate")
    top = max(1, min(top, C))
    pred_labels = np.empty(n, np.int64)
    tops: list = []
    evals = np.empty(n, np.int64)
    timings: dict[str, float] = {}
    sample = None
    rows = getattr(imageset, "X", None)             # an EncodedSet: its rows are the features
    for s in range(0, n, SCORE_CHUNK):
        check_stop(should_stop)
        e = min(n, s + SCORE_CHUNK)
        p = recogniser.predict(imageset.images[s:e], top=top, should_stop=should_stop) if rows is None else \
            recogniser.predict_features(rows[s:e], top=top, should_stop=should_stop)
        pred_labels[s:e] = p.labels
        tops.append((p.top_classes, p.top_scores))  # a ClassMap returns at most p candidates
        evals[s:e] = p.evaluations
        for k, v in p.timings.items():
            timings[k] = timings.get(k, 0.0) + v
        if sample is None and measure_latency and recogniser.classmap is not None:
            sample = recogniser.transform(imageset.images[s:min(e, s + 1000)]) if rows is None else rows[s:s + 1000]
        report(progress, e / n, "evaluating")
    top_classes = np.concatenate([t[0] for t in tops])
    top_scores = np.concatenate([t[1] for t in tops])
    top = top_classes.shape[1]
    hits_top = np.any(top_classes == labels[:, None], axis=1)
    correct = pred_labels == labels
    counts = np.bincount(labels, minlength=C)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_class = np.bincount(labels, weights=correct, minlength=C) / counts
    wrong = np.flatnonzero(~correct)
    pair_codes, pair_counts = np.unique(labels[wrong] * C + pred_labels[wrong], return_counts=True)
    order = np.argsort(-pair_counts, kind="stable")[:20]
    top_conf = [(int(pair_codes[i] // C), int(pair_codes[i] % C), int(pair_counts[i])) for i in order]
    confusion = None
    if C <= DENSE_CONFUSION_MAX:
        confusion = np.bincount(labels * C + pred_labels, minlength=C * C).reshape(C, C).astype(np.int64)
    brute = recogniser.brute_force_evaluations
    per_query = float(evals.mean())
    total = timings.get("total", sum(timings.values()))
    rep = EvalReport(
        n=n, accuracy=float(correct.mean()), top=top, top_accuracy=float(hits_top.mean()),
        per_class_accuracy=per_class, confusion=confusion, top_confusions=top_conf,
        evaluations_per_query=per_query, brute_force_evaluations=brute,
        evaluations_ratio=float(brute / per_query) if per_query > 0 else float("inf"),
        misclassified=wrong.astype(np.int64), timings=timings, seconds_per_image=total / n,
        class_names=list(names),
        latency_speedup=None if sample is None else measure_latency_speedup(recogniser, sample))
    if return_predictions:
        return rep, Prediction(pred_labels, top_classes, top_scores, evals, timings)
    return rep
