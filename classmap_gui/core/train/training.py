"""Training and evaluation of a :class:`~classmap_gui.core.recogniser.Recogniser` — what the CLI and GUI both call.

``train(imageset, TrainConfig(...))`` checks the set (an :class:`~.encode.EncodedSet`: a set already encoded, whose
pixels the caller has let go) (a clear DataError before any work), splits it
stratified (train / test, and a held-out embedding part when a ClassMap is requested; or takes the
caller's ``parts``), fits the feature map, hands the parts to the one search
(:class:`.search.ClassMapSearch`: every setting given as ``"auto"`` or a list of candidates, the bank's
penalty, ClassMap's reference penalty, embedding examples, refine and p, is chosen there on a validation
part carved from the training part; the bank and ClassMap are then refitted on the whole training part)
and evaluates the recogniser on the test part. ``evaluate(recogniser, imageset)`` scores a recogniser on
labelled images.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..data import ImageSet
from ..data.imageset import BACKGROUND_CLASS
from ..errors import ConfigError, DataError
from .encode import EncodedSet, encode
from ..progress import ProgressFn, StopFn, check_stop, report, sub_progress
from .evaluation import DENSE_CONFUSION_MAX, EvalReport, cost_line, evaluate, measure_latency_speedup  # noqa: F401
from ..recogniser import Prediction, Recogniser
from .search import ClassMapSearch
from .search_space import PENALTY_GRID
from .config import TrainConfig


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


#: candidate values of bank parameters set to "auto" (the search's grid); ridge alphas are relative to n * mean
#: feature variance
AUTO_CANDIDATES = PENALTY_GRID
#: share of every class of the training part held out to choose "auto" parameters
VALIDATION_FRACTION = 0.2


def _seeded(obj: Any, user_params: dict, seed: int) -> Any:
    """``obj`` with ``random_state=seed`` unless the user set ``random_state`` in ``user_params``."""
    params = obj.get_params(deep=False)
    if "random_state" in params and "random_state" not in user_params:
        obj.set_params(random_state=seed)
    return obj


def auto_params(bank_name: str, bank_params: dict) -> list[str]:
    """Bank penalties training chooses on validation: ``alpha`` / ``C`` set to ``"auto"`` (or to a list of
    candidates), and a ridge trainer's ``alpha`` when it is not given (:meth:`.search.ClassMapSearch.penalty_search`).
    Other parameters keep their value, ``"auto"`` included (e.g. the compressive bank's ``sigma="auto"``)."""
    return ClassMapSearch(bank_name, bank_params).penalty_search()[1]


def validation_split(y: np.ndarray, groups: np.ndarray | None, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(fit, validation)`` indices into the training part's labels ``y (n,)``: :func:`.splits.holdout` with
    :data:`VALIDATION_FRACTION` (stratified, capture groups kept whole: no penalty chosen on near-duplicates)."""
    from ..selection.splits import holdout

    return holdout(y, VALIDATION_FRACTION, seed, groups)


def make_search(config: TrainConfig) -> ClassMapSearch:
    """The search :func:`train` runs for ``config``: its bank and ClassMap settings, ``"auto"`` or lists where a
    choice is made on validation; settings checked here, before any work (ConfigError)."""
    unknown = set(config.search) - {"tolerance", "n_se", "curve_seeds", "scoring"}
    if unknown:
        raise ConfigError(f"unknown search setting(s): {', '.join(sorted(unknown))} (tolerance, n_se, curve_seeds, "
                          "scoring)")
    search = ClassMapSearch(config.bank, config.bank_params, config.classmap, random_state=config.seed,
                            **config.search)
    search.check()
    return search


def feature_map(config: TrainConfig, search: ClassMapSearch | None = None):
    """The unfitted feature map :func:`train` fits for ``config`` (the bank says which it needs: the compressive
    CNN sketch replaces the requested one), seeded by ``config.seed``; what a caller encodes an
    :class:`~.encode.EncodedSet` with."""
    from ..registry import make_features

    search = search or make_search(config)
    feature_name, feature_params = search.unfitted_bank().features_for(config.features, config.features_params)
    return _seeded(make_features(feature_name, **feature_params), feature_params, config.seed)


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
    from ..selection.splits import grouped_split, groups_per_part

    use_classmap = config.classmap is not None
    fractions = [f for f in ((config.test_fraction,) + ((config.classmap_fraction,) if use_classmap else ())) if f]
    idx, info = grouped_split(np.asarray(labels), groups, fractions, config.seed)
    none = np.zeros(0, np.int64)
    parts = {"train": idx[0], "test": idx[1] if config.test_fraction else none,
             "embedding": idx[-1] if use_classmap else none, "validation": none}
    info["groups_per_part"] = groups_per_part(groups, {k: v for k, v in parts.items() if k != "validation"})
    return parts, info


def train(imageset: ImageSet | EncodedSet, config: TrainConfig | None = None, *, parts: dict | None = None,
          validation: np.ndarray | None = None, progress: ProgressFn = None, should_stop: StopFn = None) -> TrainResult:
    """Train a recogniser on ``imageset`` as ``config`` says and evaluate it on a held-out part.

    ``parts``: the caller's split instead of :func:`split_parts` (``{"train", "test", "embedding"}`` and
    optionally ``"validation"`` -> indices into ``imageset``; validation rows must lie in ``train``), e.g. a
    benchmark's fixed parts. ``validation``: indices of the rows to choose on (the rest is split as usual and
    they join the training part for the refit), e.g. the hand model's held-out crops. ``imageset`` may be an
    :class:`~.encode.EncodedSet` (its rows encoded by :func:`feature_map`'s map, fitted: none is fitted here).
    Only feature rows reach the search: the training and embedding parts are encoded from the set's rows (no copy of
    their images) and the test part's images are gathered for the evaluation, after it. Raises DataError (before any
    training) for a set that cannot be trained on, ConfigError for a bad setting or overlapping parts, Cancelled when
    ``should_stop()`` turns true.
    """
    config = config or TrainConfig()
    timings: dict[str, float] = {}
    use_classmap = config.classmap is not None
    fractions = [f for f in ((config.test_fraction,) + ((config.classmap_fraction,) if use_classmap else ())) if f]
    for f in fractions:
        if not 0 < f < 1:
            raise ConfigError(f"split fractions must lie between 0 and 1, got {f}")
    if sum(fractions) >= 0.9:
        raise ConfigError(f"test and embedding fractions leave too little to train on ({sum(fractions):.2f} held out)")
    search = make_search(config)                    # every setting checked now, before any work
    if search.scoring == "foreground":              # the class never named: the set's background class
        if BACKGROUND_CLASS not in imageset.class_names:
            raise ConfigError(f"search scoring 'foreground' needs a {BACKGROUND_CLASS!r} class in {imageset.name!r}")
        search.set_params(background=imageset.class_names.index(BACKGROUND_CLASS))
    search.set_params(class_names=list(imageset.class_names))
    choosing = search.searches()
    min_per_class = 1 + len(fractions) + 1 + choosing  # two to train on, one in every held-out part
    imageset.check_trainable(min_per_class=min_per_class)
    encoded = isinstance(imageset, EncodedSet)
    features = feature_map(config, search)
    if encoded:
        if type(imageset.features) is not type(features):
            raise ConfigError(f"encoded set {imageset.name!r}: its rows are {type(imageset.features).__name__} "
                              f"features, the training settings ask for {type(features).__name__}")
        features = imageset.features

    if parts is None and validation is not None:
        val_rows = np.unique(np.asarray(validation, np.int64))
        rest = np.setdiff1d(np.arange(len(imageset)), val_rows)
        groups = None if imageset.groups is None else np.asarray(imageset.groups)[rest]
        sub, split_info = split_with_info(np.asarray(imageset.labels)[rest], config, groups)
        split = {k: rest[v] for k, v in sub.items()}
        split["train"], split["validation"] = np.union1d(split["train"], val_rows), val_rows
    elif parts is None:
        split, split_info = split_with_info(imageset.labels, config, imageset.groups)
    else:
        split, split_info = _given_parts(parts, len(imageset), use_classmap)
    split_info = _split_note(split_info, imageset.class_names)
    # no part's images are copied out of the set before the search (a hand model's 84 000 crops: 0.77 GB): the
    # training and embedding parts are gathered chunk by chunk by encode(); only the feature map's fit sees a
    # transient copy; the test part is taken for the evaluation
    train_rows = split["train"]
    train_labels = np.asarray(imageset.labels)[train_rows]
    missing = np.flatnonzero(np.bincount(train_labels, minlength=len(imageset.class_names)) == 0)
    if len(missing):
        raise DataError(f"image set {imageset.name!r}: no training images left for class(es) "
                        + ", ".join(repr(imageset.class_names[c]) for c in missing[:10])
                        + " after holding out test images; add images or lower the test fraction")
    sizes = {"train": len(train_rows), "test": len(split["test"]), "embedding": len(split["embedding"]) if use_classmap else 0}

    t = time.perf_counter()
    check_stop(should_stop)
    Xe = ye = None
    if encoded:
        X = imageset.X[train_rows]
        if use_classmap:
            Xe, ye = imageset.X[split["embedding"]], imageset.labels[split["embedding"]]
    else:
        features.fit(imageset.images[train_rows], train_labels,
                     progress=sub_progress(progress, 0.0, 0.15, "features: fit"), should_stop=should_stop)
        # encode(): chunks of features.transform, sent to the cluster under parallel_backend("dask")
        X = encode(features, imageset.images, rows=train_rows,
                   progress=sub_progress(progress, 0.15, 0.3, "features: encode"), should_stop=should_stop)
        if use_classmap:
            Xe = encode(features, imageset.images, rows=split["embedding"],
                        progress=sub_progress(progress, 0.3, 0.35, "features: encode"), should_stop=should_stop)
            ye = imageset.labels[split["embedding"]]
    timings["features"] = time.perf_counter() - t

    # the one search: choices on validation (carved from train), then the refit on all of train
    t = time.perf_counter()
    if choosing and not len(split["validation"]):
        train_groups = None if imageset.groups is None else np.asarray(imageset.groups)[train_rows]
        split["validation"] = split["train"][validation_split(train_labels, train_groups, config.seed)[1]]
    val = np.isin(split["train"], split["validation"])
    if not choosing:
        val[:] = False
    ids = {"fit": split["train"][~val], "validation": split["train"][val], "embedding": split["embedding"]}
    X_fit, X_val = X[~val], X[val]
    del X                                           # the parts are the search's: one copy of the training rows
    search.fit(X_fit, train_labels[~val], X_val, train_labels[val], Xe, ye, row_ids=ids,
               unseen={"test": split["test"]}, progress=sub_progress(progress, 0.35, 0.85, "choosing on validation"),
               should_stop=should_stop)
    del X_fit, X_val, Xe
    timings["search"] = time.perf_counter() - t
    bank, classmap = search.bank_, search.classmap_

    recogniser = Recogniser(features, bank, classmap, imageset.class_names, imageset.image_size,
                            grey=not imageset.is_color)
    check_stop(should_stop)
    t = time.perf_counter()
    test_set = imageset.subset(split["test"]) if len(split["test"]) else None
    on = test_set if test_set is not None else imageset.subset(train_rows)
    rep, preds = evaluate(recogniser, on, progress=sub_progress(progress, 0.85, 1.0, "evaluating"),
                          should_stop=should_stop, return_predictions=True)
    timings["evaluate"] = time.perf_counter() - t
    selection = search.selection_
    recogniser.metadata = {
        "data": imageset.name, "config": config.to_dict(),
        "features_params": _jsonable_params(features), "bank_params": _jsonable_params(bank),
        "classmap_params": None if classmap is None else _jsonable_params(classmap),
        "selection": selection,
        "sizes": sizes, "split": split_info, "test_accuracy" if test_set is not None else "training_accuracy": rep.accuracy,
        "train_seconds": timings,
    }
    report(progress, 1.0, "done")
    return TrainResult(recogniser, rep, timings, sizes, "test" if test_set is not None else "train",
                       split={k: np.asarray(v, np.int64) for k, v in split.items()}, test_predictions=preds,
                       selection=selection, split_info=split_info)


def _given_parts(parts: dict, n: int, use_classmap: bool) -> tuple[dict, dict]:
    """The caller's parts as :func:`split_with_info` returns them (ConfigError for indices out of range, a
    missing part or a validation row outside ``train``)."""
    need = ("train", "test") + (("embedding",) if use_classmap else ())
    if any(k not in parts for k in need) or set(parts) - {"train", "test", "embedding", "validation"}:
        raise ConfigError(f"training parts must be {', '.join(need)} (and optionally validation), got "
                          f"{', '.join(map(str, parts))}")
    out = {k: np.sort(np.asarray(parts.get(k, ()), np.int64)) for k in ("train", "test", "embedding", "validation")}
    if any(len(v) and (v.min() < 0 or v.max() >= n) for v in out.values()):
        raise ConfigError(f"training parts: indices must lie in [0, {n})")
    if not np.isin(out["validation"], out["train"]).all():
        raise ConfigError("training parts: the validation rows must be rows of the train part")
    return out, {"by": "given parts", "groups": None, "groups_per_part": {}, "too_few": []}


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


