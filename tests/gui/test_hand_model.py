"""File > Get the hand-pose model: the app opens the hand model where ``classmap hand-model`` saves it, and the
Run panel then names the hand's shape on the shipped demo video with no training by the person."""
from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

DEMO_SHAPES = "5,B,V,L,Y,A,1"        # shapes the demo video holds (hand_video.KEY_POSES), a small model of them


def test_get_the_hand_model_then_run_names_shapes_on_the_demo_video(qtbot, window, tmp_path, monkeypatch):
    from classmap_gui.core.detect.pose_model import MODEL_ENV, build_hand_model
    from classmap_gui.gui.demo import DEMO_VIDEO

    rec, _ = build_hand_model({"shapes": DEMO_SHAPES, "orientations": 10, "images_per_class": 16, "background": 300,
                               "bootstrap_rounds": 0, "detector_scenes": 30, "p_sweep": "4,8", "d": 8})
    folder = tmp_path / "hand-model"
    rec.save(folder)
    monkeypatch.setenv(MODEL_ENV, str(folder))
    from classmap_gui.gui.demo import open_demo

    win = window
    open_demo(win)                                                 # the first-run demo offers the model
    qtbot.waitUntil(lambda: not win.runner.busy, timeout=60000)
    assert win.hand_model_offer.isVisible() and "hand-pose model" in win.hand_model_offer.text()
    qtbot.mouseClick(win.hand_model_offer, Qt.LeftButton)
    qtbot.waitUntil(lambda: not win.runner.busy, timeout=60000)
    assert win.project.recogniser is not None and win.project.recogniser.n_classes == 71, win.runner.last_error
    assert win.tabs.tabText(win.tabs.currentIndex()).lower().endswith("run")
    assert DEMO_VIDEO in win.run.sources.current_text()
    from classmap_gui.core.data.hand_video import demo_labels

    truth = demo_labels()                                          # the video's key pose, frame by frame
    said = {}

    def on_frame(crop, result, name, frames_read):
        r = win.run.reading.reading
        said[frames_read - 1] = r.shape if r is not None and r.found else None
    win.project.live.frame.connect(on_frame)
    qtbot.mouseClick(win.run.start_btn, Qt.LeftButton)
    seen = []

    def named():
        r = win.run.reading.reading
        if r is not None and r.found:
            seen.append(r.shape)
        return len(set(seen)) >= 3 and max(said, default=0) >= len(truth) // 3
    qtbot.waitUntil(named, timeout=120000)
    qtbot.mouseClick(win.run.start_btn, Qt.LeftButton)            # stop
    keys = [i for i in said if i < len(truth) and truth[i] is not None]
    right = [said[i] == truth[i][0] for i in keys]
    print(f"shape named right in {sum(right)} of {len(keys)} key-pose frames")
    assert len(keys) >= 20 and sum(right) > len(keys) / 2, (sum(right), len(keys))   # most key-pose frames named
    text = win.run.reading.text()
    assert ("confidence" in text or text.startswith("no hand")) and "·" not in win.run.reading.shape.text()  # shape alone
    assert set(seen) <= set(DEMO_SHAPES.split(","))
    assert len(set(seen)) >= 3                                     # the video changes shape: so does the name


def test_without_the_model_the_app_offers_to_build_it_and_builds_nothing_on_no(qtbot, window, tmp_path, monkeypatch):
    from classmap_gui.core.detect.pose_model import MODEL_ENV

    monkeypatch.setenv(MODEL_ENV, str(tmp_path / "none-yet"))
    asked = []

    def answer():
        box = QApplication.activeModalWidget()
        if box is None:
            QTimer.singleShot(20, answer)
            return
        asked.append(box.text())
        qtbot.mouseClick(box.button(QMessageBox.No), Qt.LeftButton)
    QTimer.singleShot(0, answer)
    window.act_hand_model.trigger()                                # File > Get the hand-pose model…
    assert asked and "2430" in asked[0] and "minutes" in asked[0]
    assert not window.runner.busy and not (tmp_path / "none-yet").exists()


def test_the_build_shows_the_whole_builds_time_left_and_whole_stage_names(qtbot, window, tmp_path, monkeypatch):
    """During File > Get the hand-pose model's build the status bar counts down from the build's promised length
    (not a fast first stage's "2 min left"), and names each stage whole on a 1024 px wide window."""
    import threading

    from classmap_gui.core.detect import pose_model
    from classmap_gui.gui import hand_model

    monkeypatch.setenv(pose_model.MODEL_ENV, str(tmp_path / "none-yet"))
    go_on = threading.Event()

    def fake_build(folder, options=None, choice=None, progress=None, should_stop=None):
        progress(0.09, "hand images: generating hand-pose images")     # the first tenth in a few seconds
        go_on.wait(30)
        from classmap_gui.core.errors import Cancelled
        raise Cancelled("stopped on request")
    monkeypatch.setattr(pose_model, "make_hand_model", fake_build)
    win = window
    win.resize(1024, 600)
    offer = hand_model.offer_hand_model(win)

    def answer_yes():
        box = QApplication.activeModalWidget()
        if box is None:
            QTimer.singleShot(20, answer_yes)
            return
        qtbot.mouseClick(box.button(QMessageBox.Yes), Qt.LeftButton)
    QTimer.singleShot(0, answer_yes)
    qtbot.mouseClick(offer, Qt.LeftButton)
    qtbot.waitUntil(lambda: "hand images" in win.progress.stage.text(), timeout=10000)
    minutes = hand_model.BUILD_SECONDS // 60
    assert win.progress.eta.text() in (f"about {minutes} min left", f"about {minutes - 1} min left")
    stage = win.progress.stage
    assert stage.text() == "hand images: generating hand-pose images"
    assert stage.width() >= stage.sizeHint().width() and stage.isVisible()       # not cut
    assert not offer.isVisible()                                                 # the strip has its place
    go_on.set()
    qtbot.waitUntil(lambda: not win.runner.busy, timeout=10000)
    assert offer.isVisible()                                                     # back after the build
