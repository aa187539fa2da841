"""Training and evaluation of a :class:`~classmap_gui.core.recogniser.Recogniser` — what the CLI and GUI both call.

``train(imageset, TrainConfig(...))`` checks the set (a clear DataError before any work), splits it
stratified (train / test, and a held-out embedding part when a ClassMap is requested), fits the
feature map, the bank and the ClassMap, then evaluates on the test part. A bank penalty set to
``"auto"`` (the default for ridge) is chosen on a stratified validation part carved from the
training part, by validation accuracy; the bank is then refitted on the whole training part.
``evaluate(recogniser, imageset)`` scores a recogniser on labelled images.
"""
from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .data import ImageSet
from .errors import ConfigError, DataError
from .encode import encode
from .progress import ProgressFn, StopFn, check_stop, report, sub_progress
from .evaluation import DENSE_CONFUSION_MAX, EvalReport, cost_line, evaluate, measure_latency_speedup  # noqa: F401
from .recogniser import Prediction, Recogniser
from .train_config import TrainConfig

@dataclass
class TrainResult:
    """What :func:`train` returns.

    ``recogniser``: the trained model; ``report``: its EvalReport on the test part (on the training part
    when ``test_fraction`` is 0, then ``report_on`` says so); ``timings``: seconds per training stage;
    ``sizes``: images in each part. ``split``: ``{"train", "embedding", "test", "validation"}`` ->
    ``(k,) int64`` sorted indices into the trained ImageSet (empty when a part is not used;
    ``validation`` is the part of ``train`` an ``"auto"`` penalty was chosen on), so callers take
    ``imageset.subset(result.split["test"])`` instead of re-deriving the split.
    ``test_predictions``: the :class:`Prediction` on the part the report is on, in its order.
    ``selection``: every hyper-parameter chosen on validation (see :func:`choose_bank_params`).
    ``split_info``: how the set was split (:func:`split_with_info`): by image or by capture group, the
    number of groups in each part, and the classes with too few groups to be tested honestly.
    """

    recogniser: Recogniser
    report: EvalReport
    timings: dict = field(default_factory=dict)
    sizes: dict = field(default_factory=dict)
    report_on: str = "test"
    split: dict = field(default_factory=dict)
    test_predictions: Prediction | None = None
    selection: dict = field(default_factory=dict)
    split_info: dict = field(default_factory=dict)


#: candidate values of bank parameters set to "auto"; ridge alphas are relative to n * mean feature variance
AUTO_CANDIDATES = {"alpha": (1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0), "C": (1e-3, 1e-2, 1e-1, 1.0, 10.0)}
#: share of every class of the training part held out to choose "auto" parameters
VALIDATION_FRACTION = 0.2


def _seeded(obj: Any, user_params: dict, seed: int) -> Any:
    """``obj`` with ``random_state=seed`` unless the user set ``random_state`` in ``user_params``."""
    params = obj.get_params(deep=False)
    if "random_state" in params and "random_state" not in user_params:
        obj.set_params(random_state=seed)
    return obj


def auto_params(bank_name: str, bank_params: dict) -> list[str]:
    """Bank penalties training chooses on validation: ``alpha`` / ``C`` set to ``"auto"``, and a ridge
    trainer's ``alpha`` when it is not given. Other parameters keep their value, ``"auto"`` included
    (e.g. the compressive bank's own ``sigma="auto"`` heuristic)."""
    from .registry import make_bank

    auto = [k for k, v in bank_params.items() if v == "auto" and k in AUTO_CANDIDATES]
    fixed = {k: v for k, v in bank_params.items() if k not in auto}
    bank = make_bank(bank_name, **fixed)
    params = bank.get_params(deep=False)
    missing = [k for k in auto if k not in params]
    if missing:
        raise ConfigError(f"bank {bank_name!r} has no parameter {', '.join(missing)} to choose")
    if getattr(type(bank), "penalty", None) == "alpha" and "alpha" not in bank_params:
        auto.append("alpha")
    return auto


def validation_split(y: np.ndarray, groups: np.ndarray | None, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(fit, validation)`` indices into the training part's labels ``y (n,)``: :func:`.splits.holdout` with
    :data:`VALIDATION_FRACTION` (stratified, capture groups kept whole: no penalty chosen on near-duplicates)."""
    from .splits import holdout

    return holdout(y, VALIDATION_FRACTION, seed, groups)


def choose_bank_params(bank_name: str, bank_params: dict, auto: list[str], X: np.ndarray, y: np.ndarray,
                       seed: int, *, groups: np.ndarray | None = None, progress: ProgressFn = None,
                       should_stop: StopFn = None) -> tuple[dict, dict]:
    """Choose the ``auto`` parameters of the bank on a stratified validation part of ``(X, y)`` (capture
    groups ``groups (n,)`` kept whole).

    Every combination of :data:`AUTO_CANDIDATES` is fitted on the rest and scored by validation
    accuracy (ties: the stronger penalty). Returns ``(bank parameters with the chosen values,
    {parameter: selection record})``; the caller refits on all of ``(X, y)``.
    """
    from itertools import product

    from .registry import make_bank
    from .selection import best_penalty, is_stronger, record

    fixed = {k: v for k, v in bank_params.items() if k not in auto}
    fit_idx, val_idx = validation_split(y, groups, seed)
    scale = {"alpha": len(fit_idx) * float(np.mean(X[fit_idx[:5000]].var(axis=0, dtype=np.float64))) or 1.0,
             "C": 1.0}
    grids = [[float(f"{scale[k] * c:.4g}") for c in AUTO_CANDIDATES[k]] for k in auto]
    combos = list(product(*grids))
    scores = []
    for i, combo in enumerate(combos):
        check_stop(should_stop)
        bank = make_bank(bank_name, **fixed, **dict(zip(auto, combo))).fit(X[fit_idx], y[fit_idx],
                                                                          should_stop=should_stop)
        scores.append(float(np.mean(bank.predict(X[val_idx]) == y[val_idx])))
        report(progress, (i + 1) / len(combos), "choosing " + ", ".join(auto))
    records = {}
    if len(auto) == 1:  # one penalty: the policy's rule (ties: the stronger penalty)
        records[f"bank.{auto[0]}"] = best_penalty([c[0] for c in combos], scores, parameter=f"bank.{auto[0]}",
                                                  validation_images=int(len(val_idx)))
        chosen = {auto[0]: records[f"bank.{auto[0]}"]["chosen"]}
    else:  # alpha and C together: best accuracy, ties to the combination strongest in both
        best = max(range(len(combos)), key=lambda j: (scores[j], *(v if is_stronger(k) else -v
                                                                  for k, v in zip(auto, combos[j]))))
        chosen = dict(zip(auto, combos[best]))
        records = {f"bank.{k}": record(chosen[k], grids[j], [{"params": dict(zip(auto, c)), "accuracy": a}
                                                              for c, a in zip(combos, scores)],
                                       by="validation accuracy", validation_images=int(len(val_idx)))
                   for j, k in enumerate(auto)}
    return {**fixed, **chosen}, records


def split_parts(labels: np.ndarray, config: TrainConfig, groups: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The parts :func:`train` makes of a set with these ``labels (n,)`` and capture ``groups (n,)``:
    ``{"train", "test", "embedding", "validation"}`` -> sorted int64 indices (stratified by ``config.seed``,
    every group whole on one side; "validation" is carved from "train" later, when a penalty is chosen).
    A model reopened from disk finds its test part here (pass the set's ``groups``)."""
    return split_with_info(labels, config, groups)[0]


def split_with_info(labels: np.ndarray, config: TrainConfig,
                    groups: np.ndarray | None = None) -> tuple[dict[str, np.ndarray], dict]:
    """:func:`split_parts` and how it split: ``{"by": "image" | "capture group", "groups": total,
    "groups_per_part": {part: count}, "too_few": [class index, ...], "needed": groups a class needs}``."""
    from .splits import grouped_split, groups_per_part

    use_classmap = config.classmap is not None
    fractions = [f for f in ((config.test_fraction,) + ((config.classmap_fraction,) if use_classmap else ())) if f]
    idx, info = grouped_split(np.asarray(labels), groups, fractions, config.seed)
    none = np.zeros(0, np.int64)
    parts = {"train": idx[0], "test": idx[1] if config.test_fraction else none,
             "embedding": idx[-1] if use_classmap else none, "validation": none}
    info["groups_per_part"] = groups_per_part(groups, {k: v for k, v in parts.items() if k != "validation"})
    return parts, info


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
    auto = auto_params(config.bank, config.bank_params)
    min_per_class = 1 + len(fractions) + 1 + bool(auto)  # two to train on, one in every held-out part
    imageset.check_trainable(min_per_class=min_per_class)

    # build (and so validate) every component before spending time
    fixed_bank_params = {k: v for k, v in config.bank_params.items() if k not in auto}
    bank = _seeded(make_bank(config.bank, **fixed_bank_params), config.bank_params, config.seed)
    # the bank says which feature map it needs (the compressive CNN sketch replaces the requested one)
    feature_name, feature_params = bank.features_for(config.features, config.features_params)
    features = _seeded(make_features(feature_name, **feature_params), feature_params, config.seed)
    classmap = None
    if use_classmap:
        from .classify.classmap import ClassMap, smoother_bank

        cm_params = dict(config.classmap)
        try:
            classmap = ClassMap(**cm_params)
            ref_factor = float(classmap.reference_penalty or 1.0)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"ClassMap settings: {exc}") from None
        if ref_factor != 1.0:
            smoother_bank(bank, ref_factor)          # refused now, before any work, when the bank has no penalty
        _seeded(classmap, cm_params, config.seed)

    split, split_info = split_with_info(imageset.labels, config, imageset.groups)
    split_info = _split_note(split_info, imageset.class_names)
    train_set = imageset.subset(split["train"])
    test_set = imageset.subset(split["test"]) if config.test_fraction else None
    embed_set = imageset.subset(split["embedding"]) if use_classmap else None
    missing = np.flatnonzero(train_set.counts() == 0)
    if len(missing):
        raise DataError(f"image set {imageset.name!r}: no training images left for class(es) "
                        + ", ".join(repr(imageset.class_names[c]) for c in missing[:10])
                        + " after holding out test images; add images or lower the test fraction")
    sizes = {"train": len(train_set), "test": 0 if test_set is None else len(test_set),
             "embedding": 0 if embed_set is None else len(embed_set)}

    stages = {"features": (0.0, 0.35), "choose": (0.35, 0.55), "bank": (0.55, 0.75), "classmap": (0.75, 0.85),
              "evaluate": (0.85, 1.0)}
    t = time.perf_counter()
    check_stop(should_stop)
    features.fit(train_set.images, train_set.labels, progress=sub_progress(progress, 0.0, 0.15, "features: fit"),
                 should_stop=should_stop)
    # encode(): chunks of features.transform, sent to the cluster under parallel_backend("dask")
    X = encode(features, train_set.images, progress=sub_progress(progress, 0.15, 0.35, "features: encode"),
               should_stop=should_stop)
    timings["features"] = time.perf_counter() - t

    selection: dict = {}
    if auto:
        t = time.perf_counter()
        chosen, selection = choose_bank_params(config.bank, config.bank_params, auto, X, train_set.labels,
                                               config.seed, groups=train_set.groups,
                                               progress=sub_progress(progress, *stages["choose"]),
                                               should_stop=should_stop)
        bank.set_params(**{k: chosen[k] for k in auto})
        split["validation"] = split["train"][validation_split(train_set.labels, train_set.groups, config.seed)[1]]
        timings["choose"] = time.perf_counter() - t

    t = time.perf_counter()
    bank.fit(X, train_set.labels, progress=sub_progress(progress, *stages["bank"], "classifiers"),
             should_stop=should_stop)
    timings["bank"] = time.perf_counter() - t
    reference_bank = None
    if classmap is not None and ref_factor != 1.0:
        t = time.perf_counter()
        reference_bank = smoother_bank(bank, ref_factor)   # same settings, no fitted state
        reference_bank.fit(X, train_set.labels, should_stop=should_stop)
        timings["reference_bank"] = time.perf_counter() - t
    del X

    if classmap is not None:
        t = time.perf_counter()
        Xe = encode(features, embed_set.images, should_stop=should_stop)
        check_stop(should_stop)
        report(progress, stages["classmap"][0], "ClassMap")
        fit_kwargs = {}
        sig = inspect.signature(classmap.fit_embedding).parameters
        if "progress" in sig:
            fit_kwargs = {"progress": sub_progress(progress, *stages["classmap"], "ClassMap"),
                          "should_stop": should_stop}
        if reference_bank is not None:
            fit_kwargs["reference_bank"] = reference_bank
        classmap.fit_embedding(bank, Xe, embed_set.labels, **fit_kwargs)
        timings["classmap"] = time.perf_counter() - t

    recogniser = Recogniser(features, bank, classmap, imageset.class_names, imageset.image_size,
                            grey=not imageset.is_color)
    check_stop(should_stop)
    t = time.perf_counter()
    on = test_set if test_set is not None else train_set
    rep, preds = evaluate(recogniser, on, progress=sub_progress(progress, *stages["evaluate"], "evaluating"),
                          should_stop=should_stop, return_predictions=True)
    timings["evaluate"] = time.perf_counter() - t
    recogniser.metadata = {
        "data": imageset.name, "config": config.to_dict(),
        "features_params": _jsonable_params(features), "bank_params": _jsonable_params(bank),
        "selection": selection,
        "sizes": sizes, "split": split_info, "test_accuracy" if test_set is not None else "training_accuracy": rep.accuracy,
        "train_seconds": timings,
    }
    report(progress, 1.0, "done")
    return TrainResult(recogniser, rep, timings, sizes, "test" if test_set is not None else "train",
                       split={k: np.asarray(v, np.int64) for k, v in split.items()}, test_predictions=preds,
                       selection=selection, split_info=split_info)


def _split_note(info: dict, class_names: list[str]) -> dict:
    """The split description for results, metadata and run records: class names instead of indices."""
    return {**info, "too_few": [class_names[c] for c in info.get("too_few", [])]}


def _jsonable_params(est: Any) -> dict:
    out = {}
    for k, v in est.get_params(deep=False).items():
        if v is None or isinstance(v, (bool, int, float, str)):
            out[k] = v
        elif isinstance(v, np.generic):
            out[k] = v.item()
    return out


