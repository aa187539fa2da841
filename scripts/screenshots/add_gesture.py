"""Make the README's *Add your own gesture* screenshots, at 1366x768, the way a person adds one:

    PYTHONPATH=. .venv/bin/python scripts/screenshots/add_gesture.py --model DIR

``DIR``: a hand model ``classmap hand-model`` built (it must keep its ridge statistics: built by this version). It
is copied to a temporary folder first, so the gesture is added to the copy, never to ``DIR``. A rendered video of
a gesture that is none of the 81 shapes (:mod:`classmap_gui.core.data.gesture_video`: index, middle and little
finger up, ring finger down, thumb out) plays as the camera on the Run panel; *Add a gesture…*, the name, the
3-2-1 countdown and the recording run on the panel's own timers. Writes

* ``add-gesture.png``: the recording, the hand boxed by the scan, the strip of recorded crops filling;
* ``add-gesture-named.png``: the Run panel naming the new gesture once it was added.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(os.environ.get("CLASSMAP_SCREENSHOTS") or ROOT / "docs" / "screenshots")  # where the PNGs go
SIZE = (1366, 768)
CODE, NAME = "EEFE/s/out", "three-up"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True, help="the hand model folder (copied; never changed)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for each step")
    args = ap.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from classmap_gui.core.data.gesture_video import FILL, write_gesture_video
    from classmap_gui.gui.driving import settle, wait_until
    from classmap_gui.gui.mainwindow import MainWindow

    app = QApplication.instance() or QApplication([])
    tmp = Path(tempfile.mkdtemp(prefix="classmap-gesture-"))
    try:
        model = shutil.copytree(args.model, tmp / "model")
        video = tmp / "gesture.avi"
        write_gesture_video(video, CODE, seconds=20.0)
        win = MainWindow()
        win.setProperty("no_confirm", True)
        win.resize(*SIZE)
        win.show()
        win.open_model(str(Path(model) / "model.json"))
        wait_until(app, lambda: not win.runner.busy, args.timeout)
        r, g = win.run, win.run.gesture
        r.add_source("video", str(video))
        r.region.setValue(round(100 * FILL))                      # the Box round the hand
        r.start()
        wait_until(app, lambda: r.frames_shown >= 5, args.timeout)
        g.add_btn.click()
        g.name.setText(NAME)
        g.record_btn.click()
        t0 = time.perf_counter()
        wait_until(app, lambda: g.phase == "recording", args.timeout)
        wait_until(app, lambda: g.strip.count() >= 18 or g.phase != "recording", args.timeout)
        settle(app, 0.2)
        win.grab().save(str(HERE / "add-gesture.png"))
        print(f"wrote {HERE / 'add-gesture.png'}: {g.strip.count()} crops, {g.last_message}")
        wait_until(app, lambda: g.phase == "review", args.timeout)
        t_last = time.perf_counter()
        g.finish_btn.click()
        wait_until(app, lambda: g.phase == "idle" and not win.runner.busy, args.timeout)
        print(g.last_message)
        ok = wait_until(app, lambda: r.reading.reading is not None and r.reading.reading.found
                        and r.reading.reading.shape == NAME, args.timeout)
        t_named = time.perf_counter()
        settle(app, 0.3)
        win.grab().save(str(HERE / "add-gesture-named.png"))
        print(f"wrote {HERE / 'add-gesture-named.png'} (named: {ok}; {r.reading.text()}); "
              f"{t_named - t_last:.1f} s from the last recorded frame to named, {t_named - t0:.1f} s from Record")
        r.stop()
        win.close()
        return 0 if ok else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
