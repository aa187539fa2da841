"""The README's live-map screenshot and clip: the demo video on the Run panel, its frames on the t-SNE map
of a 2430-class hand-pose model.

    PYTHONPATH=. .venv/bin/python scripts/screenshots/make_live.py MODEL [SHAPES ORIENTATIONS]

MODEL: a ClassMap model of all hand-pose classes (``classmap train --data hand-pose ... --classmap ...``,
see make_explore.py; any images-per-class will do). Builds the window offscreen with a few generated images
per class for the map's dots, presses Compute views, chooses t-SNE coloured by yaw, starts the demo video
at its own rate and switches to Explore; grabs the window every 1/4 s for 12 s into ``docs/live-map.mp4``
(scaled to 800 pixels wide, at the pace grabbed) and saves ``live-map.png`` on the first frame whose true
class the filter kept once 15 labelled frames are counted.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(os.environ.get("CLASSMAP_SCREENSHOTS") or ROOT / "docs" / "screenshots")  # where the PNGs go


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import cv2
    from PySide6.QtGui import QImage
    from PySide6.QtWidgets import QApplication

    from classmap_gui.core.data.hand_pose import generate_hand_pose
    from classmap_gui.core.recogniser import Recogniser
    from classmap_gui.gui.driving import settle, wait_until
    from classmap_gui.gui.mainwindow import MainWindow

    rec = Recogniser.load(sys.argv[1])
    app = QApplication.instance() or QApplication([])
    few = [int(v) for v in sys.argv[2:4]]  # SHAPES ORIENTATIONS: a model of fewer classes (a smoke run)
    ims = generate_hand_pose(images_per_class=2, size=rec.image_size, seed=11, shapes=few[0] if few else None,
                             orientations=few[1] if few else None)
    win = MainWindow()
    win.setProperty("no_confirm", True)
    win.resize(1600, 1000)
    win.show()
    win.project.reset(ims)
    win.project.set_trained(rec, None, split=(None, ims))
    wait_until(app, lambda: not win.runner.busy)
    ex = win.explore
    win.show_panel("explore")
    ex.compute()
    wait_until(app, lambda: not win.runner.busy and ex.data is not None)
    ex.mode.setCurrentIndex(ex.mode.findData("tsne"))
    wait_until(app, lambda: not win.runner.busy)
    ex.colour_by.setCurrentIndex(max(0, ex.colour_by.findText("yaw")))
    settle(app, 0.5)
    print(f"map ready, load {os.getloadavg()[0]:.1f}", flush=True)
    win.run.full_speed.setChecked(False)
    win.run.start()
    win.show_panel("explore")
    frames, shot, fallback = [], None, None
    t0 = time.perf_counter()
    for k in range(48):
        settle(app, 0.03)  # a grab can take longer than a tick on a loaded machine: let the window run anyway
        wait_until(app, lambda: time.perf_counter() - t0 >= k / 4)
        img = win.grab().toImage()
        rgb = img.convertToFormat(QImage.Format_RGB888)
        frames.append(np.frombuffer(rgb.constBits(), np.uint8).reshape(rgb.height(), rgb.bytesPerLine())
                      [:, :3 * rgb.width()].reshape(rgb.height(), rgb.width(), 3).copy())
        last = ex.live.last
        if shot is None and last is not None and last.rank > 0 and last.tally.sum() >= 15:
            if last.rank <= len(last.candidates):  # the true class ringed: the usual case, shown
                img.save(str(HERE / "live-map.png"))
                shot = k
            elif fallback is None:
                fallback = img
    if shot is None and fallback is not None:
        fallback.save(str(HERE / "live-map.png"))
    fps = len(frames) / (time.perf_counter() - t0)  # the clip plays at the pace it was grabbed
    win.run.stop()
    h, w = frames[0].shape[:2]
    size = (800, int(round(h * 800 / w)) // 2 * 2)
    out = HERE.parent / "live-map.mp4"
    vw = cv2.VideoWriter(str(out), cv2.VideoWriter_fourcc(*"mp4v"), fps, size)
    for f in frames:
        vw.write(cv2.cvtColor(cv2.resize(f, size, interpolation=cv2.INTER_AREA), cv2.COLOR_RGB2BGR))
    vw.release()
    print(f"screenshot at frame {shot}; {len(frames)} frames at {fps:.1f}/s; {out} {out.stat().st_size / 1e6:.2f} MB; live updates "
          f"{ex.live.updates}; load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
