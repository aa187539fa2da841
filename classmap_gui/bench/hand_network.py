"""``classmap bench hand-network``: the hand model's reader (the trained network under ClassMap) on fresh test
crops of every hand class, ClassMap against brute force.

1. **Model**: the one a person gets (:func:`..core.detect.pose_model.make_hand_model`, as ``classmap
   hand-model`` builds it, ``features`` "network" by default), built or taken from ``model_dir`` / the cache
   exactly as ``bench scan`` takes it, so both benches can test one model. Its choices (bank penalty,
   reference penalty, p; scan and reading settings) were made on its own validation parts and are recorded
   under ``selection``.
2. **Test crops**: ``images_per_class`` crops of each of the 2430 classes in two styles, each of its own
   fresh seed: ``varied`` (the training domain's style, seed ``test_seed``) and ``camera`` (never trained on:
   other light, skins, scenes, lens, noise and JPEG; seed ``test_seed + 1``). Neither seed is the model's,
   the network's training or validation seed (refused before any work). Each crop is read as the app reads
   a hand (:func:`.scan.style_test`): ``shape_accuracy`` (the shape, orientation ignored), ``class_accuracy``
   (the exact class) and ``pose_accuracy_within_30``, for brute force (every classifier) and ClassMap
   (filter and refine), with ClassMap's classifier evaluations per crop beside brute force's.
3. **Operations**: multiply-adds per crop of each method's bank work at this feature width (brute force
   ``C x D``; ClassMap ``d x D`` references + ``C x d`` filter + refined classes ``x D``), and their ratio
   next to the evaluation ratio: ClassMap's saving is the bank's work, which shrinks with ``D``.
4. **Network**: its file's bytes, training seconds and the ONNX run-time vs PyTorch parity recorded when it
   was trained (``resources/networks/<name>.json``).
"""
from __future__ import annotations

import time

import numpy as np

from ..core.errors import ConfigError
from ..core.progress import ProgressFn, StopFn, report, sub_progress
from .common import machine
from .scan import OPTIONS as SCAN_OPTIONS
from .scan import hand_model_of, style_test

#: the default test seed of the crops (varied: this seed, camera: the next); never used before this revision
TEST_SEED = 36501

OPTIONS = {
    **{k: v for k, v in SCAN_OPTIONS.items() if k not in ("test_seed", "test_videos", "camera_images_per_class",
                                                          "camera_seed", "frames", "interleave", "interleave_pause")},
    "test_seed": (TEST_SEED, "seed of the varied-style test crops (the camera-style crops take test_seed + 1)"),
    "images_per_class": (2, "test crops per class and style"),
    "build_images_per_class": (32, "the model's generated images per class (its build option images_per_class)"),
    "frames": ("320x240", "the frame size the model's scan settings are chosen at (when it is built here)"),
}


def refuse_used_seeds(seed: int, build_options: dict, record: dict) -> None:
    """ConfigError when the test crops' seeds (``seed``, ``seed + 1``) are one the model was built with or its
    network was trained or validated with (``record``: the network's training record)."""
    recipe = record.get("recipe") or {}
    used = {"model images": build_options.get("seed", 0), "network training": recipe.get("seed"),
            "network validation": recipe.get("validation_seed")}
    for name, value in used.items():
        if value is not None and int(value) in (seed, seed + 1):
            raise ConfigError(f"bench hand-network: test seed {seed} (and {seed + 1}) must differ from the {name} "
                              f"seed {value}: a test part must stay unseen")


def operations(n_classes: int, n_features: int, d: int, refined: float) -> dict:
    """Multiply-adds per query of the bank work: brute force ``C x D``; ClassMap ``d x D + C x d + refined x D``."""
    brute = float(n_classes * n_features)
    cm = float(d * n_features + n_classes * d + refined * n_features)
    return {"brute_force": brute, "classmap": cm, "ratio": brute / cm}


def run(*, progress: ProgressFn = None, should_stop: StopFn = None, **options) -> dict:
    """Run the benchmark; returns the JSON-able result (see the module docstring)."""
    from ..core.features.network import NetworkFeatures, network_record

    opt = {k: v[0] for k, v in OPTIONS.items()}
    opt.update(options)
    seed = int(opt["test_seed"])
    t_start = time.perf_counter()
    scan_opt = {**{k: v[0] for k, v in SCAN_OPTIONS.items()}, **{k: v for k, v in opt.items() if k in SCAN_OPTIONS}}
    scan_opt["images_per_class"] = int(opt["build_images_per_class"])
    # before any work with the options, then with the model's own (a saved model's build may differ)
    shipped = {"network": "hand", "window": "hand-window"}.get(str(scan_opt.get("features")))
    refuse_used_seeds(seed, scan_opt, network_record(shipped) if shipped else {})
    rec, info = hand_model_of(scan_opt, sub_progress(progress, 0.0, 0.7), should_stop)
    built = info.get("build_options") or {}
    scan_opt.update({k: built[k] for k in ("shapes", "orientations") if k in built})  # the model's own classes
    feats = rec.features
    is_net = isinstance(feats, NetworkFeatures)
    record = network_record(str(feats.network)) if is_net else {}
    refuse_used_seeds(seed, info.get("build_options") or {}, record)
    crops = {}
    for i, style in enumerate(("varied", "camera")):
        t = style_test(rec, style, {**scan_opt, "camera_images_per_class": int(opt["images_per_class"]),
                                    "camera_seed": seed + i}, should_stop)
        crops[style] = t
        report(progress, 0.7 + 0.15 * (i + 1), f"{style} crops")
    D = int(rec.transform(np.zeros((1, *rec.image_size), np.uint8)).shape[1])
    cm = rec.classmap
    evals = crops["varied"]["classmap"]["evaluations_per_query"]
    d = int(cm.d)
    ops = operations(rec.n_classes, D, d, max(0.0, evals - d))
    network = {"features": type(feats).__name__, "width": D}
    if is_net:
        if record.get("sha256") != feats.sha256_:
            raise ConfigError("bench hand-network: the model's network is not the shipped one (its record does not "
                              "describe it): rebuild the model with this build's network")
        network.update(bytes=int(np.asarray(feats.onnx_).size), sha256=feats.sha256_,
                       training_seconds=record.get("training_seconds"),
                       parity_max_abs_diff=record.get("parity_max_abs_diff"),
                       recipe=record.get("recipe"), final_validation=(record.get("validation_curve") or [None])[-1])
    v, c = crops["varied"], crops["camera"]
    result = {
        "test_seed": seed, "test_part": f"{int(opt['images_per_class'])} crops per class: varied seed {seed}, "
                                        f"camera seed {seed + 1}",
        "crops": crops, "network": network,
        "evaluations": {"brute_force": float(rec.n_classes), "classmap": float(evals),
                        "ratio": float(rec.n_classes) / float(evals)},
        "operations": ops,
        "model": {k: v_ for k, v_ in info.items() if k != "selection"}, "selection": info.get("selection"),
        "options": {k: v_ for k, v_ in opt.items() if k != "cache_dir"},
        "targets": {"varied_shape_at_least_0.92": v["classmap"]["shape_accuracy"] >= 0.92,
                    "camera_shape_at_least_0.85": c["classmap"]["shape_accuracy"] >= 0.85,
                    "classmap_within_0.5_points": all(
                        abs(crops[s]["classmap"][k] - crops[s]["brute_force"][k]) <= 0.005
                        for s in crops for k in ("shape_accuracy",)),
                    "evaluations_at_least_20x_fewer": float(rec.n_classes) / float(evals) >= 20},
        "seconds": time.perf_counter() - t_start, **machine()}
    report(progress, 1.0, "done")
    return result
