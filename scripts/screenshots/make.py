"""Re-make the README screenshots and measure the Run panel's frame rate on a video source.

    .venv/bin/python scripts/screenshots/make.py [--fps-only] [journey] [dataset train run explore explore-kmeans]

``journey``: the README walkthrough in one window — New project (32x32 grey), three classes captured
from the shipped demo video, train, Run on the video, Explore — and a PNG of each panel after it
(``journey-*.png``). The other names: ``classmap-gui --screenshot`` of that panel after a demo training
on hand-pose-small, run on the shipped demo video of a rendered hand (the stand-in for a webcam).
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(os.environ.get("CLASSMAP_SCREENSHOTS") or ROOT / "docs" / "screenshots")  # where the PNGs go


def demo_video_path() -> Path:
    """The shipped demo video (a rendered hand holding hand-pose-small poses in front of clutter)."""
    from classmap_gui.gui.demo import demo_video

    path = demo_video()
    if path is None:
        raise SystemExit("resources/demo-hands.avi is missing: python -m classmap_gui.core.data.hand_video "
                         "resources/demo-hands.avi")
    return path


def measure_fps(video: Path) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from classmap_gui.gui.driving import wait_until as _wait
    from classmap_gui.gui.demo import demo_dataset, demo_settings
    from classmap_gui.gui.mainwindow import MainWindow

    app = QApplication.instance() or QApplication([])
    win = MainWindow()
    win.setProperty("no_confirm", True)
    win.resize(1280, 800)
    win.show()
    name = demo_dataset()
    win.dataset.load_builtin(name)
    _wait(app, lambda: not win.runner.busy)
    win.train.apply_settings(demo_settings(name))
    win.train.start_training()
    _wait(app, lambda: not win.runner.busy)
    print(f"model: {win.project.report.accuracy:.3f} test accuracy, "
          f"{win.project.report.evaluations_per_query:.1f} evaluations/query of {len(win.project.class_names)}")
    win.show_panel("run")
    for full in (True, False):
        win.run.add_source("video", str(video))
        win.run.full_speed.setChecked(full)
        seen = []
        win.run.fps_label.destroyed.connect(lambda: None)
        t0 = time.perf_counter()
        win.run.start()
        _wait(app, lambda: (seen.append(win.run.fps) if win.run.fps else None) or win.run.stream is None, 120)
        dt = time.perf_counter() - t0
        counter = np.array([f for f in seen if f > 0])
        print(f"{'full speed' if full else 'real time (15 fps file)'}: {win.run.frames_shown} frames shown in "
              f"{dt:.2f} s = {win.run.frames_shown / dt:.1f} frames/s end to end; the app's counter read "
              f"median {np.median(counter):.1f}, min {counter.min():.1f} frames/s")
    print("load:", os.getloadavg())
    win.close()


def journey() -> None:
    """The walkthrough a new user follows, with a screenshot of each panel at its end."""
    import tempfile

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from classmap_gui.gui import project as project_mod
    from classmap_gui.gui.driving import settle, wait_until
    from classmap_gui.gui.mainwindow import MainWindow

    tmp = Path(tempfile.mkdtemp(prefix="classmap-journey-"))
    project_mod.default_capture_root = lambda: tmp / "captures"
    app = QApplication.instance() or QApplication([])
    win = MainWindow()
    win.setProperty("no_confirm", True)
    win.resize(1280, 800)
    win.show()
    win.new_project((32, 32))
    d, cap = win.dataset, win.dataset.capture
    cap.start_preview()  # the defaults: the demo video at ½× speed, no count-down
    wait_until(app, lambda: cap.latest_crop is not None, 20)
    for i, name in enumerate(("fist", "flat hand", "peace")):
        d.add_class(name)
        cap.record_btn.held.emit()  # as a hold until the README's 20 frames
        wait_until(app, lambda: len(cap.burst) >= 20, 20)
        cap.record_btn.let_go.emit()
        settle(app, 1.5)
    settle(app, 0.5)
    win.show_panel("dataset")
    settle(app, 0.5)
    win.grab().save(str(HERE / "journey-dataset.png"))
    cap.stop_preview()
    win.show_panel("train")
    win.train.start_training()
    wait_until(app, lambda: not win.runner.busy)
    settle(app, 0.5)
    win.grab().save(str(HERE / "journey-train.png"))
    win.show_panel("run")
    win.run.start()
    wait_until(app, lambda: win.run.frames_shown >= 60, 60)
    win.run.pause_btn.setChecked(True)
    settle(app, 0.5)
    win.grab().save(str(HERE / "journey-run.png"))
    win.run.stop()
    win.show_panel("explore")
    win.explore.compute()
    wait_until(app, lambda: not win.runner.busy)
    settle(app, 0.5)
    win.grab().save(str(HERE / "journey-explore.png"))
    win.close()
    print(f"journey screenshots in {HERE}")


def main() -> int:
    if "journey" in sys.argv[1:]:
        journey()
        if len([a for a in sys.argv[1:] if not a.startswith("--")]) == 1:
            return 0
    video = demo_video_path()
    only = [a for a in sys.argv[1:] if not a.startswith("--") and a != "journey"]
    if not only:
        measure_fps(video)
    if "--fps-only" in sys.argv:
        return 0
    gui = [sys.executable, "-m", "classmap_gui.gui"]
    for panel in [p for p in only if p != "explore-kmeans"] or ([] if only else ["dataset", "train", "run", "explore"]):
        out = HERE / f"{panel}.png"
        cmd = gui + ["--screenshot", str(out), "--panel", panel, "--demo", "--video", str(video)]
        subprocess.run(cmd, check=True, env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))
    # the demo uses HOG; the k-means centroid mosaic is shown on Fashion-MNIST with k-means features
    if not only or "explore-kmeans" in only:
        subprocess.run(gui + ["--screenshot", str(HERE / "explore-kmeans.png"), "--panel", "explore", "--demo",
                              "--data", "fashion-mnist", "--features", "kmeans"], check=True,
                       env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
