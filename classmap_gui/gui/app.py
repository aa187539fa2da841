"""The ``classmap-gui`` command: the desktop app, plus scripted modes for screenshots and self-tests.

    classmap-gui [PROJECT] [--demo]
    classmap-gui --screenshot out.png [--panel NAME] [--demo]     (NAME: a panel of panel_table.PANELS)
    classmap-gui --self-test

Without a project it reopens the project saved last, or the built-in demo on the first start.
"""
from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path

#: ``--size`` sides: a window larger than an 8K screen's is no screenshot but gigabytes of pixels
WINDOW_SIDES = (200, 8192)


def _parse(argv):
    ap = argparse.ArgumentParser(prog="classmap-gui", description="ClassMap Studio, the desktop app.")
    ap.add_argument("project", nargs="?", help="a project folder or .cmproj file to open")
    ap.add_argument("--demo", action="store_true",
                    help="open the built-in demo (with --screenshot: also train it and compute the views)")
    ap.add_argument("--screenshot", metavar="PATH", help="save a PNG of the window and exit")
    from .panel_table import panel_names
    ap.add_argument("--panel", choices=panel_names(), default=panel_names()[0],
                    help="the panel to show for --screenshot")
    ap.add_argument("--video", metavar="FILE", help="with --screenshot --panel run: run on this video first")
    ap.add_argument("--size", default="1280x800", help="window size for --screenshot, WxH")
    ap.add_argument("--data", metavar="NAME", help="with --screenshot: the built-in set to use instead of the demo")
    ap.add_argument("--features", choices=("kmeans",), help="with --screenshot: train the demo with k-means features")
    ap.add_argument("--self-test", action="store_true",
                    help="offscreen: load the demo, train a small model, predict, exit 0 when it works")
    return ap.parse_args(argv)


def check_args(args) -> str | None:
    """What is wrong with the options, in one line naming the option (as ``classmap`` refuses its own), or
    None. Checked before any window exists: a giant ``--size`` cannot allocate its pixels, a ``--data``
    that names nothing cannot end in a screenshot of something else with exit status 0."""
    low, high = WINDOW_SIDES
    parts = args.size.lower().replace("×", "x").split("x")
    if len(parts) != 2 or not all(p.strip().isdigit() and low <= int(p) <= high for p in parts):
        return f"--size {args.size!r}: expects WxH with sides from {low} to {high} (e.g. 1280x800)"
    if args.data is not None:
        from ..core.data.builtin import builtin_datasets

        names = [d.name for d in builtin_datasets()]
        if args.data not in names and not Path(args.data).expanduser().is_dir():
            return f"--data {args.data!r}: neither a built-in set ({', '.join(names)}) nor a folder"
    for option, value in (("--video", args.video), ("project", args.project)):
        if value is not None and not Path(value).expanduser().exists():
            return f"{option} {value!r}: no such file or folder"
    return None


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``classmap-gui``: self-test, screenshot, or the main window (with the demo or a project)."""
    args = _parse(sys.argv[1:] if argv is None else argv)
    problem = check_args(args)
    if problem is not None:
        print(f"classmap-gui: error: {problem}", file=sys.stderr)
        return 2
    if args.self_test:
        from .selftest import self_test
        return self_test()
    if args.screenshot:
        from .screenshot import screenshot
        return screenshot(args)
    from PySide6.QtWidgets import QApplication

    from . import errorlog
    from .mainwindow import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("ClassMap Studio")
    errorlog.setup()
    win = MainWindow()
    win.show()
    settle_heap()
    open_at_start(win, args)
    code = app.exec()
    from .threads import exit_code
    return exit_code(code)


def settle_heap() -> None:
    """Collect once, then freeze what start-up left alive out of Python's cyclic garbage collector: the
    imported libraries and the window are some 254 000 objects that live as long as the process, and a full
    collection over them took 170-200 ms on the 2-core machine, holding the window (and every thread) that
    long each time one came due. Frozen, a full collection scans only what came later (opening the demo
    added 260 objects: 0.3 ms). Called before any project opens, so a project's objects stay collectable."""
    gc.collect()
    gc.freeze()


def open_at_start(win, args) -> str:
    """What the window opens (``make run`` and a plain ``classmap-gui``): the project named, else an autosave
    the person chose to recover, else the project saved last (that still exists), else the built-in demo
    (the first start, or ``--demo``). Returns which: "project", "recovered", "recent" or "demo"."""
    from .demo import open_demo

    if args.project:
        win.dataset.summary.setText(f"Opening {args.project}…")
        win.open_project(args.project)
        return "project"
    if win.offer_recovery():
        return "recovered"
    recent = win.recent.list() if win.recent is not None and not args.demo else []
    if recent:
        win.dataset.summary.setText(f"Opening {recent[0]}…")
        win.open_project(str(recent[0]))
        return "recent"
    open_demo(win, args.features)
    return "demo"

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
