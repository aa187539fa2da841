"""Screenshot of the Run panel on the 10^5-class hand-pose model that ``bench scale --data hand-pose`` saved.

    PYTHONPATH=. .venv/bin/python scripts/screenshots/make_scale.py MODEL_DIR CACHE_FOLDER [OUT.png]

Opens the model with File > Open model (memory-mapped weights; the load time is printed), runs it on
test images of the generated set (positions 6-7 of a few classes, written as PNG files to a temporary
folder) one step at a time, and saves the window.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main(model: str, cache: str, out: str) -> int:
    from PySide6.QtWidgets import QApplication

    from classmap_gui.core.data.hand_chunks import open_hand_pose_memmap
    from classmap_gui.gui.driving import settle, wait_until
    from classmap_gui.gui.mainwindow import MainWindow

    data = open_hand_pose_memmap(cache)
    rng = np.random.default_rng(7)
    classes = np.sort(rng.choice(data.n_classes, 12, replace=False))
    folder = Path(tempfile.mkdtemp(prefix="classmap-hands-"))
    for c in classes:
        shape = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in data.class_names[c].split(" · ")[0])
        cv2.imwrite(str(folder / f"true-{shape}-{c:06d}.png"), np.asarray(data.images[c * data.images_per_class + 6]))
    app = QApplication.instance() or QApplication([])
    win = MainWindow()
    win.setProperty("no_confirm", True)
    win.resize(1280, 800)
    win.show()
    t0 = time.perf_counter()
    win.open_model(model)
    wait_until(app, lambda: not win.runner.busy, timeout=120)
    print(f"model opened in {time.perf_counter() - t0:.1f} s (window, list of {data.n_classes} class names included)")
    if win.project.recogniser is None:
        print("could not open the model:", win.runner.last_error)
        return 1
    win.run.add_source("folder", str(folder))
    win.run.top.setValue(8)
    win.run.pause_btn.setChecked(True)
    win.run.full_speed.setChecked(True)
    win.run.start()
    for k in range(len(classes)):
        win.run.step_btn.click()
        wait_until(app, lambda k=k: win.run.frames_shown >= k + 1, timeout=60)
    settle(app, 0.5)
    print(win.run.timings.text())
    ok = win.grab().save(out)
    win.run.stop()
    win.close()
    print(f"saved {out}" if ok else f"could not save {out}")
    return 0 if ok else 1


if __name__ == "__main__":
    a = sys.argv[1:]
    shots = Path(os.environ.get("CLASSMAP_SCREENSHOTS") or Path(__file__).resolve().parents[2] / "docs" / "screenshots")
    sys.exit(main(a[0], a[1], a[2] if len(a) > 2 else str(shots / "run-hand-pose-100k.png")))
