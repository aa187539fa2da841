"""``classmap bench demo-reading``: how often the Run panel names the hand's shape on the shipped demo video.

The video (``resources/demo-hands.avi``) is read frame by frame as the Run panel reads it (OpenCV, BGR to RGB,
its centred capture box at ``region`` of the shorter side, a window network's context repeated around it, the
recogniser's ``top`` candidates, :class:`..core.detect.reading.CropReading`); each frame's truth is the
generator's (:func:`..core.data.hand_video.demo_timeline`: the take, the key pose held or none while the hand
moves, whether the hand is in view). Reported per take and per key pose: the fraction of its frames whose
shape is named right (the issue's target: 90 % for every one), read as "no hand", named wrong but shown as
sure (from the model's ``capture_unsure_below`` on the capture box, ``unsure_below`` on the scan's path); and the
empty scenes between takes read as "no hand". Two readings of the same candidates: each frame alone (``history`` 1: what the Run panel shows) and over the model's ``history``
(chosen on validation videos by ``bench scan``); and every classifier's candidates (``brute_force``: where the
ClassMap filter loses the right shape, it reads better; and with the background class left out, as the scan's
reader reads a hand it found, ``brute_force_hand_classes``). ``find_hand_path``: the demo video read by *Find the hand*'s
path instead (what the Run panel's one crop loses). ``find_hand``: the shipped ``demo-find-hand.avi``
read as *Find the hand* reads it (the scan, then the reader along the hand's track), per key pose; its frames
while the hand changes pose count as "moving". The demo videos are a test part: nothing is chosen on
it here. ``--test-seed S`` reads the demo's takes rendered afresh at seed ``S`` instead (the same key poses in
other scenes and noise: a test part no revision has seen); the model's ``no_hand_margin`` (chosen on
demo-style videos of other seeds and poses, :mod:`..core.detect.capture`) applies to every reading.
"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from ..core.errors import ConfigError, DataError
from ..core.progress import ProgressFn, StopFn, check_stop, report, sub_progress
from .common import machine

OPTIONS = {
    "model_dir": (None, "the hand model folder (default: the one the app built)"),
    "video": (None, "the demo video (default: the shipped resources/demo-hands.avi)"),
    "test_seed": (None, "render the demo's takes afresh at this seed (other scenes and noise, the same key poses) "
                        "and read them instead of the shipped video (its seed: 0)"),
    "region": (1.0, "the Run panel's capture box, a fraction of the frame's shorter side (its slider: 100 %)"),
    "top": (5, "candidates per frame (the Run panel's top spin box)"),
    "batch": (64, "frames classified together (a speed setting only)"),
}
#: the shipped video's render seed (``hand_video.write_demo_video``'s): the test part this bench reads
TEST_SEED = 0


def shipped_video() -> Path:
    """``resources/demo-hands.avi`` beside the package (a checkout) or inside it (an installed bundle)."""
    here = Path(__file__).resolve().parents[1]
    for p in (here.parent / "resources" / "demo-hands.avi", here / "resources" / "demo-hands.avi"):
        if p.is_file():
            return p
    raise DataError("the demo video resources/demo-hands.avi is not there: pass --video PATH")


def read_video(path: Path, region: float) -> np.ndarray:
    """``(F, s, s, 3) uint8``: each frame's centred capture box, RGB, as :class:`..gui.camera.FrameStream` cuts it."""
    from ..core.detect.capture import capture_crop

    cap = cv2.VideoCapture(str(path))
    frames = []
    try:
        while True:
            ok, bgr = cap.read()
            if not ok:
                break
            frames.append(capture_crop(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), region))
    finally:
        cap.release()
    if not frames:
        raise DataError(f"{path}: no frame could be read (not a video OpenCV can open)")
    return np.stack(frames)


def find_hand_readings(rec, path: Path, method: str, should_stop: StopFn = None) -> list:
    """Each frame of ``path`` read as *Find the hand* reads it: the scan (:class:`..core.detect.scanner.Scanner`)
    finds the hand, :class:`..core.detect.reading.HandReader` names it along its track."""
    from ..core.detect.reading import HandReader
    from ..core.detect.scanner import Scanner

    scanner, reader = Scanner(rec, method), HandReader(rec, method)
    cap = cv2.VideoCapture(str(path))
    out = []
    try:
        while True:
            check_stop(should_stop)
            ok, bgr = cap.read()
            if not ok:
                break
            rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
            out.append(reader.read(rgb, scanner.scan(rgb)))
    finally:
        cap.release()
    return out


def score(readings, timeline, unsure_below: float) -> dict:
    """The table of one reading of every frame (module docstring) against the generator's ``timeline``."""
    from ..core.data.hand_video import TAKES
    from ..core.selection.policy import is_sure

    takes: dict = {}
    moving = {"frames": 0, "no_hand": 0}
    empty = {"frames": 0, "no_hand": 0}
    for rd, (take, pose, in_view) in zip(readings, timeline):
        if not in_view:
            empty["frames"] += 1
            empty["no_hand"] += int(not rd.found)
            continue
        if pose is None:
            moving["frames"] += 1
            moving["no_hand"] += int(not rd.found)
            continue
        shape = pose[0]
        row = takes.setdefault(f"take_{take + 1}", {}).setdefault(
            shape, {"pose": list(pose), "frames": 0, "right": 0, "no_hand": 0, "wrong_sure": 0, "named": {}})
        row["frames"] += 1
        if not rd.found:
            row["no_hand"] += 1
            named = "no hand"
        else:
            named = rd.shape
            row["right"] += int(rd.shape == shape)
            row["wrong_sure"] += int(rd.shape != shape and is_sure(rd.confidence, unsure_below))
        row["named"][named] = row["named"].get(named, 0) + 1
    worst, total, right, wrong_sure, no_hand = 1.0, 0, 0, 0, 0
    for rows in takes.values():
        for row in rows.values():
            row["fraction_right"] = row["right"] / row["frames"]
            worst = min(worst, row["fraction_right"])
            total, right = total + row["frames"], right + row["right"]
            wrong_sure, no_hand = wrong_sure + row["wrong_sure"], no_hand + row["no_hand"]
    met = [f"{t} {s}" for t, rows in takes.items() for s, r in rows.items() if r["fraction_right"] >= 0.9]
    return {"per_take": takes, "key_pose_frames": total, "fraction_right": right / max(1, total),
            "worst_key_pose_fraction": worst, "key_poses_at_90": len(met),
            "key_poses": sum(len(r) for r in takes.values()), "no_hand_while_posed": no_hand,
            "wrong_but_sure": wrong_sure, "moving": moving, "empty_scene": empty, "takes": len(TAKES)}


def run(*, progress: ProgressFn = None, should_stop: StopFn = None, **options) -> dict:
    """Read the demo video as the Run panel does; returns the JSON-able table (module docstring)."""
    from ..core.recogniser import Recogniser

    opt = {k: v[0] for k, v in OPTIONS.items()}
    opt.update(options)
    if opt["model_dir"] in (None, "", "none"):
        raise ConfigError("bench demo-reading reads with a built hand model: build it once with `classmap "
                          "hand-model` (or File > Get the hand-pose model), or pass --model-dir FOLDER")
    seed = TEST_SEED if opt["test_seed"] in (None, "", "none") else int(opt["test_seed"])
    if seed != TEST_SEED and opt["video"]:
        raise ConfigError("bench demo-reading: --video or --test-seed, not both")
    t0 = time.perf_counter()
    before = machine()
    report(progress, 0.0, "loading the hand model")
    rec = Recogniser.load(opt["model_dir"])
    with tempfile.TemporaryDirectory() as tmp:
        if seed != TEST_SEED:   # fresh takes, written and read back as the shipped video is (MJPG)
            from ..core.data.hand_video import write_demo_video

            report(progress, 0.01, f"rendering the demo's takes at seed {seed}")
            video = Path(tmp) / f"demo-hands-{seed}.avi"
            write_demo_video(video, seed=seed)
        else:
            video = Path(opt["video"]) if opt["video"] else shipped_video()
        report(progress, 0.05, f"reading {video.name}")
        crops = read_video(video, float(opt["region"]))
        out = _read(rec, video, crops, seed, opt, progress, should_stop)
    out.update({"seconds": time.perf_counter() - t0, "machine_before": before, **machine()})
    return out


def _read(rec, video: Path, crops: np.ndarray, seed: int, opt: dict, progress: ProgressFn,
          should_stop: StopFn) -> dict:
    """:func:`run`'s table of ``video`` (its capture-box ``crops``) read with ``rec``."""
    from ..core.data.hand_video import demo_timeline
    from ..core.detect.capture import capture_candidates
    from ..core.detect.reading import CropReading
    from ..core.settings.hand import defaults, model_detection

    timeline = demo_timeline()
    if len(crops) != len(timeline):
        raise DataError(f"{video}: {len(crops)} frames, the demo generator makes {len(timeline)}: not the "
                        "shipped demo video (its truth is unknown)")
    found = capture_candidates(rec, crops, int(opt["top"]), int(opt["batch"]), sub_progress(progress, 0.1, 0.95),
                               should_stop)
    reading = {**defaults("reading"), **(model_detection(rec).get("reading") or {})}
    # the capture box's readings are "sure" from its own threshold (the scan's for Find the hand's readings)
    unsure = float(reading["unsure_below"])
    capture_unsure = unsure if reading.get("capture_unsure_below") is None else float(reading["capture_unsure_below"])
    out = {"video": video.name, "frames": len(crops), "test_seed": seed, "region": float(opt["region"]),
           "top": int(opt["top"]), "classmap": rec.classmap is not None, "reading_settings": reading, "readings": {}}
    # the Run panel's reading (each frame alone), then the same candidates over the model's history, then every
    # classifier's candidates: where the misses come from
    for name, method, history in (("each_frame", "classmap", 1), ("model_history", "classmap", int(reading["history"])),
                                  ("brute_force", "brute_force", 1),
                                  ("brute_force_hand_classes", "brute_force_hands", 1)):
        reader = CropReading(rec, history=history)
        classes, scores = found[method]
        done = [reader.read(c, s) for c, s in zip(classes, scores)]
        out["readings"][name] = {"history": history, "candidates": method, **score(done, timeline, capture_unsure)}
    if rec.classmap is not None:  # the same video through Find the hand's path: what the crop path loses
        report(progress, 0.96, f"finding the hand in {video.name}")
        out["readings"]["find_hand_path"] = {"history": None, "candidates": "scan and re-crops",
                                             **score(find_hand_readings(rec, video, "classmap", should_stop),
                                                     timeline, unsure)}
    # Find the hand on the shipped demo-find-hand.avi: the hand travels across a scene (one pass, no takes)
    from ..core.data.hand_video import find_hand_labels

    fh = video.with_name("demo-find-hand.avi")
    if seed == TEST_SEED and fh.is_file() and rec.classmap is not None:
        report(progress, 0.97, f"finding the hand in {fh.name}")
        done = find_hand_readings(rec, fh, "classmap", should_stop)
        labels = find_hand_labels()
        if len(done) != len(labels):
            raise DataError(f"{fh}: {len(done)} frames, the generator makes {len(labels)}: not the shipped video")
        out["find_hand"] = {"video": fh.name, "method": "classmap",
                            **score(done, [(0, lab, True) for lab in labels], unsure)}
    report(progress, 1.0, "done")
    return out
