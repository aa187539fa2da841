"""``classmap bench hand-readers``: which features should read the hand? Candidates side by side on the same
validation crops (never a test part), each trained through the product's train path.

For every feature map in ``candidates`` (``hog`` today's reader, ``network`` the shipped trained network,
``kmeans`` the Coates memo's single-layer features with ``kmeans_k`` centroids) and every count in
``images_per_class``: :func:`..core.train.training.train` (``ova-ridge``, its penalty chosen by the product's own
policy on a part of the training images) on generated hand crops of all 2430 classes + the background class
in the hand model's training style (seed ``seed``), then the crops of the validation seed
(``validation_seed``, ``varied`` style; and ``camera`` style, seed ``validation_seed + 1``) read as the app
reads a hand: the shape (its 30 orientation classes summed) and the exact class, brute force. Reported
beside them: the feature width, training minutes (the network's own training on top of the bank's) and
milliseconds per crop of the features.
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np

from ..core.progress import ProgressFn, StopFn, check_stop, report
from .common import machine
from .scan import read_crops

OPTIONS = {
    "candidates": ("hog,network", "feature maps compared (hog, network, kmeans)"),
    "images_per_class": ("8,32", "training crops per class (comma-separated counts)"),
    "kmeans_k": (400, "k-means centroids (the memo's pipeline) when kmeans is a candidate"),
    "seed": (0, "seed of the training crops (the hand model's own)"),
    "validation_seed": (36901, "seed of the validation crops (the network's validation seed: validation only)"),
    "validation_per_class": (1, "validation crops per class and style"),
    "background": (3000, "background crops in the training set"),
    "shapes": (None, "hand shapes (None: all 81; a count or names): fewer for a quick look"),
    "orientations": (None, "orientations (None: all 30)"),
}


def run(*, progress: ProgressFn = None, should_stop: StopFn = None, **options) -> dict:
    """Run the comparison; returns the JSON-able table (module docstring)."""
    from ..core.data.hand_pose import generate_hand_pose
    from ..core.data.hand_style import VARIED
    from ..core.detect.background import background_images, with_background
    from ..core.features.network import network_record
    from ..core.train.training import TrainConfig, train

    opt = {k: v[0] for k, v in OPTIONS.items()}
    opt.update(options)
    cands = [c.strip() for c in str(opt["candidates"]).split(",") if c.strip()]
    counts = sorted(int(v) for v in str(opt["images_per_class"]).split(",") if v.strip())
    style = dataclasses.replace(VARIED, shift_jitter=0.06, scale_jitter=0.10)  # the hand model's build framing
    sub = {"shapes": opt["shapes"] or None, "orientations": opt["orientations"] or None}
    full = generate_hand_pose(**sub, images_per_class=max(counts), style=style, seed=int(opt["seed"]), n_jobs=-1,
                              should_stop=should_stop)
    bg = background_images(int(opt["background"]), full.image_size, seed=int(opt["seed"]) + 17)
    vseed = int(opt["validation_seed"])
    val = {s: generate_hand_pose(**sub, images_per_class=int(opt["validation_per_class"]), style=s, seed=vseed + i,
                                 n_jobs=-1)
           for i, s in enumerate(("varied", "camera"))}
    params = {"hog": {"n_jobs": -1}, "network": {}, "kmeans": {"n_centroids": int(opt["kmeans_k"]), "n_jobs": -1}}
    net_minutes = (network_record("hand").get("training_seconds") or 0.0) / 60
    rows = []
    steps = len(cands) * len(counts)
    for ci, feat in enumerate(cands):
        for ni, n in enumerate(counts):
            check_stop(should_stop)
            keep = np.flatnonzero(np.arange(len(full)) % max(counts) < n)   # the first n crops of every class
            ims = with_background(full.subset(keep), bg)
            t0 = time.perf_counter()
            res = train(ims, TrainConfig(features=feat, features_params=params.get(feat, {}), bank="ova-ridge",
                                         test_fraction=0.1, seed=0), should_stop=should_stop)
            minutes = (time.perf_counter() - t0) / 60
            rec = res.recogniser
            probe = val["varied"].images[:256]
            t1 = time.perf_counter()
            rec.transform(probe)
            ms = 1000 * (time.perf_counter() - t1) / len(probe)
            row = {"features": feat, "images_per_class": n, "width": int(rec.transform(probe[:1]).shape[1]),
                   "train_minutes": minutes + (net_minutes if feat == "network" else 0.0),
                   "network_training_minutes": net_minutes if feat == "network" else 0.0,
                   "ms_per_crop": ms, "bank_alpha": (rec.metadata.get("bank_params") or {}).get("alpha")}
            for s, v in val.items():
                row[s] = read_crops(rec, v.images, [v.class_names[i] for i in v.labels], ("brute_force",),
                                    should_stop)["brute_force"]
            rows.append(row)
            report(progress, (ci * len(counts) + ni + 1) / steps, f"{feat} x {n}")
    return {"split": "validation", "validation_seed": vseed, "rows": rows, "options": opt, **machine()}
