"""Screenshots of the Runs table and the Capture panel: ``python scripts/screenshots/make_runs.py [OUT]``.

Runs: digits recorded as capture bursts (12 source images per class, 6 near-identical frames each),
trained three ways; the Train panel's Runs tab. Capture: a new hand project recording bursts from the
demo video, with the per-class target and the background class.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
_TMP = tempfile.mkdtemp(prefix="classmap-shots-")  # captures and autosaves go here, not the user's folders
os.environ["XDG_DATA_HOME"], os.environ["XDG_CONFIG_HOME"] = f"{_TMP}/data", f"{_TMP}/config"

from PySide6.QtWidgets import QApplication  # noqa: E402

from classmap_gui.bench.bursts import make_sets  # noqa: E402
from classmap_gui.gui.driving import settle, wait_until  # noqa: E402
from classmap_gui.gui.mainwindow import MainWindow  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def digit_bursts():
    """Digits recorded as bursts, the set of ``classmap bench bursts``."""
    return make_sets()[0]


def main(out: Path) -> None:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    win = MainWindow()
    win.setProperty("no_confirm", True)
    win.resize(1280, 760)
    win.show()
    win.project.reset(digit_bursts())
    for s in ({"features": "pixels", "features_params": {"size": "8x8"}, "bank": "ova-ridge", "classmap": None,
               "seed": 0},
              {"features": "kmeans", "features_params": {"n_centroids": 32, "patch_size": 3, "stride": 1},
               "bank": "ova-liblinear", "classmap": None, "seed": 0},
              {"features": "kmeans", "features_params": {"n_centroids": 64, "patch_size": 3, "stride": 1},
               "bank": "ova-ridge", "classmap": {"d": 4, "p": 3}, "seed": 1}):
        win.train.apply_settings({"test_fraction": 0.25, **s})
        win.train.start_training()
        wait_until(app, lambda: not win.runner.busy)
    win.show_panel("train")
    win.train.right.setCurrentWidget(win.train.runs_view)
    win.train.runs_view.select(2)
    settle(app, 0.5)
    win.grab().save(str(out / "runs.png"))

    win.project.reset(None)
    win.project.new_project((64, 64))
    d, cap = win.dataset, win.dataset.capture
    for name in ("5", "B", "V"):
        d.add_class(name)
    cap.countdown.setValue(0)
    cap.rate.setValue(15)
    cap.target.setValue(40)
    cap.choose_video(str(ROOT / "resources" / "demo-hands.avi"))
    cap.start_preview()
    wait_until(app, lambda: cap.latest_crop is not None, timeout=20)
    cap.add_background()
    for cls, secs in ((0, 2.0), (1, 1.5)):
        d.classes.setCurrentRow(cls)
        cap.press_record()
        t = time.monotonic()
        wait_until(app, lambda: time.monotonic() - t > secs)
        cap.stop_recording()
    win.show_panel("dataset")
    settle(app, 1.0)
    win.grab().save(str(out / "capture.png"))
    cap.shutdown()
    import shutil
    shutil.rmtree(_TMP, ignore_errors=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(os.environ.get("CLASSMAP_SCREENSHOTS") or ROOT / "docs" / "screenshots"))
