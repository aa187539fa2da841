"""A person's first session, driven through the widgets they touch (clicks, key presses, held buttons):

New project (image size, grey) -> three classes -> capture each from the shipped demo video with the
default settings (½× speed, no count-down, 10 frames/s): Pause video, select the class, hold ● (the video
plays while held) until the README's 20 frames, release (the count stops; the video pauses again) ->
train (no "too few bursts" warning: a video's frames make bursts where the picture changes) -> Run on
the video -> Explore ->
Save -> quit -> reopen -> Export to a new folder -> the exported predict.py on a folder with a
broken file. Small images and short captures keep it to seconds of work.
"""
import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QDialogButtonBox, QFileDialog, QInputDialog, QLineEdit

from classmap_gui.core.data.hand_video import KEY_POSES, demo_labels
from classmap_gui.gui.demo import DEMO_VIDEO, demo_video
from classmap_gui.gui.dialogs import NewProjectDialog
from gui_drive import save_as

CLASSES = ("fist", "flat hand", "peace")
#: the demo video's pose a person records for each class
POSE_OF = {"fist": "A", "flat hand": "B", "peace": "V"}
KEY_SHAPES = [k[0] for k in KEY_POSES]


def _hold_counts(labels: list) -> list:
    """Per frame, how many holds of its pose came before (each take holds every key pose once): the take."""
    seen: dict = {}
    out, prev = [], None
    for lab in labels:
        if lab is not None and lab != prev:
            seen[lab] = seen.get(lab, -1) + 1
        out.append(None if lab is None else seen[lab])
        prev = lab
    return out


def _type(qtbot, widget, text):
    widget.setFocus()
    qtbot.keyClick(widget, Qt.Key_A, Qt.ControlModifier)  # select what is there, then type over it
    qtbot.keyClicks(widget, text)


def _click(qtbot, widget):
    qtbot.mouseClick(widget, Qt.LeftButton)


def _tab(qtbot, win, name):
    bar = win.tabs.tabBar()
    i = [win.tabs.tabText(k) for k in range(win.tabs.count())].index(name)
    qtbot.mouseClick(bar, Qt.LeftButton, pos=bar.tabRect(i).center())
    assert win.tabs.currentIndex() == i


def _idle(qtbot, win, timeout=120000):
    qtbot.waitUntil(lambda: not win.runner.busy, timeout=timeout)


def _png_count(folder: Path) -> int:
    return len(list(folder.glob("*.png"))) if folder.exists() else 0


@pytest.fixture
def env(tmp_path, monkeypatch):
    from classmap_gui.gui import project as project_mod

    monkeypatch.setattr(project_mod, "default_capture_root", lambda: tmp_path / "captures")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    old = os.umask(0o022)
    yield tmp_path
    os.umask(old)


def _window(qtbot):
    from classmap_gui.gui.mainwindow import MainWindow

    win = MainWindow()
    # a failed step can leave unsaved work: the closing at teardown must not wait on "discard changes?"
    qtbot.addWidget(win, before_close_func=lambda w: w.setProperty("no_confirm", True))
    win.show()
    qtbot.waitExposed(win)
    return win


def test_first_session_from_new_project_to_exported_predictor(qtbot, env, dialogs):
    tmp = env
    assert demo_video() is not None and demo_video().name == DEMO_VIDEO  # shipped in resources/
    win = _window(qtbot)

    # -- File > New project asks for the image size and grey or colour
    def new_project(dlg):
        _type(qtbot, dlg.format.side, "32")
        _click(qtbot, dlg.format.grey)
        _click(qtbot, dlg.buttons.button(QDialogButtonBox.Ok))
    dialogs.next(NewProjectDialog, new_project)
    win.act_new.trigger()
    dialogs.check()
    p = win.project
    assert p.imageset is not None and p.imageset.image_size == (32, 32) and not p.imageset.is_color
    assert "*" not in win.windowTitle()

    # -- three classes through Add class…
    d = win.dataset
    for name in CLASSES:
        def give_name(dlg, name=name):
            edit = dlg.findChild(QLineEdit)
            qtbot.keyClicks(edit, name)
            qtbot.keyClick(edit, Qt.Key_Return)
        dialogs.next(QInputDialog, give_name)
        _click(qtbot, d.add_btn)
        dialogs.check()
    assert p.class_names == list(CLASSES) and "*" in win.windowTitle()

    # -- capture each class from the demo video, listed out of the box, with the default settings
    cap = d.capture
    assert DEMO_VIDEO in cap.sources.current_text()
    assert cap.countdown.text() == "none" and cap.playback.speed.currentText().startswith("½×")
    _click(qtbot, cap.start_btn)
    qtbot.waitUntil(lambda: cap.latest_crop is not None, timeout=10000)
    video = cap.stream.source
    labels = demo_labels()
    takes = _hold_counts(labels)
    # each pose comes round in three takes (another place, size, light, background): a burst from each
    for take in range(3):
        for row, name in sorted(enumerate(CLASSES), key=lambda rn: KEY_SHAPES.index(POSE_OF[rn[1]])):
            first = next(f for f, (lab, t) in enumerate(zip(labels, takes))
                         if lab is not None and lab[0] == POSE_OF[name] and t == take)
            # watch the preview until the pose is on screen (the video plays on, and loops)
            qtbot.waitUntil(lambda first=first: first + 1 <= video.position <= first + 4, timeout=90000)
            _click(qtbot, cap.playback.pause_btn)  # the pose is on screen: stop there
            assert cap.playback.pause_btn.isChecked()
            item = d.classes.item(row)
            qtbot.mouseClick(d.classes.viewport(), Qt.LeftButton, pos=d.classes.visualItemRect(item).center())
            assert d.current_class() == row
            folder = tmp / "captures" / name
            before = _png_count(folder)
            qtbot.mousePress(cap.record_btn, Qt.LeftButton)
            # the README's twenty, in three bursts
            qtbot.waitUntil(lambda folder=folder, before=before: _png_count(folder) >= before + 7, timeout=20000)
            assert "release to stop" in cap.record_btn.text()
            # the last class is let go of away from the button: the hold ends wherever the pointer is
            at = QPoint(-40, -40) if row == 2 else cap.record_btn.rect().center()
            qtbot.mouseRelease(cap.record_btn, Qt.LeftButton, pos=at)
            n = _png_count(folder)
            qtbot.wait(700)  # ten more frames' worth of time
            assert _png_count(folder) == n, "frames kept coming after the button was released"
            assert p.imageset.counts()[row] == n >= before + 7 and cap.record_btn.text() == "● Hold to record"
            assert f"Recorded {n - before} frame(s) into {name!r}" in cap.status.text()
            _click(qtbot, cap.playback.pause_btn)  # play on to the next pose
    assert all(c >= 20 for c in p.imageset.counts())
    groups = p.imageset.groups
    for row in range(3):                                   # three takes: three bursts at least per class
        assert len(set(groups[p.imageset.labels == row].tolist())) >= 3
    _click(qtbot, cap.start_btn)  # stop the preview
    qtbot.waitUntil(lambda: cap.stream is None, timeout=5000)

    # -- train with the settings proposed for three small classes (no ClassMap, and the reason shown)
    _tab(qtbot, win, "Train")
    t = win.train
    assert "ClassMap off" in t.settings_view.advice.text() and not t.settings_view.cm_box.isChecked()
    _click(qtbot, t.train_btn)
    _idle(qtbot, win)
    assert p.recogniser is not None, win.runner.last_error
    # every class has bursts of its own to test on: no warning that its accuracy flatters
    assert "grouped by capture burst" in t.split_note.text() and not t.split_warning, t.split_note.text()
    assert t.figures["accuracy"].text().endswith("%") and t.per_class.rowCount() == 3
    assert [t.per_class.item(r, 1).text() for r in range(3)] == list(CLASSES)  # the matrix's order
    ticks = t.results.conf_plot.getAxis("bottom")._tickLevels[0]
    assert [label for _pos, label in ticks] == ["fist", "flat hand", "peace"]

    # -- Run on the demo video, at full speed
    _tab(qtbot, win, "Run")
    r = win.run
    assert DEMO_VIDEO in r.sources.current_text()
    _click(qtbot, r.full_speed)
    _click(qtbot, r.start_btn)
    qtbot.waitUntil(lambda: r.stream is None, timeout=60000)
    assert "end of video" in r.last_message and r.frames_shown > 50
    assert r.winner.text() in CLASSES and r.fps_label.text() != "– frames/s"

    # -- Explore
    _tab(qtbot, win, "Explore")
    _click(qtbot, win.explore.compute_btn)
    _idle(qtbot, win)
    assert win.explore.data is not None, win.runner.last_error
    qtbot.waitUntil(lambda: win.explore.cands.rowCount() >= 1, timeout=10000)  # drawn over two turns of the loop
    assert "without ClassMap" in win.explore.info.text()   # says why there is no map (and offers to train with it)

    # -- the minute-by-minute autosave of the unsaved work has run once (as it would by now)
    win.autosaver.interval = 0
    win._autosave_tick()
    _idle(qtbot, win)
    assert len(win.autosaver.pending()) == 1

    # -- File > Save: the dialog starts in the home folder with a name; type one, click Save
    saved = tmp / "home" / "hands.cmproj"

    def check_and_save(dlg):
        assert Path(dlg.directory().absolutePath()) == tmp / "home"
        assert dlg.findChild(QLineEdit, "fileNameEdit").text().endswith(".cmproj")
        save_as(qtbot, saved)(dlg)
    dialogs.next(QFileDialog, check_and_save)
    win.act_save.trigger()
    dialogs.check()
    _idle(qtbot, win)
    assert saved.is_file(), win.runner.last_error
    assert saved.stat().st_mode & 0o777 == 0o644  # the user's umask, not private
    assert "*" not in win.windowTitle()

    # -- quit, start again: no autosave offered, the project is in File > Open recent
    win.act_quit.trigger()
    qtbot.waitUntil(lambda: not win.isVisible(), timeout=10000)
    win2 = _window(qtbot)
    assert win2.autosaver.pending() == [] and not win2.offer_recovery()  # saved: nothing to recover
    recent = win2.recent_menu.actions()
    assert recent and recent[0].text() == str(saved)
    recent[0].trigger()
    _idle(qtbot, win2)
    p2 = win2.project
    assert p2.class_names == list(CLASSES) and p2.recogniser is not None, win2.runner.last_error
    _idle(qtbot, win2)  # the reopened recogniser is evaluated on its held-out images

    # -- File > Export into a folder that does not exist yet
    out = tmp / "home" / "exports" / "hands-export"
    dialogs.next(QFileDialog, save_as(qtbot, out))
    win2.act_export.trigger()
    dialogs.check()
    _idle(qtbot, win2)
    assert (out / "predict.py").is_file(), win2.runner.last_error
    assert out.stat().st_mode & 0o777 == 0o755 and (out / "model.json").stat().st_mode & 0o777 == 0o644

    # -- the exported predictor on a folder with one broken file
    batch = tmp / "batch"
    batch.mkdir()
    ims = p2.imageset
    good = []
    for c in range(3):
        f = batch / f"{CLASSES[c].replace(' ', '_')}.png"
        cv2.imwrite(str(f), ims.images[np.flatnonzero(ims.labels == c)[0]])
        good.append(f)
    broken = batch / "broken.png"
    broken.write_bytes(b"not an image")
    files = sorted(str(f) for f in batch.iterdir())
    res = subprocess.run([sys.executable, str(out / "predict.py"), *files, "--top", "2"],
                         capture_output=True, text=True, timeout=120)
    lines = [ln for ln in res.stdout.splitlines() if ln.strip()]
    for f in good:  # every readable image has its result
        assert any(ln.startswith(str(f)) and any(c in ln for c in CLASSES) for ln in lines), res.stdout + res.stderr
    assert not any(ln.startswith(str(broken)) for ln in lines)
    err = [ln for ln in res.stderr.splitlines() if "broken.png" in ln]
    assert len(err) == 1, res.stderr
    assert res.returncode == 1, res.stderr
    win2.close()


def test_find_the_hand_without_then_with_a_background_class(qtbot, env):
    # a model of a few hand poses and no background class: Find the hand says why its boxes land on clutter and
    # adds the class in one click; the boxes' colours are explained under the frame
    from classmap_gui.core.data.hand_pose import generate_hand_pose
    from classmap_gui.core.data.imageset import BACKGROUND_CLASS
    from classmap_gui.gui.demo import FIND_HAND_VIDEO

    win = _window(qtbot)
    win.project.reset(generate_hand_pose(shapes="5,A,V", orientations=2, images_per_class=30, name="poses"))
    win.train.apply_settings({"features": "hog", "features_params": {}, "bank": "ova-ridge", "bank_params": {"alpha": 10.0},
                              "classmap": {"d": 3, "p": 2, "embedding": "boosted", "refine": "v2"},
                              "test_fraction": 0.2, "seed": 0})
    _tab(qtbot, win, "Train")
    _click(qtbot, win.train.train_btn)
    _idle(qtbot, win)
    assert win.project.recogniser is not None and BACKGROUND_CLASS not in win.project.recogniser.class_names
    _tab(qtbot, win, "Run")
    _click(qtbot, win.run.find_btn)
    fh = win.run.find_hand
    assert fh.warning.isVisible() and "no \"background\" class" in fh.warning.text() and fh.add_bg_btn.isVisible()
    assert "runner-up" in fh.legend.text()                       # the yellow second box, explained
    combo = win.run.sources.combo
    combo.setCurrentIndex(next(i for i in range(combo.count()) if FIND_HAND_VIDEO in combo.itemText(i)))
    _click(qtbot, fh.start_btn)
    qtbot.waitUntil(lambda: fh.frames_shown >= 3, timeout=60000)
    _click(qtbot, fh.start_btn)
    qtbot.waitUntil(lambda: fh.stream is None, timeout=10000)

    _click(qtbot, fh.add_bg_btn)                                 # the one-click fix: background added, retrained
    qtbot.waitUntil(lambda: not win.runner.busy and win.project.recogniser is not None
                    and BACKGROUND_CLASS in win.project.recogniser.class_names, timeout=180000)
    assert not fh.warning.isVisible() and not fh.add_bg_btn.isVisible()
    assert win.project.imageset.counts()[win.project.class_names.index(BACKGROUND_CLASS)] >= 300
    _tab(qtbot, win, "Run")
    _click(qtbot, fh.start_btn)
    qtbot.waitUntil(lambda: fh.frames_shown >= 3, timeout=60000)
    _click(qtbot, fh.start_btn)
    assert fh.reading.shape.text() in ("no hand", "5", "A", "V")
