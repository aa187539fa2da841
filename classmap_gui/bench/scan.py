"""``classmap bench scan``: find the hand in every frame of a generated video, ClassMap against brute force.

1. **Model**: the ``hand-pose`` classes (81 shapes x 30 orientations = 2430) generated with a
   detection framing jitter (``shift_jitter`` / ``scale_jitter``: windows one cell apart never frame a
   hand as exactly as the data set's crops do), plus a :data:`BACKGROUND_CLASS` of generated clutter
   and near-miss crops (:mod:`..detect.background`) and, Dalal-Triggs' bootstrap, the false alarms of a
   first model (brute force) in generated hand scenes. A stratified ``validation_fraction`` of every
   class is held out first (never mined from); the rest goes through the product's train path
   (:func:`..training.train`: HOG, ``ova-ridge`` with its penalty chosen on a validation part of the
   training data, CM-Boosted on an embedding part).
2. **ClassMap p** on the held-out validation part, by :func:`..core.selection.operating_point` (fewest
   evaluations within ``tolerance`` of brute force's validation accuracy), as ``bench classmap`` does.
   The reference penalty and refine are the ones ``bench classmap`` chose on hand-pose (options).
   The hand-vs-background detector (:mod:`..detect.detector`, ``detector_scenes`` generated scenes;
   kept in the cached model folder) is trained after the model. The window scales (one of
   ``side_sets``), the background weight and the detector's weight by localisation on validation
   videos (:func:`.scan_choice.choose_detection`; their own seeds), with box voting's overlap and
   temperature (:func:`..detect.scanner.vote_box`).
3. **Scan** the test video (:func:`..data.hand_video.find_hand_frames`, its own seed, never seen in
   training or selection) at each frame size, with both methods in the same run: the same
   :class:`..detect.scanner.Scanner`, dense features and threads; only the classification differs
   (ClassMap's batch filter-and-refine, or one GEMM of all windows against all weights). The methods
   take turns in blocks of frames (:func:`scan_videos`), so both see the same machine load.
   ``frames_per_second`` = frames / wall-clock seconds of ``Scanner.scan`` (features, classification,
   selection; not video decoding); ``localisation`` = share of frames whose best box has IoU >= 0.5
   with the true hand box; ``class_accuracy`` = share of the frames holding a key pose whose winning
   class is that pose; ``cpu_ms_per_frame``: CPU time of all the process's threads per frame (on a
   shared machine the wall-clock rate depends on the other sessions' load, the CPU time much less).

With ``cache_dir`` the trained model (a model folder: JSON + npz, no pickles) is kept under a key of
every setting above, so a rerun only scans.
"""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import numpy as np

from ..core.errors import ConfigError
from ..core.progress import ProgressFn, StopFn, check_stop, report, sub_progress
from ..core.selection import TOLERANCE
from ..core.splits import holdout
from .common import cache_key, floats, machine
from .scan_choice import choose_detection, frame_sizes

OPTIONS = {
    "images_per_class": (20, "generated hand-pose images per class (before the validation hold-out)"),
    "shapes": (None, "hand shapes (None: all 81; a count or names) — fewer for a quick run"),
    "orientations": (None, "orientations (None: all; a count spread over the grid)"),
    "shift_jitter": (0.06, "training framing: the hand's centre jitter, fraction of the crop"),
    "scale_jitter": (0.10, "training framing: the hand's size jitter, relative"),
    "background": (6000, "generated background crops (clutter and near misses) in the background class"),
    "hard_negatives": (3000, "false alarms mined per bootstrap round in generated hand scenes, added to the "
                       "background before the next training (Dalal-Triggs bootstrap; 0: none)"),
    "bootstrap_rounds": (2, "bootstrap rounds (each: train brute force, mine false alarms)"),
    "validation_fraction": (0.1, "share of every class held out to choose p"),
    "background_weights": ("0,0.02,0.035,0.05,0.1", "candidate weights of the background response in "
                           "a window's score, chosen by localisation on the validation videos (their own seeds)"),
    "side_sets": ("0.30,0.36,0.43,0.52,0.62;0.36,0.43,0.52,0.62;0.30,0.36,0.43,0.52;0.36,0.43,0.52",
                  "candidate window-side sets (';'-separated subsets of sides, >= 3 scales each), chosen with the "
                  "background weight by localisation on the validation videos"),
    "validation_video_seeds": ("101,102,103,104,105,106,107,108", "seeds of the validation videos (8: two short "
                               "videos chose among near ties that the test video did not confirm); the weight and "
                               "voting grids are the part of a wider grid (background up to 1, detector up to 1, "
                               "overlap 0.2, temperature 0.1) that scored best on these videos (docs/detect.md)"),
    "vote_overlaps": ("0.3,0.4", "candidate box-voting overlaps: windows overlapping a kept box by this IoU vote "
                      "on its place and size (chosen on the validation videos)"),
    "vote_temperatures": ("0,0.01,0.02,0.05", "candidate box-voting temperatures (score units; 0: no voting), "
                          "chosen on the validation videos"),
    "detector_scenes": (400, "generated hand scenes whose windows train the hand-vs-background detector (0: none)"),
    "detector_alpha": (10.0, "the detector's ridge penalty"),
    "detector_rounds": (0, "the detector's bootstrap rounds (false alarms mined in detector_scenes new scenes; 1 round "
                        "was worse on the validation videos: 0.868 against 0.912)"),
    "detector_weights": ("0,0.005,0.01,0.02,0.03,0.05", "candidate weights of the hand detector in a window's "
                         "score, chosen with the background weight and the sides on the validation videos"),
    "d": (45, "ClassMap reference classifiers"),
    "p_sweep": ("10,15,20,30,40", "candidate p values (chosen on validation)"),
    "refine": ("v3", "ClassMap refine (bench classmap's choice on hand-pose)"),
    "reference_penalty": (30.0, "reference-bank penalty multiple (bench classmap's choice on hand-pose)"),
    "tolerance": (TOLERANCE, "chosen p: fewest evaluations within this of brute force on validation"),
    "frames": ("320x240,640x480", "frame sizes scanned (WxH, comma-separated)"),
    "video_seed": (1, "seed of the test video (scene, path, sizes)"),
    "sides": ("0.30,0.36,0.43,0.52,0.62", "window sides as fractions of the frame's shorter side: where false alarms "
              "are mined, and the scales side_sets choose from"),
    "interleave": (12, "frames per turn: the two methods take turns over the video in blocks of this many frames"),
    "interleave_pause": (0.15, "untimed seconds between turns (BLAS worker threads go back to sleep)"),
    "cache_dir": (None, "folder for the trained model (none: train every run); the CLI passes the user cache"),
    "seed": (0, "random seed"),
}


def _opt_count(v):
    return None if v in (None, "", "none", "None") else v


def build_model(opt: dict, progress: ProgressFn = None, should_stop: StopFn = None):
    """Generate, train and choose p as the module docstring says; returns ``(recogniser, info)``."""
    from ..core.classify.classmap import ClassMap  # noqa: F401 (the recogniser's ClassMap)
    from ..core.data.hand_pose import generate_hand_pose
    from ..core.data.hand_style import CLEAN
    from ..core.detect.background import background_images, hard_negatives, with_background
    from ..core.training import TrainConfig, train
    from ..core.selection import measured_gaps, operating_point
    from .classmap import KEYS, curve

    seed = int(opt["seed"])
    style = dataclasses.replace(CLEAN, shift_jitter=float(opt["shift_jitter"]), scale_jitter=float(opt["scale_jitter"]))
    t0 = time.perf_counter()
    ims = generate_hand_pose(shapes=_opt_count(opt["shapes"]), orientations=_opt_count(opt["orientations"]),
                             images_per_class=int(opt["images_per_class"]), style=style, seed=seed, n_jobs=-1,
                             progress=sub_progress(progress, 0.0, 0.1, "hand-pose"), should_stop=should_stop)
    bg = background_images(int(opt["background"]), ims.image_size, seed=seed + 17,
                           progress=sub_progress(progress, 0.1, 0.2, "background"), should_stop=should_stop)
    fit_idx, val_idx = holdout(np.concatenate([ims.labels, np.full(len(bg), ims.n_classes)]),
                                          float(opt["validation_fraction"]), seed)
    generated = time.perf_counter() - t0
    n_hard, rounds = int(opt["hard_negatives"]), int(opt["bootstrap_rounds"])
    mined = 0.0
    hard = np.zeros((0, *ims.image_size), np.uint8)
    t1 = time.perf_counter()
    for r in range(rounds if n_hard > 0 else 0):
        # Dalal & Triggs' bootstrap: a model (brute force, no ClassMap) scans generated hand scenes; its
        # false alarms join the background class of the next model
        first = with_background(ims, np.concatenate([bg, hard]))
        first = first.subset(np.concatenate([fit_idx, np.arange(len(first) - len(hard), len(first))]))
        cfg0 = TrainConfig(features="hog", features_params={"n_jobs": -1}, bank="ova-ridge", test_fraction=0.1,
                           seed=seed)
        rec0 = train(first, cfg0, should_stop=should_stop).recogniser
        del first
        hard = np.concatenate([hard, hard_negatives(rec0, n_hard, seed=seed + 29 + r, sides=floats(opt["sides"], "sides"),
                                                    should_stop=should_stop)])
        del rec0
        report(progress, 0.2 + 0.2 * (r + 1) / rounds, "bootstrap")
    mined = time.perf_counter() - t1
    ims = with_background(ims, np.concatenate([bg, hard]))
    del bg
    # the validation part never holds mined crops: they are appended after the indices drawn above
    fit_idx = np.concatenate([fit_idx, np.arange(len(ims) - len(hard), len(ims))])
    train_set, val_set = ims.subset(fit_idx), ims.subset(val_idx)
    del ims
    p_sweep = [int(v) for v in floats(opt["p_sweep"], "p_sweep")]
    cm = {"d": int(opt["d"]), "p": max(p_sweep), "refine": str(opt["refine"]),
          "reference_penalty": float(opt["reference_penalty"])}
    cfg = TrainConfig(features="hog", features_params={"n_jobs": -1}, bank="ova-ridge", classmap=cm,
                      test_fraction=0.1, classmap_fraction=0.15, seed=seed)
    res = train(train_set, cfg, progress=sub_progress(progress, 0.4, 0.75, "train"), should_stop=should_stop)
    rec = res.recogniser
    del train_set
    check_stop(should_stop)
    Xv = rec.transform(val_set.images)
    yv = np.asarray(val_set.labels)
    brute_val = float(np.mean(rec.classifier.predict(Xv) == yv))
    points = curve({cm["refine"]: rec.classmap}, rec.classifier, Xv, yv, p_sweep, should_stop,
                   reference_penalty=cm["reference_penalty"])
    sel_p = operating_point(measured_gaps(points, brute_val), KEYS, tolerance=float(opt["tolerance"]),
                            by="validation gap to brute force")
    rec.classmap.set_params(p=int(sel_p["chosen"]["p"]))
    report(progress, 0.8, "p chosen on validation")
    info = {"classes": rec.n_classes, "hand_classes": rec.n_classes - 1, "features": int(Xv.shape[1]),
            "images": {**res.sizes, "validation": int(len(yv))}, "test_accuracy": float(res.report.accuracy),
            "bank_params": rec.metadata.get("bank_params", {}), "classmap": {**cm, "p": int(sel_p["chosen"]["p"])},
            "generate_seconds": generated, "hard_negative_seconds": mined, "hard_negatives": int(len(hard)),
            "train_seconds": res.timings,
            "selection": {"split": "validation", **res.selection, "classmap_p": sel_p,
                          "fixed": {"refine": cm["refine"], "reference_penalty": cm["reference_penalty"],
                                    "split": "validation", "by": "bench classmap on hand-pose (its selection)"}}}
    return rec, info


def _detector(rec, opt: dict, path, progress: ProgressFn, should_stop: StopFn) -> dict:
    """Train the hand detector (:mod:`..detect.detector`) into ``rec.metadata["detection"]`` unless the
    (cached) model already holds one trained with the same settings; re-save the cached model."""
    from ..core.detect.detector import train_detector

    key = {"scenes": int(opt["detector_scenes"]), "alpha": float(opt["detector_alpha"]), "seed": int(opt["seed"]) + 41,
           "sides": floats(opt["sides"], "sides"), "rounds": int(opt["detector_rounds"])}
    detection = dict(rec.metadata.get("detection") or {})
    if key["scenes"] <= 0:
        detection.pop("detector", None)
        rec.metadata["detection"] = detection
        return {"scenes": 0}
    if detection.get("detector_settings") == key and detection.get("detector") is not None:
        return {**key, "cached": True, "seconds": detection.get("detector_seconds")}
    t0 = time.perf_counter()
    det = train_detector(rec.features, key["scenes"], alpha=key["alpha"], seed=key["seed"], sides=key["sides"],
                         rounds=key["rounds"], progress=progress, should_stop=should_stop)
    detection.update(detector=det.to_json(), detector_settings=key, detector_seconds=time.perf_counter() - t0)
    rec.metadata["detection"] = detection
    if path is not None:
        rec.save(path)
    return {**key, "cached": False, "seconds": detection["detector_seconds"]}


def _model(opt: dict, progress: ProgressFn, should_stop: StopFn):
    """The trained model, from the cache when one with the same settings is there."""
    import json

    from ..core.recogniser import Recogniser

    # the model's settings; the background weight is chosen after loading (cheap), so not part of the key
    keys = [k for k in OPTIONS if k not in ("video_seed", "cache_dir", "background_weights", "validation_video_seeds",
                                            "side_sets", "frames", "interleave", "interleave_pause", "detector_scenes",
                                            "vote_overlaps", "vote_temperatures",
                                            "detector_alpha", "detector_rounds", "detector_weights")]
    cache = opt.get("cache_dir")
    path = None
    if cache not in (None, "", "none"):
        path = Path(cache) / f"scan-model-{cache_key('scan-model', {k: opt[k] for k in keys})}"
        if (path / "model.json").is_file():
            try:
                rec = Recogniser.load(path)
                info = json.loads(json.dumps(rec.metadata["scan_bench"]))
                report(progress, 0.7, "model: cached")
                info["detector"] = _detector(rec, opt, path, sub_progress(progress, 0.7, 0.8), should_stop)
                return rec, {**info, "cached": True}
            except Exception:  # noqa: BLE001 - an unreadable cache entry is rebuilt
                pass
    rec, info = build_model(opt, sub_progress(progress, 0.0, 0.7), should_stop)
    if path is not None:
        rec.metadata["scan_bench"] = info
        rec.save(path)
    info = {**info, "detector": _detector(rec, opt, path, sub_progress(progress, 0.7, 0.8), should_stop)}
    return rec, {**info, "cached": False}


def scan_videos(rec, size: tuple[int, int], opt: dict, should_stop: StopFn = None) -> list[dict]:
    """Scan every frame of the test video at ``size`` (w, h) with both methods; one result row each.

    The methods take turns in blocks of ``interleave`` frames (the first method alternating), so on a
    shared machine both see the same load over the run instead of one method getting a quiet minute
    and the other a busy one. Between blocks an untimed pause of ``interleave_pause`` seconds lets the
    BLAS worker threads of brute force's GEMM go back to sleep (OpenBLAS keeps them spinning for a while
    after a call, which would take a core from the next block's method)."""
    from ..core.data.hand_pose import class_name
    from ..core.data.hand_video import find_hand_frames
    from ..core.detect.scanner import Scanner, iou

    w, h = size
    frames = list(find_hand_frames((h, w), seed=int(opt["video_seed"])))
    sides = opt["_sides"]
    methods = ("classmap", "brute_force")
    scanners = {m: Scanner(rec, m, sides=sides, background_weight=float(opt["_background_weight"]),
                           detector_weight=float(opt["_detector_weight"]), vote_overlap=opt["_vote"]["overlap"],
                           vote_temperature=opt["_vote"]["temperature"]) for m in methods}
    for sc in scanners.values():
        sc.scan(frames[0][0])                               # compile, plan the pyramid, warm the caches
    names = rec.class_names
    acc = {m: {"hits": [], "correct": [], "ious": [], "evals": [], "stages": {}, "wall": 0.0, "cpu": 0.0} for m in methods}
    load_before = machine()["load_average"]
    block = max(1, int(opt["interleave"]))
    for k, b0 in enumerate(range(0, len(frames), block)):
        for m in (methods if k % 2 == 0 else methods[::-1]):
            time.sleep(float(opt["interleave_pause"]))
            a, sc = acc[m], scanners[m]
            for frame, label, box in frames[b0:b0 + block]:
                check_stop(should_stop)
                c0 = time.process_time()                    # CPU seconds of all our threads: load-robust
                t0 = time.perf_counter()
                r = sc.scan(frame)
                a["wall"] += time.perf_counter() - t0
                a["cpu"] += time.process_time() - c0
                for key, v in r.timings.items():
                    a["stages"][key] = a["stages"].get(key, 0.0) + v
                bb = r.best_box
                v = 0.0 if bb is None else iou(bb, (box[0], box[1], box[2], box[2]))
                a["ious"].append(v)
                a["hits"].append(v >= 0.5)
                a["evals"].append(r.evaluations)
                if label is not None:
                    a["correct"].append(r.label is not None and names[r.label] == class_name(*label))
    load_after = machine()["load_average"]
    n = len(frames)
    rows = []
    for m in methods:
        a = acc[m]
        rows.append({"frame": f"{w}x{h}", "method": m, "frames_per_second": n / a["wall"],
                     "localisation": float(np.mean(a["hits"])),
                     "class_accuracy": float(np.mean(a["correct"])) if a["correct"] else None,
                     "frames": n, "pose_frames": len(a["correct"]), "windows": int(r.windows),
                     "scales": scanners[m].pyramid.scales(h, w),
                     "evaluations_per_window": float(np.mean(a["evals"])), "median_iou": float(np.median(a["ious"])),
                     "stage_ms_per_frame": {key: 1000 * v / n for key, v in a["stages"].items()},
                     "cpu_ms_per_frame": 1000 * a["cpu"] / n, "timing": f"interleaved in blocks of {block} frames",
                     "load_average_before": load_before, "load_average_after": load_after})
    return rows


def run(*, progress: ProgressFn = None, should_stop: StopFn = None, **options) -> dict:
    """Run the benchmark; returns the JSON-able result (see the module docstring)."""
    opt = {k: v[0] for k, v in OPTIONS.items()}
    opt.update(options)
    sizes = frame_sizes(opt["frames"])
    if not floats(opt["p_sweep"], "p_sweep"):
        raise ConfigError("bench scan: p_sweep must list some p")
    t_start = time.perf_counter()
    rec, info = _model(opt, sub_progress(progress, 0.0, 0.8), should_stop)
    sel = choose_detection(rec, opt, should_stop)   # .scan_choice: on the validation videos
    info["selection"].update(sel)
    info["detector_weight"] = opt["_detector_weight"] = sel["detector_weight"]["chosen"]
    info["sides"] = opt["_sides"] = sel["sides"]["chosen"]
    info["background_weight"] = opt["_background_weight"] = sel["background_weight"]["chosen"]
    info["vote"] = opt["_vote"] = sel["vote"]["chosen"]
    rows = []
    for i, size in enumerate(sizes):
        rows.extend(scan_videos(rec, size, opt, should_stop))
        report(progress, 0.8 + 0.2 * (i + 1) / len(sizes), f"scanned {size[0]}x{size[1]}")
    ratio, cpu_ratio = {}, {}
    for size in sizes:
        fr = f"{size[0]}x{size[1]}"
        by = {r["method"]: r for r in rows if r["frame"] == fr}
        ratio[fr] = by["classmap"]["frames_per_second"] / by["brute_force"]["frames_per_second"]
        cpu_ratio[fr] = by["brute_force"]["cpu_ms_per_frame"] / by["classmap"]["cpu_ms_per_frame"]
    first = f"{sizes[0][0]}x{sizes[0][1]}"
    cm_first = next(r for r in rows if r["frame"] == first and r["method"] == "classmap")
    result = {"scan": rows, "speedup": ratio, "cpu_speedup": cpu_ratio, "model": {k: v for k, v in info.items() if k != "selection"},
              "selection": info["selection"], "options": {k: v for k, v in opt.items() if k != "cache_dir" and not k.startswith("_")},
              "targets": {f"classmap_fps_at_least_15_at_{first}": cm_first["frames_per_second"] >= 15,
                          f"speedup_at_least_3_at_{first}": ratio[first] >= 3,
                          "localisation_at_least_0.9": all(r["localisation"] >= 0.9 for r in rows)},
              "seconds": time.perf_counter() - t_start, **machine()}
    report(progress, 1.0, "done")
    return result
