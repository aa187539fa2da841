"""``classmap bench journey-features``: the README's own-classes journey (shapes recorded from the demo video)
trained with each feature map the Train panel offers for it, tested on a take it never saw.

The image set is what a person records following the README: from ``resources/demo-hands.avi``, the
Dataset panel's capture box (``region`` of the frame's shorter side, centred) of every frame where the hand
holds a key pose, as a project's ``size`` x ``size`` grey images, one class per key shape, one capture burst per
take and pose (the generator's truth: :func:`..core.data.hand_video.demo_timeline`). Each feature map is trained
with the settings the Train panel proposes for that map (:func:`..core.train.defaults.suggest_config` with the
map chosen; bank, sizes and penalty as proposed) on two takes and tested on the third, each take in turn (each
take has its own place, size, light and background): the accuracy per held-out take and their mean. The JSON
also records which map the panel proposes for these images (``proposed``: they are of hands).
"""
from __future__ import annotations

import time

import cv2
import numpy as np

from ..core.progress import ProgressFn, StopFn, check_stop, report
from .common import machine

OPTIONS = {
    "features": ("hog,kmeans,network,window-network", "feature maps compared (comma-separated)"),
    "size": (64, "image side of the project (File > New project's default: 64, grey)"),
    "region": (0.7, "the capture box, a fraction of the frame's shorter side (the Dataset panel's default: 70 %)"),
    "video": (None, "the demo video (default: the shipped resources/demo-hands.avi)"),
    "seed": (0, "training seed (the Train panel's default)"),
}


def journey_set(video, region: float, size: int):
    """The journey's :class:`ImageSet` (grey ``size`` x ``size``, a class per key shape, a burst per take and
    pose) and ``(n,) int64`` the take of each image."""
    from ..core.data import ImageSet
    from ..core.data.hand_video import KEY_POSES, demo_timeline
    from .demo_reading import read_video

    boxes = read_video(video, region)
    timeline = demo_timeline()
    shapes = list(dict.fromkeys(k[0] for k in KEY_POSES))
    images, labels, groups, takes = [], [], [], []
    for crop, (take, pose, _in) in zip(boxes, timeline):
        if pose is None:
            continue
        grey = cv2.cvtColor(crop, cv2.COLOR_RGB2GRAY)
        images.append(cv2.resize(grey, (size, size), interpolation=cv2.INTER_AREA))
        labels.append(shapes.index(pose[0]))
        groups.append(take * len(shapes) + shapes.index(pose[0]))
        takes.append(take)
    ims = ImageSet(np.stack(images), np.asarray(labels, np.int64), shapes, name="journey",
                   groups=np.asarray(groups, np.int64))
    return ims, np.asarray(takes, np.int64)


def run(*, progress: ProgressFn = None, should_stop: StopFn = None, **options) -> dict:
    """Train and test each feature map (module docstring); returns the JSON-able table."""
    from pathlib import Path

    from ..core.train.config import TrainConfig
    from ..core.train.defaults import suggest_config
    from ..core.train.training import train
    from .demo_reading import TEST_SEED, shipped_video

    opt = {k: v[0] for k, v in OPTIONS.items()}
    opt.update(options)
    t0 = time.perf_counter()
    before = machine()
    video = Path(opt["video"]) if opt["video"] else shipped_video()
    ims, takes = journey_set(video, float(opt["region"]), int(opt["size"]))
    proposed, reasons = suggest_config(ims, hands=True)
    names = [f.strip() for f in str(opt["features"]).split(",") if f.strip()]
    out = {"video": video.name, "test_seed": TEST_SEED, "images": len(ims), "classes": ims.class_names,
           "takes": int(takes.max()) + 1, "proposed": proposed["features"], "proposal_reasons": reasons,
           "proposed_without_hands": suggest_config(ims)[0]["features"], "features": {}}
    steps = len(names) * out["takes"]
    for i, name in enumerate(names):
        settings, _ = suggest_config(ims, {"features": name}, hands=True)
        settings["seed"] = int(opt["seed"])
        cfg = TrainConfig.from_dict(settings)
        per_take, seconds = [], []
        for held in range(out["takes"]):
            check_stop(should_stop)
            report(progress, (i * out["takes"] + held) / steps, f"{name}: testing on take {held + 1}")
            tr = np.flatnonzero(takes != held)
            te = np.flatnonzero(takes == held)
            s0 = time.perf_counter()
            res = train(ims, cfg, parts={"train": tr, "test": te, "embedding": np.zeros(0, np.int64)},
                        should_stop=should_stop)
            seconds.append(time.perf_counter() - s0)
            pred = res.recogniser.predict(ims.images[te], top=1).labels
            per_take.append(float(np.mean(pred == ims.labels[te])))
        out["features"][name] = {"settings": settings, "accuracy_per_held_out_take": per_take,
                                 "accuracy": float(np.mean(per_take)), "train_seconds": seconds}
    report(progress, 1.0, "done")
    out.update({"seconds": time.perf_counter() - t0, "machine_before": before, **machine()})
    return out
