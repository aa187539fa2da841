"""The ``classmap-gui`` command: the desktop app, plus scripted modes for screenshots and self-tests.

    classmap-gui [PROJECT] [--demo]
    classmap-gui --screenshot out.png [--panel dataset|train|run|explore] [--demo]
    classmap-gui --self-test
"""
from __future__ import annotations

import argparse
import os
import sys
import time


def _parse(argv):
    ap = argparse.ArgumentParser(prog="classmap-gui", description="ClassMap Studio, the desktop app.")
    ap.add_argument("project", nargs="?", help="a project folder to open")
    ap.add_argument("--demo", action="store_true",
                    help="open the built-in demo (with --screenshot: also train it and compute the views)")
    ap.add_argument("--screenshot", metavar="PATH", help="save a PNG of the window and exit")
    ap.add_argument("--panel", choices=("dataset", "train", "run", "explore"), default="dataset",
                    help="the panel to show for --screenshot")
    ap.add_argument("--video", metavar="FILE", help="with --screenshot --panel run: run on this video first")
    ap.add_argument("--size", default="1280x800", help="window size for --screenshot, WxH")
    ap.add_argument("--data", metavar="NAME", help="with --screenshot: the built-in set to use instead of the demo")
    ap.add_argument("--features", choices=("kmeans",), help="with --screenshot: train the demo with k-means features")
    ap.add_argument("--self-test", action="store_true",
                    help="offscreen: load the demo, train a small model, predict, exit 0 when it works")
    return ap.parse_args(argv)


def _wait(app, cond, timeout: float = 600.0) -> bool:
    from PySide6.QtCore import QEventLoop

    t0 = time.monotonic()
    while not cond():
        if time.monotonic() - t0 > timeout:
            return False
        app.processEvents(QEventLoop.AllEvents, 50)
        time.sleep(0.01)
    return True


def _settle(app, seconds: float = 0.3) -> None:
    _wait(app, lambda: False, timeout=seconds)


def self_test() -> int:
    """Load the demo, train a small model, predict; 0 when predictions beat chance clearly."""
    if not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtWidgets import QApplication

    import numpy as np

    from ..core.data import load_dataset
    from ..core.views import test_part
    from ..core.training import TrainConfig, train
    from .demo import demo_dataset, demo_settings
    from .mainwindow import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    win = MainWindow()
    win.show()
    t0 = time.perf_counter()
    # The demo set with the demo's own settings (features, bank, ClassMap), on its first 40 classes so
    # the check takes seconds: it exercises the same code a person's first click does.
    name = demo_dataset()
    full = load_dataset(name)
    ims = full.select_classes(np.arange(min(40, full.n_classes)))
    settings = demo_settings(name)
    if settings.get("classmap"):
        settings["classmap"] = dict(settings["classmap"], d=8, p=6)
    cfg = TrainConfig.from_dict(settings)
    res = train(ims, cfg)
    test = test_part(ims, cfg)  # the held-out images train() reported on
    pred = res.recogniser.predict(res.recogniser.prepare(test.images), top=3)
    acc = float(np.mean(pred.labels == test.labels))
    win.project.set_trained(res.recogniser, res.report)
    _settle(app, 0.2)
    win.setProperty("no_confirm", True)  # the trained project is unsaved: no "discard?" dialog to block on
    win.close()
    ok = acc > 0.5 and pred.top_classes.shape == (len(test), 3)
    print(f"self-test {'passed' if ok else 'FAILED'}: {name}, {ims.n_classes} classes, {len(ims)} images, "
          f"test accuracy {100 * acc:.1f}%, {time.perf_counter() - t0:.1f} s")
    return 0 if ok else 1


def screenshot(args) -> int:
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
        _wait(app, lambda: not win.runner.busy)
    else:
        name = args.data or demo_dataset()
        win.train.apply_settings(demo_settings(name, args.features))
        win.dataset.load_builtin(name)
        _wait(app, lambda: not win.runner.busy)
        if args.demo:
            win.train.start_training()
            _wait(app, lambda: not win.runner.busy)
    if args.panel == "explore" and win.project.recogniser is not None:
        win.show_panel("explore")
        _settle(app)
        win.explore.compute()
        _wait(app, lambda: not win.runner.busy)
        win.explore.choose(3)
    if args.panel == "run" and win.project.recogniser is not None and args.video:
        win.run.add_source("video", args.video)
        win.show_panel("run")
        win.run.start()  # real time, so the frame counter has run for a while when the picture is taken
        _wait(app, lambda: win.run.frames_shown >= 75, timeout=60)
        win.run.pause_btn.setChecked(True)
        _settle(app, 0.6)
    if args.panel == "dataset" and args.video and win.project.imageset is not None:
        win.dataset.classes.setCurrentRow(0)
        win.dataset.capture.countdown.setValue(0)
        win.dataset.capture.choose_video(args.video)
        win.dataset.capture.start_preview()
        _wait(app, lambda: win.dataset.capture.latest_crop is not None, timeout=20)
        _settle(app, 0.5)
    win.show_panel(args.panel)
    _settle(app, 0.5)
    ok = win.grab().save(args.screenshot)
    win.setProperty("no_confirm", True)
    win.close()
    print(f"saved {args.screenshot}" if ok else f"could not save {args.screenshot}")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    if args.self_test:
        return self_test()
    if args.screenshot:
        return screenshot(args)
    from PySide6.QtWidgets import QApplication

    from .demo import demo_dataset, demo_settings
    from .mainwindow import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("ClassMap Studio")
    win = MainWindow()
    win.show()
    if args.project:
        win.open_project(args.project)
    elif not win.offer_recovery():
        name = demo_dataset()
        win.train.apply_settings(demo_settings(name, args.features))
        win.load_demo()
    return app.exec()


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
