"""The README's Explore screenshots on hand-pose (2430 classes), from a model trained by the CLI.

    classmap train --data hand-pose --features hog --bank ova-ridge --set bank.alpha=300 \\
        --classmap d=45,p=40,reference_penalty=30 --out /tmp/handpose-model
    PYTHONPATH=. .venv/bin/python scripts/screenshots/make_explore.py /tmp/handpose-model

Opens hand-pose with that model in the app (the Train panel re-evaluates it on its held-out part),
presses Compute views, chooses the t-SNE map, and saves ``explore-tsne-shape.png`` (coloured by hand
shape), ``explore-tsne-yaw.png`` (by yaw), ``explore-class.png`` (a searched class chosen) and
``train-confusions.png`` (the list of top confusions); the class searched is the true class of the
most frequent confusion. Prints the time each step took and the load.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(os.environ.get("CLASSMAP_SCREENSHOTS") or ROOT / "docs" / "screenshots")  # where the PNGs go


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from classmap_gui.core.data import load_dataset
    from classmap_gui.core.recogniser import Recogniser
    from classmap_gui.gui.driving import settle, wait_until
    from classmap_gui.gui.mainwindow import MainWindow

    rec = Recogniser.load(sys.argv[1])
    app = QApplication.instance() or QApplication([])
    win = MainWindow()
    win.setProperty("no_confirm", True)
    win.resize(1600, 1000)
    win.show()
    t0 = time.perf_counter()

    def step(what):
        print(f"{what}: {time.perf_counter() - t0:.1f} s, load {os.getloadavg()[0]:.1f}", flush=True)

    ims = load_dataset(rec.metadata.get("data", "hand-pose"))
    step(f"loaded {len(ims)} images")
    win.project.reset(ims, recogniser=rec, settings=rec.metadata["config"])
    wait_until(app, lambda: not win.runner.busy)
    step("re-evaluated on the held-out part")
    win.show_panel("train")
    win.train.results.conf_tabs.setCurrentIndex(1)
    settle(app, 0.5)
    win.grab().save(str(HERE / "train-confusions.png"))
    win.show_panel("explore")
    ex = win.explore
    ex.compute()
    wait_until(app, lambda: not win.runner.busy)
    step("computed views")
    ex.mode.setCurrentIndex(ex.mode.findData("tsne"))
    wait_until(app, lambda: not win.runner.busy)
    step("t-SNE map")
    for kind in ("shape", "yaw"):
        ex.colour_by.setCurrentText(kind)
        settle(app, 0.5)
        win.grab().save(str(HERE / f"explore-tsne-{kind}.png"))
    ex.colour_by.setCurrentText("shape")
    # search the class behind the most frequent confusion, typed as a person would
    t, _p = win.train.results.conf_list.pair_at(0)
    ex.detail.search.setText(win.project.class_names[t])
    ex.detail.search.returnPressed.emit()
    settle(app, 0.5)
    win.grab().save(str(HERE / "explore-class.png"))
    step("screenshots saved")
    win.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
