"""Make ``docs/screenshots/find-hand.png``: the Run panel's Find the hand on the shipped find-hand video.

    PYTHONPATH=. .venv/bin/python docs/screenshots/find_hand.py [--model DIR]

The model: hand-pose-small (250 classes) generated with the detection framing jitter of ``bench scan``,
a background class of 3000 generated crops plus 3000 false alarms mined by a first model (Dalal-Triggs
bootstrap), HOG + ova-ridge + ClassMap (d 45, p 20, v3, reference penalty 30), trained through the
product's train path. ``--model DIR`` reuses (or, if missing, saves) it.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def train_model():
    import numpy as np

    from classmap_gui.core.data.hand_pose import SMALL_SHAPES, generate_hand_pose
    from classmap_gui.core.data.hand_style import CLEAN
    from classmap_gui.core.detect.background import background_images, hard_negatives, with_background
    from classmap_gui.core.training import TrainConfig, train

    style = dataclasses.replace(CLEAN, shift_jitter=0.06, scale_jitter=0.1)
    ims = generate_hand_pose(shapes=",".join(SMALL_SHAPES), orientations=10, images_per_class=20, style=style,
                             n_jobs=-1, name="hand-pose-small")
    cfg = TrainConfig(features="hog", features_params={"n_jobs": -1}, bank="ova-ridge",
                      classmap={"d": 45, "p": 20, "refine": "v3", "reference_penalty": 30},
                      test_fraction=0.15, classmap_fraction=0.15)
    bg = background_images(3000, seed=5)
    first = train(with_background(ims, bg), cfg).recogniser
    bg = np.concatenate([bg, hard_negatives(first, 3000, seed=11)])
    return train(with_background(ims, bg), cfg).recogniser


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", help="model folder to reuse (trained and saved there when missing)")
    ap.add_argument("--out", default=str(HERE / "find-hand.png"))
    ap.add_argument("--background-weight", type=float, help="the scan's background weight (bench scan's validation "
                    "choice for its model); stored in the model's metadata for the panel")
    ap.add_argument("--detector-weight", type=float, help="the hand detector's weight in the window score (bench "
                    "scan's validation choice); stored in the model's metadata for the panel")
    ap.add_argument("--sides", help="the scan's window sides, comma-separated (bench scan's validation choice); stored "
                    "in the model's metadata for the panel")
    args = ap.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from classmap_gui.core.recogniser import Recogniser
    from classmap_gui.gui.driving import settle, wait_until
    from classmap_gui.gui.mainwindow import MainWindow

    if args.model and (Path(args.model) / "model.json").is_file():
        rec = Recogniser.load(args.model)
    else:
        rec = train_model()
        if args.model:
            rec.save(args.model)
    detection = dict(rec.metadata.get("detection", {}))
    if args.background_weight is not None:
        detection["background_weight"] = args.background_weight
    if args.detector_weight is not None:
        detection["detector_weight"] = args.detector_weight
    if args.sides:
        detection["sides"] = [float(v) for v in args.sides.split(",")]
    rec.metadata["detection"] = detection
    app = QApplication.instance() or QApplication([])
    win = MainWindow()
    win.setProperty("no_confirm", True)
    win.resize(1280, 800)
    win.show()
    win.project.reset(None, recogniser=rec)
    win.show_panel("run")
    win.run.add_source("video", str(ROOT / "resources" / "demo-find-hand.avi"))
    win.run.find_btn.click()
    fh = win.run.find_hand
    fh.start()
    wait_until(app, lambda: fh.frames_shown >= 20, 300)
    fh.method_btns["brute_force"].click()                       # measure both methods live
    wait_until(app, lambda: "brute_force" in (fh.stream.rates if fh.stream else {}) and fh.frames_shown >= 35, 300)
    fh.method_btns["classmap"].click()
    n = fh.frames_shown
    # a frame with the hand found and its pose held, for the picture
    ok = wait_until(app, lambda: fh.frames_shown >= n + 10 and fh.last_result is not None
                    and fh.last_result.hand_found and fh.cands.rowCount() > 0, 300)
    rates = dict(fh.stream.rates)
    win.grab().save(args.out)                                     # this frame, before another arrives
    fh.stream.stop()
    settle(app, 0.5)
    print(f"wrote {args.out} (hand found: {ok}; frames/s {rates})")
    win.run.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
