"""``classmap-gui --screenshot out.png --panel NAME [--demo] [--video FILE]``: one panel as a PNG."""
from __future__ import annotations

import os
import sys

from .driving import settle, wait_until


def screenshot(args) -> int:
    """``classmap-gui --screenshot``: render the main window offscreen on one panel and save it as a PNG."""
    if not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtWidgets import QApplication

    from .demo import demo_dataset, demo_settings
    from .mainwindow import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    win = MainWindow()
    w, h = (int(v) for v in args.size.lower().split("x"))
    win.resize(w, h)
    win.show()
    if args.project:
        win.open_project(args.project)
        wait_until(app, lambda: not win.runner.busy)
    else:
        name = args.data or demo_dataset()
        win.dataset.load_builtin(name)
        wait_until(app, lambda: not win.runner.busy)
        if win.project.imageset is None:  # the set could not be read: no screenshot of an empty window
            print(f"classmap-gui: error: --data {name!r} could not be loaded", file=sys.stderr)
            win.setProperty("no_confirm", True)
            win.close()
            return 1
        win.train.apply_settings(demo_settings(name, args.features))
        if args.demo:
            win.train.start_training()
            wait_until(app, lambda: not win.runner.busy)
    if args.panel == "explore" and win.project.recogniser is not None:
        win.show_panel("explore")
        settle(app)
        win.explore.compute()
        wait_until(app, lambda: not win.runner.busy)
        win.explore.choose(3)
    if args.panel == "run" and win.project.recogniser is not None and args.video:
        win.run.add_source("video", args.video)
        win.show_panel("run")
        win.run.start()  # real time, so the frame counter has run for a while when the picture is taken
        wait_until(app, lambda: win.run.frames_shown >= 75, timeout=60)
        win.run.pause_btn.setChecked(True)
        settle(app, 0.6)
    if args.panel == "dataset" and args.video and win.project.imageset is not None:
        win.dataset.classes.setCurrentRow(0)
        win.dataset.capture.countdown.setValue(0)
        win.dataset.capture.choose_video(args.video)
        win.dataset.capture.start_preview()
        wait_until(app, lambda: win.dataset.capture.latest_crop is not None, timeout=20)
        settle(app, 0.5)
    win.show_panel(args.panel)
    settle(app, 0.5)
    ok = win.grab().save(args.screenshot)
    win.setProperty("no_confirm", True)
    win.close()
    print(f"saved {args.screenshot}" if ok else f"could not save {args.screenshot}")
    return 0 if ok else 1
