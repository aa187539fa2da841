"""``classmap bench scan``: the hand-pose model finds and names the hand in every frame of fresh test videos,
ClassMap against brute force.

1. **Model**: the one a person gets (:func:`..core.detect.pose_model.make_hand_model`, as ``classmap
   hand-model`` builds it): 2430 hand classes + background in the randomised ``varied`` style, the hand
   detector, p by the shared operating-point rule, and the scan and reading settings chosen on validation
   videos (:mod:`..core.detect.choice`), all recorded under ``selection``. Cached under a key of every
   setting (``cache_dir``), or a saved model given by ``model_dir``.
2. **Test videos**: ``test_videos`` videos of seeds ``test_seed``, ``test_seed + 1``, … (never a validation
   seed: refused), each a hand moving through 14 key poses drawn from all 2430 classes, scanned at each
   frame size by both methods in the same run (the same :class:`..core.detect.scanner.Scanner`, dense
   features and threads; only the classification differs), in interleaved blocks of frames so both see the
   same machine load. Brute force's products (the scan's and the reader's) run on one BLAS thread or
   BLAS's own number, whichever made its frames faster on a validation video (:func:`brute_force_threads`,
   ``selection.brute_force_blas_threads``). Each frame is read by a :class:`..core.detect.reading.HandReader`
   (the voted box re-cropped and classified, or with the model's reading ``crops`` 0 the scan's own windows that
   voted for it, no network run; integrated along the track, shapes scored by their orientations together;
   ``reading_crops`` in each row).
   ``frames_per_second`` = frames / wall seconds of scan + reading; ``localisation`` = share of frames
   whose best box has IoU >= 0.5 with the true hand box; over the key-pose frames, a box in the wrong place
   counting as wrong: ``class_accuracy`` (exact class), ``shape_accuracy`` (the shape, orientation
   ignored) and ``pose_accuracy_within_30`` (same shape, orientation within 30 degrees);
   ``cpu_ms_per_frame``: CPU time of all the process's threads per frame.
3. **Camera-style and clean-style test images** (``camera`` / ``clean``: ``camera_images_per_class`` per
   class, seed ``camera_seed``; the camera style is never trained on), read as the app reads a crop: the
   same three accuracies for both methods.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from ..core.detect.choice import CHOICE_OPTIONS, floats
from ..core.detect.pose_model import BUILD_OPTIONS
from ..core.errors import ConfigError
from ..core.progress import ProgressFn, StopFn, check_stop, report, sub_progress
from ..core.timing import ratio, rounds_of
from .common import cache_key, machine

#: the default test seed: new in this revision (the test videos of earlier revisions, seed 1, are validation now)
TEST_SEED = 7001

OPTIONS = {
    **BUILD_OPTIONS,
    **{k: v for k, v in CHOICE_OPTIONS.items() if k != "frame_size"},
    "test_seed": (TEST_SEED, "first seed of the test videos (test_seed .. test_seed + test_videos - 1); never a "
                  "validation seed; part of the cache key"),
    "test_videos": (5, "test videos (14 key poses each, drawn from all 2430 classes: 126 key-pose frames a video)"),
    "camera_images_per_class": (2, "camera-style test images per class (seed camera_seed; never trained on)"),
    "camera_seed": (1000, "seed of the camera-style and clean-style test images"),
    "frames": ("320x240,640x480", "frame sizes scanned (WxH, comma-separated)"),
    "interleave": (12, "frames per turn: the two methods take turns over the video in blocks of this many frames"),
    "interleave_pause": (0.15, "untimed seconds between turns (BLAS worker threads go back to sleep)"),
    "cache_dir": (None, "folder for the built model (none: build every run); the CLI passes the user cache"),
    "model_dir": (None, "test this saved hand model (`classmap hand-model --out`) instead of building one: its "
                  "build and choice settings are its own (recorded in it)"),
}


def frame_sizes(s) -> list[tuple[int, int]]:
    """The frame sizes of the ``frames`` option ("320x240,640x480")."""
    out = []
    for part in str(s).split(","):
        try:
            w, h = (int(v) for v in part.lower().strip().split("x"))
        except ValueError:
            raise ConfigError(f"bench scan: frames must be WxH sizes like 320x240, got {part!r}") from None
        if w < 96 or h < 96:
            raise ConfigError(f"bench scan: frame {part} is too small to scan")
        out.append((w, h))
    return out


def test_seeds(opt: dict) -> list[int]:
    """The test videos' seeds; a ConfigError when one of them is a validation seed."""
    first, n = int(opt["test_seed"]), int(opt["test_videos"])
    if n < 1:
        raise ConfigError("bench scan: test_videos must be >= 1")
    seeds = list(range(first, first + n))
    from ..core.selection.splits import check_fresh

    check_fresh({"rows": seeds}, **{key: {"rows": [int(v) for v in floats(opt[key], key)]}
                                    for key in ("validation_video_seeds", "reading_video_seeds")})
    return seeds


def hand_model_of(opt: dict, progress: ProgressFn, should_stop: StopFn):
    """The hand model (:func:`..core.detect.pose_model.make_hand_model`), from the cache when built with the
    same settings."""
    import json

    from ..core.detect.pose_model import make_hand_model
    from ..core.recogniser import Recogniser

    if opt.get("model_dir") not in (None, "", "none"):
        rec = Recogniser.load(opt["model_dir"])
        if "hand_model" not in rec.metadata:
            raise ConfigError(f"bench scan: {opt['model_dir']} is not a hand model built by `classmap hand-model`")
        return rec, {**json.loads(json.dumps(rec.metadata["hand_model"])), "cached": True, "folder": str(opt["model_dir"])}
    build = {k: opt[k] for k in BUILD_OPTIONS}
    choice = {k: opt[k] for k in CHOICE_OPTIONS if k != "frame_size"}
    choice["frame_size"] = frame_sizes(opt["frames"])[0]
    cache = opt.get("cache_dir")
    path = None
    if cache not in (None, "", "none"):
        path = Path(cache) / f"hand-model-{cache_key('hand-model', build, choice, int(opt['test_seed']))}"
        if (path / "model.json").is_file():
            try:
                rec = Recogniser.load(path)
                report(progress, 1.0, "model: cached")
                return rec, {**json.loads(json.dumps(rec.metadata["hand_model"])), "cached": True}
            except Exception:  # noqa: BLE001 - an unreadable cache entry is rebuilt
                pass
    rec, info = make_hand_model(path, build, choice, progress, should_stop)
    return rec, {**info, "cached": False}


def brute_force_threads(rec, size: tuple[int, int], opt: dict, rounds: int = 4, frames: int = 24) -> dict:
    """Brute force's fastest BLAS setting (one thread or BLAS's own), timed whole frames (scan + reading) in
    interleaved rounds on the first of the model's validation videos, never a test video: the baseline gets
    whatever makes its frames fastest. Returns the selection record (``chosen``: 1 or None)."""
    from ..core.detect.choice import validation_video
    from ..core.detect.reading import HandReader
    from ..core.detect.scanner import Scanner

    w, h = size
    seed = int(floats(opt["validation_video_seeds"], "validation_video_seeds")[0])
    clip = [f for f, _, _ in validation_video(seed, (h, w))][:frames]
    ms = {None: [], 1: []}
    for r in range(rounds):
        for limit in ((None, 1) if r % 2 == 0 else (1, None)):
            sc = Scanner(rec, "brute_force", blas_threads=limit)
            rd = HandReader(rec, "brute_force", blas_threads=limit)
            sc.scan(clip[0])
            time.sleep(float(opt["interleave_pause"]))
            t0 = time.perf_counter()
            for f in clip:
                rd.read(f, sc.scan(f))
            ms[limit].append(1e3 * (time.perf_counter() - t0) / len(clip))
    med = {k: float(np.median(v)) for k, v in ms.items()}
    return {"chosen": min(med, key=med.get), "candidates": ["BLAS's own threads (null)", 1],
            "ms_per_frame": {"blas_default": ms[None], "one_thread": ms[1]}, "median_ms_per_frame":
            {"blas_default": med[None], "one_thread": med[1]}, "split": "validation videos",
            "video_seed": seed, "frames": len(clip), "by": "median ms per frame (scan + reading), interleaved rounds"}


def scan_videos(rec, size: tuple[int, int], opt: dict, should_stop: StopFn = None,
                brute_force_blas: int | None = None) -> list[dict]:
    """Scan every frame of the test videos at ``size`` (w, h) with both methods, each naming the hand with its
    :class:`..core.detect.reading.HandReader` (the model's settings); one result row each.

    The methods take turns in blocks of ``interleave`` frames (the first method alternating), so on a
    shared machine both see the same load; between blocks an untimed pause of ``interleave_pause`` seconds
    lets brute force's BLAS worker threads go back to sleep. A key-pose frame counts as right only when the
    box is on the hand (IoU >= 0.5) and the reading names its class (exact), its shape, or its pose within 30
    degrees (:func:`..core.data.hand_pose.pose_match`)."""
    from ..core.data.hand_pose import class_name, pose_scores
    from ..core.detect.choice import validation_video
    from ..core.detect.reading import HandReader
    from ..core.detect.boxes import iou
    from ..core.detect.scanner import Scanner

    w, h = size
    methods = ("classmap", "brute_force")
    blas = {"classmap": None, "brute_force": brute_force_blas}   # ClassMap's kernels use no BLAS
    scanners = {m: Scanner(rec, m, blas_threads=blas[m]) for m in methods}
    readers = {m: HandReader(rec, m, blas_threads=blas[m]) for m in methods}
    names = rec.class_names
    first = next(iter(validation_video(test_seeds(opt)[0], (h, w))))[0]
    for sc in scanners.values():
        sc.scan(first)                                      # compile, plan the pyramid, warm the caches
    acc = {m: {"hits": [], "ious": [], "evals": [], "truth": [], "said": [], "found": [], "stages": {}, "wall": 0.0,
               "cpu": 0.0} for m in methods}
    load_before = machine()["load_average"]
    block = max(1, int(opt["interleave"]))
    round_ms = {m: [] for m in methods}                     # one round: a block of frames, each method in turn
    round_cpu = {m: [] for m in methods}
    round_load = []                                         # the 1-minute load after every round: the load *during* them
    n = 0
    for seed in test_seeds(opt):
        frames = list(validation_video(seed, (h, w)))
        n += len(frames)
        for rd in readers.values():
            rd.reset()
        for k, b0 in enumerate(range(0, len(frames), block)):
            for m in (methods if k % 2 == 0 else methods[::-1]):
                time.sleep(float(opt["interleave_pause"]))
                a, sc, rd = acc[m], scanners[m], readers[m]
                wall0, cpu0, n_block = a["wall"], a["cpu"], len(frames[b0:b0 + block])
                for frame, label, box in frames[b0:b0 + block]:
                    check_stop(should_stop)
                    c0 = time.process_time()                # CPU seconds of all our threads: load-robust
                    t0 = time.perf_counter()
                    r = sc.scan(frame)
                    t1 = time.perf_counter()
                    said = rd.read(frame, r)
                    t2 = time.perf_counter()
                    a["wall"] += t2 - t0
                    a["stages"]["reading"] = a["stages"].get("reading", 0.0) + t2 - t1
                    a["cpu"] += time.process_time() - c0
                    for key, v in r.timings.items():
                        a["stages"][key] = a["stages"].get(key, 0.0) + v
                    bb = r.best_box
                    v = 0.0 if bb is None else iou(bb, (box[0], box[1], box[2], box[2]))
                    a["ious"].append(v)
                    a["hits"].append(v >= 0.5)
                    a["evals"].append(r.evaluations)
                    a["found"].append(said.found)
                    if label is not None:
                        a["truth"].append(class_name(*label))
                        a["said"].append(names[said.label] if said.found and v >= 0.5 else None)
                round_ms[m].append(1e3 * (a["wall"] - wall0) / n_block)
                round_cpu[m].append(1e3 * (a["cpu"] - cpu0) / n_block)
                round_load.append(os.getloadavg()[0])
    load_after = machine()["load_average"]
    rows = []
    for m in methods:
        a = acc[m]
        rows.append({"frame": f"{w}x{h}", "method": m, "frames_per_second": n / a["wall"],
                     "localisation": float(np.mean(a["hits"])), **pose_scores(a["truth"], a["said"]),
                     "hand_found": float(np.mean(a["found"])),
                     "frames": n, "pose_frames": len(a["truth"]), "videos": len(test_seeds(opt)),
                     "windows": int(r.windows), "scales": scanners[m].pyramid.scales(h, w),
                     "evaluations_per_window": float(np.mean(a["evals"])), "median_iou": float(np.median(a["ious"])),
                     "stage_ms_per_frame": {key: 1000 * v / n for key, v in a["stages"].items()},
                     "cpu_ms_per_frame": 1000 * a["cpu"] / n, "timing": f"interleaved in blocks of {block} frames; "
                     "scan + reading (the re-crops or the scan's windows, classify, track) of every frame",
                     "reading_crops": readers[m].crops,
                     "load_average_before": load_before, "load_average_after": load_after,
                     "rounds": _spread(round_ms[m], load_before, load_after),
                     "load_during_rounds": {"samples": len(round_load), "min": float(np.min(round_load)),
                                            "median": float(np.median(round_load)), "max": float(np.max(round_load))},
                     "round_ms_per_frame": round_ms[m], "round_cpu_ms_per_frame": round_cpu[m]})
    return rows


def _spread(ms: list[float], load_before, load_after) -> dict:
    """The interleaved rounds of one method: how many, the median, min and max ms per frame, the load."""
    return {"rounds": len(ms), "median": float(np.median(ms)), "min": float(np.min(ms)), "max": float(np.max(ms)),
            "load_before": load_before, "load_after": load_after}


def style_test(rec, style: str, opt: dict, should_stop: StopFn = None) -> dict:
    """The model on generated test images of ``style`` (``camera``: never trained on; seed ``camera_seed``),
    both methods, each crop read as the app reads a hand (:func:`read_crops`)."""
    from ..core.data.hand_pose import generate_hand_pose
    from ..core.data.hand_style import STYLES
    from ..core.detect.window_crops import crops_for

    drawn, size = crops_for(rec, STYLES[style])
    ims = generate_hand_pose(shapes=opt["shapes"] or None, orientations=opt["orientations"] or None,
                             images_per_class=int(opt["camera_images_per_class"]), style=drawn, size=size,
                             seed=int(opt["camera_seed"]), n_jobs=-1, should_stop=should_stop)
    truth = [ims.class_names[i] for i in ims.labels]
    return {"style": style, "images": int(len(truth)), "seed": int(opt["camera_seed"]),
            **read_crops(rec, ims.images, truth, should_stop=should_stop)}


def read_crops(rec, images: np.ndarray, truth: list[str], methods=("classmap", "brute_force"),
               should_stop: StopFn = None) -> dict:
    """``{method: scores}`` of crops ``images`` whose true class names are ``truth``, each read as the app
    reads a hand (:func:`..core.detect.reading.read_probabilities`: the hand classes a method evaluated, shapes
    scored by their orientations together): :func:`..core.data.hand_pose.pose_scores`, the best hand class's
    exact accuracy and the classifier evaluations per crop."""
    from ..core.data.hand_pose import pose_scores
    from ..core.detect.reading import HandReader, read_probabilities

    X = np.ascontiguousarray(rec.transform(images), np.float32)
    names = rec.class_names
    out = {}
    for m in methods:
        rd = HandReader(rec, m)
        if m == "brute_force":
            S = X @ rd.W.T + rd.b
            every = np.arange(S.shape[1])
            parts = ((every, S[i]) for i in range(len(S)))
        else:
            pr = rec.classmap.predict_result(X, bank=rec.classifier)
            parts = ((np.asarray(pr.top_classes[i]), np.asarray(pr.top_scores[i], np.float64)) for i in range(len(X)))
        evals = float(S.shape[1]) if m == "brute_force" else float(np.mean(pr.evaluations))
        said, argmax = [], []
        for c, sc in parts:
            check_stop(should_stop)
            prob = rd.probabilities([(c, sc)])
            got = read_probabilities(prob, rd.groups, rd.group_names, rd.orient)
            said.append(names[got.label] if got.found else None)
            hand = np.where(rd.groups[c] >= 0, sc, -np.inf)
            argmax.append(names[int(c[int(np.nanargmax(np.where(np.isfinite(hand), hand, -np.inf)))])])
        out[m] = {**pose_scores(truth, said), "argmax_class_accuracy": float(np.mean([a == b for a, b in zip(truth, argmax)])),
                  "evaluations_per_query": evals}
    return out


def run(*, progress: ProgressFn = None, should_stop: StopFn = None, **options) -> dict:
    """Run the benchmark; returns the JSON-able result (see the module docstring)."""
    opt = {k: v[0] for k, v in OPTIONS.items()}
    opt.update(options)
    sizes = frame_sizes(opt["frames"])
    seeds = test_seeds(opt)                             # refuses test seeds that are validation seeds, before any work
    t_start = time.perf_counter()
    rec, info = hand_model_of(opt, sub_progress(progress, 0.0, 0.75), should_stop)
    opt.update({k: v for k, v in (info.get("choice_options") or {}).items() if k in opt})  # the model's validation seeds
    seeds = test_seeds(opt)                             # ... never a test seed either
    rows, baseline = [], {}
    for i, size in enumerate(sizes):
        fr = f"{size[0]}x{size[1]}"
        baseline[fr] = brute_force_threads(rec, size, opt)
        rows.extend(scan_videos(rec, size, opt, should_stop, brute_force_blas=baseline[fr]["chosen"]))
        report(progress, 0.75 + 0.2 * (i + 1) / len(sizes), f"scanned {size[0]}x{size[1]}")
    camera = style_test(rec, "camera", opt, should_stop)
    clean = style_test(rec, "clean", opt, should_stop)
    fps_ratio, cpu_ratio, rounds = {}, {}, {}
    for size in sizes:
        fr = f"{size[0]}x{size[1]}"
        by = {r["method"]: r for r in rows if r["frame"] == fr}
        fps_ratio[fr] = by["classmap"]["frames_per_second"] / by["brute_force"]["frames_per_second"]
        cpu_ratio[fr] = by["brute_force"]["cpu_ms_per_frame"] / by["classmap"]["cpu_ms_per_frame"]
        load = by["classmap"]["load_average_before"]
        rounds[fr] = {what: ratio(rounds_of({m: by[m][key] for m in by}, load), "brute_force", "classmap")
                      for what, key in (("wall", "round_ms_per_frame"), ("cpu", "round_cpu_ms_per_frame"))}
    first = f"{sizes[0][0]}x{sizes[0][1]}"
    cm_first = next(r for r in rows if r["frame"] == first and r["method"] == "classmap")
    bf_first = next(r for r in rows if r["frame"] == first and r["method"] == "brute_force")
    cam_cm, cam_bf = camera["classmap"], camera["brute_force"]
    result = {"test_seed": int(opt["test_seed"]), "test_video_seeds": seeds, "scan": rows, "camera": camera,
              "clean": clean, "speedup": fps_ratio, "cpu_speedup": cpu_ratio,
              "speedup_rounds": rounds,
              "model": {k: v for k, v in info.items() if k != "selection"},
              "selection": {**info["selection"], "brute_force_blas_threads": baseline},
              "options": {k: v for k, v in opt.items() if k != "cache_dir" and not k.startswith("_")},
              "targets": {f"classmap_fps_at_least_60_at_{first}": cm_first["frames_per_second"] >= 60,
                          f"speedup_at_least_2_at_{first}": fps_ratio[first] >= 2,
                          f"shape_at_least_0.95_at_{first}": cm_first["shape_accuracy"] >= 0.95,
                          f"localisation_at_least_0.99_at_{first}": cm_first["localisation"] >= 0.99,
                          f"classmap_within_0.5_points_of_brute_force_at_{first}":
                              abs(cm_first["shape_accuracy"] - bf_first["shape_accuracy"]) <= 0.005,
                          "load_during_rounds_at_most_1": all(r["load_during_rounds"]["max"] <= 1.0 for r in rows),
                          "camera_classmap_within_2_points": abs(cam_cm["shape_accuracy"] - cam_bf["shape_accuracy"]) <= 0.02},
              "seconds": time.perf_counter() - t_start, **machine()}
    report(progress, 1.0, "done")
    return result
