"""Frame rate of the Run panel's stream with the live map on and off, and the live map's update rate.

    PYTHONPATH=. QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/experiments/live_map_bench.py MODEL [--rounds 3]

MODEL: a ClassMap model folder of hand-pose classes (e.g. all 2430). The window is built offscreen, the
Explore map computed (PCA) on a few generated images per class, then the demo video is streamed through
the Run panel at full speed (the stream as fast as the window takes frames) and at its own rate (15
frames/s), rounds alternating live map off / on on the same video. Prints JSON: per run the stream's
frames per second, the live map's updates per second, and the load average before and after.
"""
from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--shapes", type=int, help="the model's first N hand shapes (default all 81: a smoke run uses a few)")
    ap.add_argument("--orientations", type=int, help="N of the 30 orientations (default all)")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    app = QApplication([])
    from classmap_gui.core.data.hand_pose import generate_hand_pose
    from classmap_gui.core.recogniser import Recogniser
    from classmap_gui.gui.mainwindow import MainWindow

    rec = Recogniser.load(a.model)
    ims = generate_hand_pose(images_per_class=2, size=rec.image_size, name="hand-pose", shapes=a.shapes,
                             orientations=a.orientations)
    win = MainWindow()
    win.setProperty("no_confirm", True)
    win.resize(1400, 900)
    win.show()
    win.project.reset(ims)
    win.project.set_trained(rec, None, split=(None, ims.subset(np.arange(0, len(ims), 2))))

    def spin(cond, limit=300.0):
        t0 = time.perf_counter()
        while not cond() and time.perf_counter() - t0 < limit:
            app.processEvents()
            time.sleep(0.002)

    spin(lambda: not win.runner.busy)
    win.show_panel("explore")
    win.explore.compute()
    spin(lambda: win.explore.data is not None)
    live = win.explore.live
    runs = []
    for r in range(a.rounds):
        for full in (True, False):
            for on in ((False, True) if r % 2 == 0 else (True, False)):
                live.on.setChecked(on)
                win.run.full_speed.setChecked(full)
                load0 = os.getloadavg()[0]
                win.run.start()
                t0 = time.perf_counter()
                spin(lambda: win.run.stream is None)
                dt = time.perf_counter() - t0
                runs.append({"live_map": on, "full_speed": full, "frames": win.run.frames_shown,
                             "stream_fps": round(win.run.frames_shown / dt, 2),
                             "live_updates_per_s": round(live.updates / dt, 2) if on else None,
                             "load": [round(load0, 2), round(os.getloadavg()[0], 2)]})
                print(json.dumps(runs[-1]), flush=True)
    summary = {}
    for full in (True, False):
        off = [x["stream_fps"] for x in runs if x["full_speed"] == full and not x["live_map"]]
        on = [x["stream_fps"] for x in runs if x["full_speed"] == full and x["live_map"]]
        upd = [x["live_updates_per_s"] for x in runs if x["full_speed"] == full and x["live_map"]]
        summary["full_speed" if full else "own_rate"] = {
            "stream_fps_off_median": float(np.median(off)), "stream_fps_on_median": float(np.median(on)),
            "drop": round(1 - float(np.median(on)) / float(np.median(off)), 3),
            "live_updates_per_s_median": float(np.median(upd))}
    print(json.dumps({"model": a.model, "summary": summary}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
