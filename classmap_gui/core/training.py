"""Training and evaluation of a :class:`~classmap_gui.core.recogniser.Recogniser` — what the CLI and GUI both call.

``train(imageset, TrainConfig(...))`` checks the set (a clear DataError before any work), splits it
stratified (train / test, and a held-out embedding part when a ClassMap is requested), fits the
feature map, the bank and the ClassMap, then evaluates on the test part.
``evaluate(recogniser, imageset)`` scores a recogniser on labelled images.
"""
from __future__ import annotations

import inspect
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .data import ImageSet
from .errors import ConfigError, DataError
from .encode import encode
from .progress import ProgressFn, StopFn, check_stop, report, sub_progress
from .recogniser import SCORE_CHUNK, Recogniser

#: above this many classes the confusion matrix is left out of reports (it would be C² numbers)
DENSE_CONFUSION_MAX = 500


@dataclass
class TrainConfig:
    """How to train a recogniser.

    features / features_params: a feature map name for ``make_features`` and its parameters.
    bank / bank_params: a classifier bank name for ``make_bank`` and its parameters.
    classmap: None for brute force, or ClassMap parameters (``{"d": 45, "p": 40, ...}``).
    test_fraction: part of each class held out for the test report (0: report on the training set).
    classmap_fraction: part of each class held out to fit the ClassMap embedding (used when classmap).
    seed: random seed for splits and every fitted component that takes ``random_state``.
    """

    features: str = "kmeans"
    features_params: dict = field(default_factory=dict)
    bank: str = "ova-liblinear"
    bank_params: dict = field(default_factory=dict)
    classmap: dict | None = None
    test_fraction: float = 0.2
    classmap_fraction: float = 0.2
    seed: int = 0

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        unknown = set(d) - set(cls.__dataclass_fields__)
        if unknown:
            raise ConfigError(f"unknown training setting(s): {', '.join(sorted(unknown))}")
        return cls(**d)


@dataclass
class EvalReport:
    """How well a recogniser does on a labelled set.

    accuracy: fraction correct; top_accuracy: fraction whose class is among the ``top`` candidates.
    per_class_accuracy: ``(C,) float64`` (NaN for classes with no images here).
    confusion: ``(C, C) int64`` counts [true, predicted], or None above ``DENSE_CONFUSION_MAX`` classes;
    top_confusions: the most frequent ``(true, predicted, count)`` mistakes.
    evaluations_per_query: mean binary classifier evaluations per image; brute_force_evaluations: what
    scoring every classifier costs; speedup: their ratio.
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
    speedup: float
    misclassified: np.ndarray
    timings: dict
    seconds_per_image: float
    class_names: list = field(default_factory=list)

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
            "brute_force_evaluations": self.brute_force_evaluations, "speedup": self.speedup,
            "misclassified": self.misclassified.tolist(), "timings": self.timings,
            "seconds_per_image": self.seconds_per_image,
        }

    def summary(self) -> str:
        """A few lines for people."""
        lines = [f"accuracy {100 * self.accuracy:.2f}% on {self.n} images "
                 f"(top-{self.top}: {100 * self.top_accuracy:.2f}%)",
                 f"classifier evaluations per image {self.evaluations_per_query:.1f} of "
                 f"{self.brute_force_evaluations} (speed-up {self.speedup:.2f}x)",
                 f"time per image {1000 * self.seconds_per_image:.3f} ms ("
                 + ", ".join(f"{k} {v:.3f}s" for k, v in self.timings.items()) + ")"]
        if self.top_confusions:
            lines.append("most confused: " + ", ".join(f"{self.class_names[t]}->{self.class_names[p]} ({c})"
                                                       for t, p, c in self.top_confusions[:5]))
        return "\n".join(lines)


@dataclass
class TrainResult:
    """``recogniser``: the trained model; ``report``: its EvalReport on the test part (on the training part
    when ``test_fraction`` is 0, then ``report_on`` says so); ``timings``: seconds per training stage;
    ``sizes``: images in each part."""

    recogniser: Recogniser
    report: EvalReport
    timings: dict = field(default_factory=dict)
    sizes: dict = field(default_factory=dict)
    report_on: str = "test"


def _with_seed(obj: Any, seed: int) -> Any:
    if "random_state" in obj.get_params(deep=False) and obj.get_params(deep=False)["random_state"] is None:
        obj.set_params(random_state=seed)
    return obj


def train(imageset: ImageSet, config: TrainConfig | None = None, *, progress: ProgressFn = None,
          should_stop: StopFn = None) -> TrainResult:
    """Train a recogniser on ``imageset`` as ``config`` says and evaluate it on a held-out part.

    Raises DataError (before any training) for a set that cannot be trained on, ConfigError for a bad
    setting, Cancelled when ``should_stop()`` turns true.
    """
    from .registry import make_bank, make_features

    config = config or TrainConfig()
    timings: dict[str, float] = {}
    use_classmap = config.classmap is not None
    fractions = [f for f in ((config.test_fraction,) + ((config.classmap_fraction,) if use_classmap else ())) if f]
    for f in fractions:
        if not 0 < f < 1:
            raise ConfigError(f"split fractions must lie between 0 and 1, got {f}")
    if sum(fractions) >= 0.9:
        raise ConfigError(f"test and embedding fractions leave too little to train on ({sum(fractions):.2f} held out)")
    min_per_class = 1 + len(fractions) + 1  # at least two to train on, one in every held-out part
    imageset.check_trainable(min_per_class=min_per_class)

    # build (and so validate) every component before spending time
    bank = _with_seed(make_bank(config.bank, **config.bank_params), config.seed)
    # the bank says which feature map it needs (the compressive CNN sketch replaces the requested one)
    feature_name, feature_params = bank.features_for(config.features, config.features_params)
    features = _with_seed(make_features(feature_name, **feature_params), config.seed)
    classmap = None
    if use_classmap:
        from .classify.classmap import ClassMap

        try:
            classmap = ClassMap(**config.classmap)
        except TypeError as exc:
            raise ConfigError(f"ClassMap settings: {exc}") from None
        _with_seed(classmap, config.seed)

    parts = imageset.split(*fractions, seed=config.seed) if fractions else (imageset,)
    train_set = parts[0]
    test_set = parts[1] if config.test_fraction else None
    embed_set = parts[-1] if use_classmap else None
    missing = np.flatnonzero(train_set.counts() == 0)
    if len(missing):
        raise DataError(f"image set {imageset.name!r}: no training images left for class(es) "
                        + ", ".join(repr(imageset.class_names[c]) for c in missing[:10])
                        + " after holding out test images; add images or lower the test fraction")
    sizes = {"train": len(train_set), "test": 0 if test_set is None else len(test_set),
             "embedding": 0 if embed_set is None else len(embed_set)}

    stages = {"features": (0.0, 0.35), "bank": (0.35, 0.75), "classmap": (0.75, 0.85), "evaluate": (0.85, 1.0)}
    t = time.perf_counter()
    check_stop(should_stop)
    features.fit(train_set.images, train_set.labels, progress=sub_progress(progress, 0.0, 0.15, "features: fit"),
                 should_stop=should_stop)
    # encode(): chunks of features.transform, sent to the cluster under parallel_backend("dask")
    X = encode(features, train_set.images, progress=sub_progress(progress, 0.15, 0.35, "features: encode"),
               should_stop=should_stop)
    timings["features"] = time.perf_counter() - t

    t = time.perf_counter()
    bank.fit(X, train_set.labels, progress=sub_progress(progress, *stages["bank"], "classifiers"),
             should_stop=should_stop)
    timings["bank"] = time.perf_counter() - t
    del X

    if classmap is not None:
        t = time.perf_counter()
        Xe = encode(features, embed_set.images, should_stop=should_stop)
        check_stop(should_stop)
        report(progress, stages["classmap"][0], "ClassMap")
        fit_kwargs = {}
        sig = inspect.signature(classmap.fit).parameters
        if "progress" in sig:
            fit_kwargs = {"progress": sub_progress(progress, *stages["classmap"], "ClassMap"),
                          "should_stop": should_stop}
        classmap.fit(bank, Xe, embed_set.labels, **fit_kwargs)
        timings["classmap"] = time.perf_counter() - t

    recogniser = Recogniser(features, bank, classmap, imageset.class_names, imageset.image_size,
                            grey=not imageset.is_color)
    check_stop(should_stop)
    t = time.perf_counter()
    on = test_set if test_set is not None else train_set
    rep = evaluate(recogniser, on, progress=sub_progress(progress, *stages["evaluate"], "evaluating"),
                   should_stop=should_stop)
    timings["evaluate"] = time.perf_counter() - t
    recogniser.metadata = {
        "data": imageset.name, "config": config.to_dict(),
        "features_params": _jsonable_params(features),
        "sizes": sizes, "test_accuracy" if test_set is not None else "training_accuracy": rep.accuracy,
        "train_seconds": timings,
    }
    report(progress, 1.0, "done")
    return TrainResult(recogniser, rep, timings, sizes, "test" if test_set is not None else "train")


def _jsonable_params(est: Any) -> dict:
    out = {}
    for k, v in est.get_params(deep=False).items():
        if v is None or isinstance(v, (bool, int, float, str)):
            out[k] = v
        elif isinstance(v, np.generic):
            out[k] = v.item()
    return out


def evaluate(recogniser: Recogniser, imageset: ImageSet, *, top: int = 5, progress: ProgressFn = None,
             should_stop: StopFn = None) -> EvalReport:
    """Score ``recogniser`` on the labelled ``imageset`` (class names must be the model's, in order)."""
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
    hits_top = np.zeros(n, bool)
    evals = np.empty(n, np.int64)
    timings: dict[str, float] = {}
    for s in range(0, n, SCORE_CHUNK):
        check_stop(should_stop)
        e = min(n, s + SCORE_CHUNK)
        p = recogniser.predict(imageset.images[s:e], top=top, should_stop=should_stop)
        pred_labels[s:e] = p.labels
        hits_top[s:e] = np.any(p.top_classes == labels[s:e, None], axis=1)
        evals[s:e] = p.evaluations
        for k, v in p.timings.items():
            timings[k] = timings.get(k, 0.0) + v
        report(progress, e / n, "evaluating")
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
    return EvalReport(
        n=n, accuracy=float(correct.mean()), top=top, top_accuracy=float(hits_top.mean()),
        per_class_accuracy=per_class, confusion=confusion, top_confusions=top_conf,
        evaluations_per_query=per_query, brute_force_evaluations=brute,
        speedup=float(brute / per_query) if per_query > 0 else float("inf"),
        misclassified=wrong.astype(np.int64), timings=timings, seconds_per_image=total / n,
        class_names=list(names))
