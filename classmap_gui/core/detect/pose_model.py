"""The hand-pose model a person can use: 2430 hand classes + background, a hand detector, and the scan and
reading settings chosen on validation videos — built by ``classmap hand-model`` and *File > Get the
hand-pose model*, and the model ``bench scan`` tests.

1. **Images**: the ``hand-pose`` classes (81 shapes x 30 orientations) in the :data:`..data.hand_style.VARIED`
   style (randomised light, skins, backgrounds, blur, sensor noise, JPEG and framing jitter as a scan's
   windows frame a hand; never a ``camera`` tile, skin or range), plus a :data:`BACKGROUND_CLASS` of generated
   clutter and near misses (:mod:`.background`) and, Dalal-Triggs' bootstrap, the false alarms of a first
   model in generated hand scenes. A stratified ``validation_fraction`` of every class is held out first.
2. **Training**: the product's train path (:func:`..training.train`, the Train panel's) on the images' features
   (encoded once, :func:`..train.encode.encode_set`; the images go before the search): the network (or HOG)
   features, a bank (``bank``: the window network's own class head, ``network-head``, or ``ova-ridge``) and
   CM-Boosted, every choice made by the one search
   (:class:`..search.ClassMapSearch`, as ``bench classmap`` and the Train panel make theirs) on the held-out
   part: the bank penalty, the reference penalty and the images that embed the classes, the refine and p —
   scored as the reader reads a hand (:mod:`..scoring`, ``"foreground"``), then refitted on all of it.
3. **Hand detector** (:mod:`.detector`) on the windows of generated scenes.
4. **Scan and reading settings** on validation videos (:mod:`.choice`): window sides, weights, box voting,
   the "hand found" threshold, and the reader's temperature, history and crops; stored in
   ``metadata["detection"]`` so a :class:`.scanner.Scanner` and :class:`.reading.HandReader` built from the
   saved model use them.

Everything is drawn from seeds; the folder is a model folder (JSON + npz, no pickles), written atomically.
"""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import numpy as np

from ..errors import ConfigError
from ..progress import ProgressFn, StopFn, report, sub_progress
from ..selection.splits import holdout
from ..settings.hand import options

#: the build's settings (name -> (default, help)), from the one table (:mod:`..settings.hand`); ``bench scan``
#: exposes them as its options
BUILD_OPTIONS = options("build")


#: the environment variable naming the hand model's folder (else :data:`MODEL_FOLDER` in the user data folder)
MODEL_ENV = "CLASSMAP_HAND_MODEL"
MODEL_FOLDER = "hand-pose-model"


def hand_model_folder(environ, user_data_dir) -> Path:
    """Where ``classmap hand-model`` saves the model and the app looks for it: ``environ[MODEL_ENV]`` when
    set, else ``user_data_dir / MODEL_FOLDER`` (the callers pass the environment and the folder: core reads
    neither)."""
    return Path(environ[MODEL_ENV]) if environ.get(MODEL_ENV) else Path(user_data_dir) / MODEL_FOLDER


def built_hand_model(environ, user_data_dir, remembered=None) -> Path | None:
    """The folder of a built hand-pose model (one holding ``model.json``): the one answer the app (*File > Get the
    hand-pose model*), ``classmap hand-model`` and every bench that needs a hand model give. Looked for where
    ``classmap hand-model`` saves it (:func:`hand_model_folder`), then in ``remembered`` (the app's folder last opened
    with *File > Open model…*, or None); None when neither holds one. The callers pass the environment and folders."""
    for folder in (hand_model_folder(environ, user_data_dir), remembered):
        if folder not in (None, "") and (Path(folder) / "model.json").is_file():
            return Path(folder)
    return None


def _count(v):
    return None if v in (None, "", "none", "None") else v


def _numbers(value, name: str) -> list[float]:
    try:
        return [float(v) for v in str(value).split(",") if v.strip()]
    except ValueError:
        raise ConfigError(f"hand model: {name} expects comma-separated numbers, got {value!r}") from None


def build_hand_model(opt: dict, progress: ProgressFn = None, should_stop: StopFn = None):
    """Steps 1-3 of the module docstring; returns ``(recogniser, info)``."""
    from ..data.hand_pose import generate_hand_pose
    from ..classify.banks.head import ALPHA_REL
    from ..data.hand_style import STYLES
    from ..train.encode import encode, encode_set
    from ..train.training import TrainConfig, feature_map, train
    from .background import background_images, hard_negatives, with_background
    from .detector import train_detector

    opt = {**{k: v[0] for k, v in BUILD_OPTIONS.items()}, **opt}
    seed = int(opt["seed"])
    if str(opt["style"]) not in ("varied", "clean"):
        raise ConfigError(f"hand model: style must be varied or clean (camera is held out), got {opt['style']!r}")
    style = dataclasses.replace(STYLES[str(opt["style"])], shift_jitter=float(opt["shift_jitter"]),
                                scale_jitter=float(opt["scale_jitter"]))
    sides = _numbers(opt["sides"], "sides")
    features = str(opt["features"])
    if features not in ("window", "network", "hog"):
        raise ConfigError(f"hand model: features must be window, network or hog, got {features!r}")
    feat_params = {"n_jobs": -1} if features == "hog" else {}
    window = features == "window"
    bank = {"auto": "network-head" if window else "ova-ridge"}.get(str(opt["bank"]), str(opt["bank"]))
    if bank not in ("network-head", "ova-ridge") or (bank == "network-head" and not window):
        raise ConfigError(f"hand model: bank must be auto, ova-ridge or (with window features) network-head, got "
                          f"{opt['bank']!r} with features {features}")
    fmap = {"hog": "hog", "network": "network", "window": "window-network"}[features]   # the registry's names
    size = None
    if window:  # the class images are windows with their context, as the window network reads a frame
        from ..features.network_input import CROP
        from .window_crops import context_style, near_misses

        style, size = context_style(style), (CROP, CROP)
    t0 = time.perf_counter()
    ims = generate_hand_pose(shapes=_count(opt["shapes"]), orientations=_count(opt["orientations"]),
                             images_per_class=int(opt["images_per_class"]), style=style, seed=seed, n_jobs=-1,
                             size=size, progress=sub_progress(progress, 0.0, 0.1, "hand images"),
                             should_stop=should_stop)
    n_bg = int(opt["background"])
    if window:  # half near misses: the class images' hands moved out of their window
        rng = np.random.default_rng([seed, 23])
        near = near_misses(ims.images[rng.choice(len(ims), min(len(ims), n_bg // 2), replace=False)], rng)
        n_bg -= len(near)
    bg = background_images(n_bg, ims.image_size, seed=seed + 17,
                           progress=sub_progress(progress, 0.1, 0.15, "background"), should_stop=should_stop)
    if window:
        bg = np.concatenate([bg, near])
        del near
    y_all = np.concatenate([ims.labels, np.full(len(bg), ims.n_classes)])
    fit_idx, val_idx = holdout(y_all, float(opt["validation_fraction"]), seed)
    seconds = {"generate": time.perf_counter() - t0}
    # the hand detector first: it reads window HOG whatever the reader's features are, and the cascade's
    # bootstrap model below needs it to find windows
    from ..features.hog import HOGFeatures
    from .dense_hog import HOG_SETTINGS

    t3 = time.perf_counter()
    hog = HOGFeatures(n_jobs=-1).fit(ims.images[:1])
    det = None
    if int(opt["detector_scenes"]) > 0 and not window:  # a window network finds the hand itself
        det = train_detector(hog, int(opt["detector_scenes"]), alpha=float(opt["detector_alpha"]),
                             seed=seed + 41, sides=sides, progress=sub_progress(progress, 0.15, 0.2, "hand detector"),
                             should_stop=should_stop)
    elif fmap == "network" and not window:
        raise ConfigError("hand model: network features need the hand detector (detector_scenes >= 1)")
    seconds["detector"] = time.perf_counter() - t3
    detection = {"detector": None if det is None else det.to_json()}
    if features == "network":  # the crop network's cascade: the HOG finder picks the windows it reads
        detection.update(finder={"hog": {k: v for k, v in hog.get_params().items() if k in HOG_SETTINGS}},
                         candidates=int(opt["candidates"]))
    n_hard, rounds = int(opt["hard_negatives"]), int(opt["bootstrap_rounds"])
    hard = np.zeros((0, *ims.image_size), np.uint8)
    t1 = time.perf_counter()
    for r in range(rounds if n_hard > 0 and not window else 0):
        # Dalal & Triggs' bootstrap: a first model (brute force) scans generated scenes; its false alarms
        # join the background class of the next model
        first = with_background(ims, np.concatenate([bg, hard]))
        first = first.subset(np.concatenate([fit_idx, np.arange(len(first) - len(hard), len(first))]))
        cfg0 = TrainConfig(features=fmap, features_params=feat_params, bank="ova-ridge",
                           bank_params={"alpha": float(opt["miner_alpha"])}, test_fraction=0.1, seed=seed)
        rec0 = train(first, cfg0, should_stop=should_stop).recogniser
        rec0.metadata["detection"] = dict(detection, detector_weight=0.0)
        del first
        hard = np.concatenate([hard, hard_negatives(rec0, n_hard, seed=seed + 29 + r, sides=sides,
                                                    should_stop=should_stop)])
        del rec0
        report(progress, 0.15 + 0.25 * (r + 1) / rounds, "bootstrap")
    seconds["hard_negatives"] = time.perf_counter() - t1
    p_sweep = [int(v) for v in _numbers(opt["p_sweep"], "p_sweep")]
    if not p_sweep:
        raise ConfigError("hand model: p_sweep must list some p")
    factors = _numbers(opt["reference_penalties"], "reference_penalties")
    if not factors:
        raise ConfigError("hand model: reference_penalties must list some multiples")
    examples = [e.strip() for e in str(opt["embedding_examples"]).split(",") if e.strip()]
    refines = [r.strip() for r in str(opt["refine"]).split(",") if r.strip()]
    # the one search (core.train.search.ClassMapSearch, through the train path) chooses the bank penalty, the
    # references (reference penalty, the images that embed the classes), the refine and p on the held-out
    # part, scored as the reader reads a hand ("foreground": the best hand class among the classes a method
    # evaluated, on the hand crops); measured gaps at this size (curve_seeds 1) keep the build within minutes
    cm = {"d": int(opt["d"]), "p": p_sweep, "refine": refines, "reference_penalty": factors,
          "embedding_examples": examples}
    # the bank keeps its training statistics at any size: a person's own gesture joins the model without
    # retraining it (Recogniser.add_class)
    # (the network head's penalty is fixed: its classifiers do not depend on it; it solves a class added later)
    bank_params = {"keep_statistics": "always", **({"alpha": ALPHA_REL} if bank == "network-head" else {})}
    cfg = TrainConfig(features=fmap, features_params=feat_params, bank=bank, bank_params=bank_params, classmap=cm,
                      test_fraction=0.1, classmap_fraction=0.15, seed=seed,
                      search={"scoring": "foreground", "tolerance": float(opt["tolerance"]), "curve_seeds": 1})
    t2 = time.perf_counter()
    # the images are encoded once and let go: the search reads features (0.17 GB), never the 0.77 GB of crops; the
    # background class joins as feature rows (joining the images would hold both sets of crops a moment)
    encoder = feature_map(cfg).fit(ims.images, ims.labels)
    data = encode_set(ims, encoder, progress=sub_progress(progress, 0.4, 0.5, "train: features"),
                      should_stop=should_stop)
    del ims
    data = with_background(data, encode(encoder, np.concatenate([bg, hard]), should_stop=should_stop))
    del bg
    res = train(data, cfg, validation=val_idx, progress=sub_progress(progress, 0.5, 0.78, "train"),
                should_stop=should_stop)
    del data
    rec = res.recogniser
    n_val = int(len(val_idx))
    seconds["train"] = time.perf_counter() - t2
    report(progress, 0.78, "p chosen on validation")
    rec.metadata["detection"] = detection
    chosen = res.selection["classmap_point"]["chosen"]
    info = {"classes": rec.n_classes, "hand_classes": rec.n_classes - 1, "features": int(rec.classifier.n_features_in_),
            "feature_map": features, "bank": bank, "style": str(opt["style"]), "images": {**res.sizes, "validation": n_val},
            "test_accuracy": float(res.report.accuracy), "bank_params": rec.metadata.get("bank_params", {}),
            "classmap": {"d": int(opt["d"]), **chosen}, "hard_negatives": int(len(hard)), "seconds": seconds,
            "selection": dict(res.selection)}
    return rec, info


def make_hand_model(folder, options: dict | None = None, choice: dict | None = None, progress: ProgressFn = None,
                    should_stop: StopFn = None):
    """Build the model (:func:`build_hand_model`), choose its scan and reading settings on validation videos
    (:func:`.choice.choose_scan`, ``choice``: its options) and save it to ``folder`` (None: not saved).
    Returns ``(recogniser, info)``; ``info["selection"]`` holds every choice, ``info["seconds"]`` the stages."""
    from .choice import choose_scan

    t0 = time.perf_counter()
    options = {**{k: v[0] for k, v in BUILD_OPTIONS.items()}, **(options or {})}
    rec, info = build_hand_model(options, sub_progress(progress, 0.0, 0.8), should_stop)
    t1 = time.perf_counter()
    choice = {**(choice or {}), "sides": options["sides"]}
    settings, sel = choose_scan(rec, choice, sub_progress(progress, 0.8, 0.99, "choosing on validation"),
                                should_stop)
    rec.metadata["detection"].update(settings)
    info["selection"].update(sel)
    info["detection"] = {k: v for k, v in settings.items() if k != "detector"}
    info["build_options"], info["choice_options"] = options, {k: v for k, v in choice.items() if k != "frame_size"}
    info["seconds"]["choose_scan"] = time.perf_counter() - t1
    info["seconds"]["total"] = time.perf_counter() - t0
    rec.metadata["hand_model"] = info
    if folder is not None:
        rec.save(Path(folder))
    report(progress, 1.0, "hand-pose model ready")
    return rec, info


__all__ = ["BUILD_OPTIONS", "MODEL_ENV", "MODEL_FOLDER", "build_hand_model", "built_hand_model", "hand_model_folder",
           "make_hand_model"]
