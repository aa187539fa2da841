"""The one-click demo model exports (issue 25 item 1), and an error dialog shows all of its text.

The app opens on the built-in demo with its one-click settings (what ``classmap-studio`` does with no
recent project); a person clicks Train, then File > Export recogniser…, names a folder in the file
dialog and runs the exported ``predict.py`` on a picture.
"""
import json
import os
import subprocess
import sys

import cv2
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QLabel
from gui_drive import DialogDriver, save_as

from classmap_gui.gui.demo import demo_dataset, open_demo


def test_the_one_click_demo_model_exports_and_its_predictor_runs(qtbot, window, tmp_path):
    with qtbot.waitSignal(window.runner.finished, timeout=120000):
        open_demo(window)                                    # the app's start-up with no recent project
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=10000)
    assert window.project.imageset is not None
    cm_settings = window.train.settings_view.values()["classmap"]
    if demo_dataset() == "hand-pose-small":                 # the demo model the issue was about
        assert cm_settings.get("reference_penalty", 1.0) != 1.0

    qtbot.mouseClick(window.train.train_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: window.project.recogniser is not None and not window.runner.busy, timeout=300000)
    rec = window.project.recogniser
    assert rec.classmap is not None, window.runner.last_error

    out = tmp_path / "demo-export"
    dialogs = DialogDriver()
    dialogs.next(QFileDialog, save_as(qtbot, out))
    window.act_export.trigger()                              # File > Export recogniser…
    dialogs.check()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=60000)
    assert window.error_box is None or not window.error_box.isVisible(), window.error_box.informativeText()
    assert (out / "predict.py").is_file(), window.runner.last_error

    ims = window.project.imageset
    picture = tmp_path / "one.png"
    cv2.imwrite(str(picture), ims.images[0])
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    res = subprocess.run([sys.executable, "-I", str(out / "predict.py"), str(picture), "--top", "3", "--json"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    top = [c["index"] for c in json.loads(res.stdout)[0]["top"]]
    app = rec.predict(ims.images[:1], top=3)
    assert top == app.top_classes[0].tolist()                # the app's own answer


def test_an_error_dialog_shows_its_whole_long_message(qtbot, window):
    words = " ".join(f"word{i}" for i in range(120))
    long_path = "/a/very/long/" + "folder-name-" * 12 + "end"
    window.show_error("Exporting the recogniser", f"{words} {long_path} and the end of the message.")
    box = window.error_box
    qtbot.waitUntil(box.isVisible)
    label = next(lb for lb in box.findChildren(QLabel) if "end of the message" in lb.text())
    assert label.wordWrap()
    # every line of the text fits the label as laid out: nothing is cut at the dialog's edge
    assert label.heightForWidth(label.width()) <= label.height()
    assert label.geometry().right() <= box.width()
    # and a person can make the box larger to read it
    before = box.size()
    box.resize(before.width() + 300, before.height() + 200)
    qtbot.waitUntil(lambda: box.width() > before.width() and box.height() > before.height(), timeout=2000)
    box.close()
