"""Make ``docs/screenshots/run-hand-model.png`` and ``docs/screenshots/find-hand.png`` from the deployed hand model:
the Run panel naming the hand's shape on the shipped demo video, and Find the hand on the find-hand video.

    PYTHONPATH=. .venv/bin/python scripts/screenshots/find_hand.py --model DIR

``DIR``: the model ``classmap hand-model`` built (by default where the app looks for it), opened the way a
person opens it (File > Get the hand-pose model), with the scan and reading settings it carries.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(os.environ.get("CLASSMAP_SCREENSHOTS") or ROOT / "docs" / "screenshots")  # where the PNGs go


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", help="the hand model folder (default: where the app looks for it)")
    ap.add_argument("--out-run", default=str(HERE / "run-hand-model.png"))
    ap.add_argument("--out-find", default=str(HERE / "find-hand.png"))
    ap.add_argument("--confidence", type=float, default=0.5, help="the Run screenshot waits for a reading this sure")
    ap.add_argument("--wait", type=float, default=300.0, help="seconds to wait for each moment to shoot")
    args = ap.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if args.model:
        os.environ["CLASSMAP_HAND_MODEL"] = str(Path(args.model).resolve())
    from PySide6.QtWidgets import QApplication

    from classmap_gui.gui.driving import settle, wait_until
    from classmap_gui.gui.hand_model import get_hand_model
    from classmap_gui.gui.mainwindow import MainWindow

    app = QApplication.instance() or QApplication([])
    win = MainWindow()
    win.setProperty("no_confirm", True)
    win.resize(1280, 800)
    win.show()
    if not get_hand_model(win, ask=False):
        print("could not open the hand model")
        return 1
    wait_until(app, lambda: not win.runner.busy, 600)
    r = win.run
    r.add_source("video", str(ROOT / "resources" / "demo-hands.avi"))
    r.start()                                                     # real time, as a person watches it
    n = [0]

    def held():   # a frame whose shape is named, some way into the video
        rd = r.reading.reading
        n[0] += 1
        return r.frames_shown >= 40 and rd is not None and rd.found and rd.confidence >= args.confidence
    wait_until(app, held, args.wait)
    r.pause_btn.setChecked(True)
    settle(app, 0.6)
    win.grab().save(args.out_run)
    print(f"wrote {args.out_run}: {r.reading.text()}")
    r.stop()

    r.add_source("video", str(ROOT / "resources" / "demo-find-hand.avi"))
    r.find_btn.click()
    fh = r.find_hand
    fh.start()
    wait_until(app, lambda: fh.frames_shown >= 20, args.wait)
    fh.method_btns["brute_force"].click()                         # measure both methods live
    wait_until(app, lambda: "brute_force" in (fh.stream.rates if fh.stream else {}) and fh.frames_shown >= 35,
               args.wait)
    fh.method_btns["classmap"].click()
    m = fh.frames_shown
    ok = wait_until(app, lambda: fh.frames_shown >= m + 10 and fh.reading.reading is not None
                    and fh.reading.reading.found, args.wait)
    rates = dict(fh.stream.rates)
    win.grab().save(args.out_find)                                # this frame, before another arrives
    print(f"wrote {args.out_find} (named: {ok}, {fh.reading.text()}; frames/s {rates})")
    fh.stream.stop()
    settle(app, 0.5)
    win.run.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
