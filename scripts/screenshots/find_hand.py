"""Make the hand-model screenshots and the Train panel's speed column, at 1366x768 (the most common laptop
screen), the way a person opens and runs them:

    PYTHONPATH=. .venv/bin/python scripts/screenshots/find_hand.py --model DIR     # every picture below
    PYTHONPATH=. .venv/bin/python scripts/screenshots/find_hand.py --only train    # the Train panel alone

``DIR``: the model ``classmap hand-model`` built (by default where the app looks for it), opened with
File > Get the hand-pose model, with the scan and reading settings it carries. Writes

* ``run-hand-model.png``, ``run-hand-model-unsure.png``, ``run-hand-model-no-hand.png``: the Run panel on the
  shipped demo video, paused on the first frame it reads *sure*, *unsure* and *no hand* (the empty scene
  between the takes, or a held hand the model misses: shown as it is); a state the model never reaches in the
  video is reported (a model never sure of it: ``run-hand-model.png`` is its first reading of a hand);
* ``find-hand.png``: Find the hand on the find-hand video, both methods' frames/s measured live;
* ``explore-hand-model.png``: Explore on the hand model (Compute views);
* ``train-speed.png``: the Train panel on a new 64x64 colour project with k-means features chosen, once the
  speed column has measured every feature map on this computer.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(os.environ.get("CLASSMAP_SCREENSHOTS") or ROOT / "docs" / "screenshots")  # where the PNGs go
SIZE = (1366, 768)


def _window(app):
    from classmap_gui.gui.mainwindow import MainWindow

    win = MainWindow()
    win.setProperty("no_confirm", True)
    win.resize(*SIZE)
    win.show()
    return win


def train_speed(app, out: Path) -> None:
    """The Train panel of a new project with k-means features, its speed column measured."""
    from classmap_gui.gui.driving import settle, wait_until

    win = _window(app)
    win.new_project((64, 64), colour=True)
    win.train.apply_settings({"features": "kmeans", "features_params": {}, "bank": "ova-ridge", "bank_params": {},
                              "classmap": None, "test_fraction": 0.2, "seed": 0})
    win.show_panel("train")
    col = win.train.settings_view.speed
    wait_until(app, lambda: not col.busy and len(col.results) == len(col.names), 900)
    settle(app, 0.5)
    win.grab().save(str(out))
    print(f"wrote {out}: " + ", ".join(f"{n} {r.get('fps', 0):.0f} fps" for n, r in col.results.items()))
    win.close()


def hand_model(app, args) -> int:
    from classmap_gui.gui.driving import settle, wait_until
    from classmap_gui.gui.hand_model import get_hand_model

    win = _window(app)
    if not get_hand_model(win, ask=False):
        print("could not open the hand model")
        return 1
    wait_until(app, lambda: not win.runner.busy, 600)
    r = win.run
    # the Run panel's picture shows a sure reading; a model never sure of the video (a tiny one, whose capture box's
    # validation readings were never right often enough) shows its first reading of a hand instead, and says so
    written: set[str] = set()
    for states, name in ((("sure",), "run-hand-model.png"), (("unsure",), "run-hand-model-unsure.png"),
                         (("no hand",), "run-hand-model-no-hand.png"), (("sure", "unsure"), "run-hand-model.png")):
        if name in written:
            continue
        state = " or ".join(states)
        r.add_source("video", str(ROOT / "resources" / "demo-hands.avi"))
        r.start()                                                 # real time, as a person watches it
        ok = wait_until(app, lambda states=states: r.frames_shown >= 20 and r.reading.reading is not None
                        and r.reading.state in states, args.state_timeout)
        r.pause_btn.setChecked(True)
        settle(app, 0.6)
        if ok:
            win.grab().save(str(HERE / name))
            written.add(name)
            print(f"wrote {HERE / name}: {r.reading.text()}")
        else:
            print(f"the model read no frame of the demo video as {state!r} in {args.state_timeout:g} s: {name} not written")
        r.stop()

    win.show_panel("explore")
    settle(app)
    win.explore.compute()
    wait_until(app, lambda: not win.runner.busy, 600)
    settle(app, 0.8)
    win.grab().save(str(HERE / "explore-hand-model.png"))
    print(f"wrote {HERE / 'explore-hand-model.png'}: {win.explore.info.text()}")

    win.show_panel("run")
    r.add_source("video", str(ROOT / "resources" / "demo-find-hand.avi"))
    r.find_btn.click()
    fh = r.find_hand
    fh.start()
    wait_until(app, lambda: fh.frames_shown >= 20, 300)
    fh.method_btns["brute_force"].click()                         # measure both methods live
    wait_until(app, lambda: "brute_force" in (fh.stream.rates if fh.stream else {}) and fh.frames_shown >= 35, 300)
    fh.method_btns["classmap"].click()
    m = fh.frames_shown
    ok = wait_until(app, lambda: fh.frames_shown >= m + 10 and fh.reading.reading is not None
                    and fh.reading.reading.found, 300)
    rates = dict(fh.stream.rates)
    win.grab().save(args.out_find)                                # this frame, before another arrives
    print(f"wrote {args.out_find} (named: {ok}, {fh.reading.text()}; frames/s {rates})")
    fh.stream.stop()
    settle(app, 0.5)
    win.run.stop()
    win.close()
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", help="the hand model folder (default: where the app looks for it)")
    ap.add_argument("--only", choices=("train", "hand"), help="only the Train panel, or only the hand model's")
    ap.add_argument("--out-find", default=str(HERE / "find-hand.png"))
    ap.add_argument("--state-timeout", type=float, default=120.0,
                    help="seconds the Run panel plays the demo video waiting for each reading (sure, unsure, no hand)")
    args = ap.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if args.model:
        os.environ["CLASSMAP_HAND_MODEL"] = str(Path(args.model).resolve())
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    if args.only != "hand":
        train_speed(app, HERE / "train-speed.png")
    return 0 if args.only == "train" else hand_model(app, args)


if __name__ == "__main__":
    sys.exit(main())
