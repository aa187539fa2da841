"""``classmap bench add-gesture``: a person's own hand shapes join the 2430-class hand model without retraining it.

1. **Gestures**: ``gestures`` (>= 5) hand shapes that are none of the model's 81 (:data:`.gesture_takes.GESTURES`:
   finger-state codes no shape has, drawn by the same renderer), each **recorded** as one take of
   ``record_seconds`` at ``fps`` (one place, light, skin and background, orientation drifting about
   :data:`.gesture_takes.BASE_ORIENTATION`; seeds ``record_seed + i``). The hand is found in every frame by the
   model's scan (:func:`..core.detect.gesture_crops.hand_crops`) and its crops become the class
   (:meth:`..core.recogniser.Recogniser.add_class`: the ridge bank's closed form, ClassMap's embedding and filter).
   Each method adds the gestures from its own scan's crops to its own copy of the model.
2. **Seconds to named**: from the last recorded frame (its crop taken, as the Run panel records them live) to the
   gesture named on the next frame: ``add_class``, a new scanner and reader, and one frame scanned and read.
3. **Fresh takes** (seeds from ``test_seed``): ``clean_takes`` takes of each gesture in the clean style and
   ``camera_takes`` in the camera style (other skins, low light, room scenes, blur, noise, JPEG: never trained
   on), each ``test_seconds`` long, read frame by frame as the Run panel reads them
   (:class:`..core.detect.reading.HandReader`, the model's reading settings): ``recall`` = share of frames named
   as the gesture. Then ``shape_videos`` of ``bench scan``'s test videos (seeds ``test_seed + 900 + k``: 14 key
   poses of the 81 shapes): ``taken_by_gestures`` = share of their key-pose frames read as any new gesture.
4. **The 2430 classes**: one clean-style crop per class (seed ``test_seed``), read as the app reads a crop, before
   and after the gestures are added: ``shape_accuracy`` and the share named as a gesture.

One choice, on validation takes of their own seed (``validation_seed``) only, among ``candidates``
``crops:rows:rule``: ``crops`` a recorded frame gives (the scan's box alone, or with the reader's shifted
re-crops), ``rows`` the training rows the gesture's crops count as together in the ridge solve
(``Recogniser.add_class(rows=)``; "-": one each) and ``rule``, how the reader weighs a one-class gesture against
a shape's 30 orientation classes (:func:`..core.detect.reading.read_probabilities`); ``choices`` records every
candidate's validation figures, the rule it was chosen by and whether it sits at an edge of the grid. The model's
own scan and reading settings are used as saved.
"""
from __future__ import annotations

import time

import numpy as np

from ..core.progress import ProgressFn, StopFn, check_stop, report
from .common import machine

#: a fresh test seed: its takes' seeds (TEST_SEED + 100 i + 10 camera + j: residues 51, 52, 61 mod 100) share none
#: with the spent parts' (48101 and 48201: residues 1, 2, 11), nor with the validation seed 47101's
TEST_SEED = 48451

OPTIONS = {
    "model_dir": (None, "the hand model to add gestures to (`classmap hand-model --out`; its bank must keep its "
                        "statistics: built by this version)"),
    "gestures": (6, "new hand shapes added (at most the 6 of bench/gesture_takes.py)"),
    "record_seconds": (5.0, "seconds of the one recorded take of each gesture"),
    "test_seconds": (3.0, "seconds of each fresh test take"),
    "fps": (15.0, "frames per second of the takes"),
    "frame": ("320x240", "frame size WxH"),
    "record_seed": (48001, "first seed of the recorded takes (training data, never scored)"),
    "test_seed": (TEST_SEED, "seed of the test part: fresh takes, the 81 shapes' videos, the 2430 classes' crops"),
    "clean_takes": (2, "fresh clean-style takes of each gesture"),
    "camera_takes": (1, "fresh camera-style takes of each gesture"),
    "shape_videos": (2, "bench scan's test videos of the 81 shapes (14 key poses each)"),
    "methods": ("brute_force,classmap", "methods, comma-separated"),
    "candidates": ("1:-:sum,1:-:fair,9:75:sum,9:75:fair,9:150:sum,9:150:fair,9:40:fair",
                   "crops:rows:rule candidates chosen on validation: crops per recorded frame (1 the scan's box, up to "
                   "9 with the reader's shifted re-crops), rows the crops count as in the ridge solve ('-': one each), "
                   "the reader's rule for a one-class gesture (sum or fair)"),
    "validation_seed": (47101, "seed of the validation takes the choice is made on"),
    "validation_shape_videos": (2, "shape videos of the validation part (seeds validation_seed + 900 + k)"),
}


def _said_shapes(rec, method: str, frames, reader=None, scanner=None) -> list[str | None]:
    """The shape read on every frame (None: no hand), the Run panel's way: scan, then read along the track."""
    from ..core.detect.reading import HandReader
    from ..core.detect.scanner import Scanner

    sc = scanner or Scanner(rec, method)
    rd = reader or HandReader(rec, method)
    rd.reset()
    out = []
    for frame in frames:
        r = rd.read(frame, sc.scan(frame))
        out.append(r.shape if r.found else None)
    return out


def _crop_shapes(rec, method: str, images: np.ndarray, rule: str = "sum") -> list[str | None]:
    """The shape read on each crop, as the app reads one crop (the scan found it; shapes by their classes)."""
    from ..core.detect.reading import HandReader, read_probabilities

    rd = HandReader(rec, method)
    X = np.ascontiguousarray(rec.transform(images), np.float32)
    if method == "brute_force":
        S = X @ rd.W.T + rd.b
        every = np.arange(S.shape[1])
        parts = [(every, S[i]) for i in range(len(S))]
    else:
        pr = rec.classmap.predict_result(X, bank=rec.classifier)
        parts = [(np.asarray(pr.top_classes[i]), np.asarray(pr.top_scores[i], np.float64)) for i in range(len(X))]
    out = []
    for c, s in parts:
        got = read_probabilities(rd.probabilities([(c, s)]), rd.groups, rd.group_names, rd.orient, rule=rule)
        out.append(got.shape if got.found else None)
    return out


def _class_crops(rec, seed: int, should_stop: StopFn):
    """One clean-style crop per hand class of the model (framed as the model reads them), their true shapes."""
    from ..core.data.hand_pose import generate_hand_pose
    from ..core.data.hand_style import STYLES
    from ..core.detect.window_crops import crops_for

    drawn, size = crops_for(rec, STYLES["clean"])
    ims = generate_hand_pose(images_per_class=1, style=drawn, size=size, seed=int(seed), n_jobs=-1,
                             should_stop=should_stop)
    return ims.images, [ims.class_names[i].partition(" · ")[0] for i in ims.labels]


def _shape_frames(seeds, size) -> tuple[list, list[str]]:
    """The key-pose frames of bench scan's test videos of ``seeds`` and their true shapes."""
    from ..core.detect.choice import validation_video

    frames, truth = [], []
    for seed in seeds:
        for frame, label, _ in validation_video(seed, size):
            if label is not None:
                frames.append(frame)
                truth.append(label[0])
    return frames, truth


def _accuracy(truth, said) -> float:
    return float(np.mean([a == b for a, b in zip(truth, said)]))


def run(*, progress: ProgressFn = None, should_stop: StopFn = None, **options) -> dict:
    """Run the benchmark; returns the JSON-able result (see the module docstring): the adding candidate chosen on the
    validation part first (seed ``validation_seed``, its own takes and one shape video), then the test part."""
    from ..core.errors import ConfigError
    from ..core.progress import sub_progress

    opt = {k: v[0] for k, v in OPTIONS.items()}
    opt.update(options)
    candidates = [parse_candidate(c) for c in str(opt["candidates"]).split(",") if c.strip()]
    if int(opt["validation_seed"]) == int(opt["test_seed"]):
        raise ConfigError("bench add-gesture: the validation seed must differ from the test seed")
    tried = {}
    for k, c in enumerate(candidates if len(candidates) > 1 else []):
        val = {**opt, **c, "test_seed": int(opt["validation_seed"]), "shape_videos": int(opt["validation_shape_videos"])}
        tried[c["name"]] = _measure(val, sub_progress(progress, 0.5 * k / len(candidates),
                                                      0.5 * (k + 1) / len(candidates), f"validation, {c['name']}"),
                                    should_stop)
    chosen = candidates[0] if not tried else next(c for c in candidates if c["name"] == _choose(tried))
    out = _measure({**opt, **chosen}, sub_progress(progress, 0.5 if tried else 0.0, 1.0, "test"), should_stop)
    rows = sorted({c["rows"] for c in candidates if c["rows"] is not None})
    out["choices"] = {"adding": {
        "chosen": chosen["name"], "candidates": [c["name"] for c in candidates],
        "split": f"validation takes of seed {opt['validation_seed']} ({opt['validation_shape_videos']} shape "
                 "video(s) of seeds validation_seed + 900 + k, the 2430 classes' crops of seed validation_seed)",
        "rule": f"among candidates whose gestures take at most {MAX_TAKEN:.0%} of the shape videos' key frames and "
                f"change the 2430 classes' accuracy by at most {MAX_DROP} points (both methods), the best mean over "
                "the methods of (clean recall + camera recall) / 2; else the one taking fewest",
        "at_edge": bool(tried) and chosen["rows"] is not None and len(rows) > 1 and chosen["rows"] in (rows[0], rows[-1]),
        "scores": {name: {m: {"recall_clean_mean": v["recall_clean_mean"], "recall_camera_mean": v["recall_camera_mean"],
                              "taken_by_gestures": v["shape_videos"]["taken_by_gestures"],
                              "classes_2430_change_points": v["classes_2430"]["change_points"]}
                          for m, v in r["methods"].items()} for name, r in tried.items()}},
        "other": "the model's scan and reading settings as saved (chosen on its validation videos)"}
    out["validation_seed"] = int(opt["validation_seed"])
    return out


def parse_candidate(text: str) -> dict:
    """``"crops:rows:rule"`` as ``{"name", "record_crops", "rows", "rule"}``; ConfigError naming the fault."""
    from ..core.detect.reading import GROUP_RULES
    from ..core.errors import ConfigError

    parts = str(text).strip().split(":")
    try:
        crops, rows, rule = int(parts[0]), None if parts[1] == "-" else float(parts[1]), parts[2]
    except (ValueError, IndexError):
        raise ConfigError(f"bench add-gesture: candidate {text!r} is not crops:rows:rule (e.g. 9:150:fair)") from None
    if not 1 <= crops <= 9 or (rows is not None and not rows > 0) or rule not in GROUP_RULES:
        raise ConfigError(f"bench add-gesture: candidate {text!r}: crops 1..9, rows positive or '-', rule one of "
                          f"{', '.join(GROUP_RULES)}")
    return {"name": str(text).strip(), "record_crops": crops, "rows": rows, "rule": rule}


#: a candidate whose gestures take more of the validation shape videos' frames than this is refused
MAX_TAKEN = 0.02
#: a candidate that lowers the 2430 classes' validation accuracy by more points than this is refused
MAX_DROP = 0.5


def _choose(tried: dict) -> str:
    """The candidate with the best mean over the methods of (clean + camera recall) / 2 among those taking at most
    :data:`MAX_TAKEN` of the other shapes' frames and losing at most :data:`MAX_DROP` points on the 2430 classes
    (else the one taking fewest)."""
    def taken(r):
        return max(v["shape_videos"]["taken_by_gestures"] for v in r["methods"].values())

    def drop(r):
        return max(-v["classes_2430"]["change_points"] for v in r["methods"].values())

    def recall(r):
        return float(np.mean([(v["recall_clean_mean"] + (v["recall_camera_mean"] or 0.0)) / 2
                              for v in r["methods"].values()]))

    ok = [c for c, r in tried.items() if taken(r) <= MAX_TAKEN and drop(r) <= MAX_DROP]
    return max(ok, key=lambda c: recall(tried[c])) if ok else min(tried, key=lambda c: taken(tried[c]))


def _measure(opt: dict, progress: ProgressFn = None, should_stop: StopFn = None) -> dict:
    """One run of the module docstring's steps on ``opt["test_seed"]``'s part."""
    from ..core.detect.gesture_crops import hand_crops
    from ..core.detect.reading import HandReader
    from ..core.detect.scanner import Scanner
    from ..core.errors import ConfigError
    from ..core.recogniser import Recogniser
    from .gesture_takes import BASE_ORIENTATION, GESTURES, gesture_pose, take_frames

    if not opt["model_dir"]:
        raise ConfigError("bench add-gesture: --model-dir names the hand model (classmap hand-model --out FOLDER)")
    K = int(opt["gestures"])
    if not 1 <= K <= len(GESTURES):
        raise ConfigError(f"bench add-gesture: gestures must be 1..{len(GESTURES)}, got {K}")
    w, h = (int(v) for v in str(opt["frame"]).lower().split("x"))
    methods = [m.strip() for m in str(opt["methods"]).split(",") if m.strip()]
    test_seed, fps = int(opt["test_seed"]), float(opt["fps"])
    t_start, load_before = time.perf_counter(), machine()["load_average"]
    gestures = GESTURES[:K]
    report(progress, 0.0, "rendering the takes")
    recorded = [take_frames(gesture_pose(code), int(opt["record_seed"]) + i, size=(h, w), fps=fps,
                            seconds=float(opt["record_seconds"]))[0] for i, (_, code) in enumerate(gestures)]
    tests = {}
    for i, (name, code) in enumerate(gestures):
        for style, n in (("clean", int(opt["clean_takes"])), ("camera", int(opt["camera_takes"]))):
            for j in range(n):
                check_stop(should_stop)
                seed = test_seed + 100 * i + 10 * (style == "camera") + j
                tests.setdefault(name, {}).setdefault(style, []).append(
                    take_frames(gesture_pose(code), seed, style=style, size=(h, w), fps=fps,
                                seconds=float(opt["test_seconds"]))[0])
    video_seeds = [test_seed + 900 + k for k in range(int(opt["shape_videos"]))]
    shape_frames, shape_truth = _shape_frames(video_seeds, (h, w))
    base = Recogniser.load(opt["model_dir"])
    crops, crop_truth = _class_crops(base, test_seed, should_stop)
    file_bytes = _model_bytes(opt["model_dir"])
    names = [g[0] for g in gestures]
    out_methods = {}
    for mi, method in enumerate(methods):
        report(progress, 0.1 + 0.9 * mi / len(methods), f"{method}: recording and adding")
        rec = Recogniser.load(opt["model_dir"])
        before = _crop_shapes(rec, method, crops, opt["rule"])
        scanner = Scanner(rec, method)
        added, seconds = [], []
        for (name, _), frames in zip(gestures, recorded):
            found = hand_crops(rec, frames, scanner=scanner, shifts=int(opt["record_crops"]), should_stop=should_stop)
            t0 = time.perf_counter()                   # the last recorded frame's crop is taken
            res = rec.add_class(name, found.crops, rows=opt["rows"])
            scanner, reader = Scanner(rec, method), HandReader(rec, method, rule=opt["rule"])
            first = tests[name]["clean"][0][0]
            said = reader.read(first, scanner.scan(first))
            seconds.append(time.perf_counter() - t0)
            added.append({**res.to_json(), "frames": len(frames), "no_hand_frames": len(found.skipped),
                          "named_on_next_frame": said.shape})
        report(progress, 0.1 + 0.9 * (mi + 0.5) / len(methods), f"{method}: fresh takes")
        recall = {}
        for name in names:
            recall[name] = {}
            for style, takes in tests[name].items():
                said = [s for t in takes
                        for s in _said_shapes(rec, method, t, HandReader(rec, method, rule=opt["rule"]), scanner)]
                recall[name][style] = {"recall": float(np.mean([s == name for s in said])), "frames": len(said),
                                       "named_as": _counts(said)}
        said_shapes = _said_shapes(rec, method, shape_frames, HandReader(rec, method, rule=opt["rule"]), scanner)
        after = _crop_shapes(rec, method, crops, opt["rule"])
        out_methods[method] = {
            "added": added,
            "seconds_last_frame_to_named": {"each": seconds, "median": float(np.median(seconds)),
                                            "max": float(np.max(seconds))},
            "recall": recall,
            "recall_clean_mean": float(np.mean([recall[n]["clean"]["recall"] for n in names])),
            "recall_camera_mean": float(np.mean([recall[n]["camera"]["recall"] for n in names]))
            if int(opt["camera_takes"]) else None,
            "recall_clean_min": float(np.min([recall[n]["clean"]["recall"] for n in names])),
            "shape_videos": {"frames": len(said_shapes), "taken_by_gestures": float(np.mean([s in names for s in said_shapes])),
                             "shape_accuracy": _accuracy(shape_truth, said_shapes)},
            "classes_2430": {"crops": len(crops), "shape_accuracy_before": _accuracy(crop_truth, before),
                             "shape_accuracy_after": _accuracy(crop_truth, after),
                             "change_points": 100 * (_accuracy(crop_truth, after) - _accuracy(crop_truth, before)),
                             "taken_by_gestures": float(np.mean([s in names for s in after]))},
        }
        if mi == 0:
            file_bytes[f"with_{K}_gestures"] = _saved_bytes(rec)
    bf, cm = out_methods.get("brute_force"), out_methods.get("classmap")
    return {
        "bench": "add-gesture", "test_seed": test_seed, "record_seeds": [int(opt["record_seed"]) + i for i in range(K)],
        "shape_video_seeds": video_seeds, "options": opt,
        "gestures": [{"name": n, "code": c} for n, c in gestures], "base_orientation": list(BASE_ORIENTATION),
        "methods": out_methods,
        "classmap_minus_brute_force_recall_points": None if not (bf and cm) else
        100 * (cm["recall_clean_mean"] - bf["recall_clean_mean"]),
        "model_file_bytes": file_bytes,
        "load_average_before": load_before, "load_average_after": machine()["load_average"],
        "seconds": time.perf_counter() - t_start,
    }


def _counts(said) -> dict:
    names, counts = np.unique([str(s) for s in said], return_counts=True)
    order = np.argsort(-counts)[:5]
    return {str(names[i]): int(counts[i]) for i in order}


def _model_bytes(folder) -> dict:
    """The model folder's size in bytes: ``{"model": total}``."""
    from pathlib import Path

    return {"model": sum(f.stat().st_size for f in Path(folder).iterdir() if f.is_file())}


def _saved_bytes(rec) -> int:
    """The size of ``rec`` saved (its kept crops included), in a temporary folder removed after."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="add-gesture-") as tmp:
        return _model_bytes(rec.save(f"{tmp}/model"))["model"]
