"""File > Open model: a saved recogniser without its images opens on the Run panel and runs live."""
import cv2
from PySide6.QtCore import Qt
import numpy as np

from classmap_gui.core.classify.banks.ova import OneVsAllRidge
from classmap_gui.core.features.pixels import PixelFeatures
from classmap_gui.core.recogniser import Recogniser

SHAPES = ("bars", "columns", "cross", "ring")


def test_open_a_model_folder_and_run_it_on_images(qtbot, window, shapes_folder, tmp_path):
    files = [sorted((shapes_folder / k).glob("0*.png"))[:10] for k in SHAPES]  # 10 images of each class train it
    images = np.stack([cv2.imread(str(f), cv2.IMREAD_GRAYSCALE) for fs in files for f in fs])
    labels = np.repeat(np.arange(len(SHAPES)), 10)
    feats = PixelFeatures().fit(images)
    bank = OneVsAllRidge(alpha=10.0).fit(feats.transform(images), labels)
    path = Recogniser(feats, bank, None, list(SHAPES), (24, 24), True).save(tmp_path / "model")

    win = window
    with qtbot.waitSignal(win.runner.finished, timeout=30000):
        assert win.open_model(str(path / "model.json"))
    assert win.project.recogniser is not None, win.runner.last_error
    assert win.tabs.currentWidget() is win.run
    assert win.project.class_names == list(SHAPES) and len(win.project.imageset) == 0
    win.run.add_source("folder", str(shapes_folder / "cross"))
    win.run.pause_btn.setChecked(True)
    win.run.full_speed.setChecked(True)
    assert win.run.start()
    win.run.step_btn.click()
    qtbot.waitUntil(lambda: win.run.frames_shown == 1, timeout=5000)
    assert win.run.winner.text() == "cross"
    assert "classifier evaluations of 4" in win.run.timings.text()
    win.run.stop()


def test_open_model_that_never_finishes_is_cancelled_at_once_and_the_window_stays_usable(qtbot, window, tmp_path,
                                                                                        monkeypatch):
    """Issue 49 item 5: a model whose network never returns (a hostile graph inside onnxruntime) kept
    *Open model* running forever and Cancel did nothing. Cancel now ends it at once; what the stuck load
    returns later never reaches the project."""
    import threading

    path = Recogniser(PixelFeatures().fit(np.zeros((4, 24, 24), np.uint8)),
                      OneVsAllRidge().fit(np.random.default_rng(0).normal(size=(4, 576)).astype(np.float32),
                                          np.arange(4) % 2), None, ["a", "b"], (24, 24), True).save(tmp_path / "m")
    real_load, release, entered = Recogniser.load, threading.Event(), threading.Event()

    def stuck_load(folder, *a, **k):  # a library call no should_stop reaches
        entered.set()
        release.wait(60)
        return real_load(folder, *a, **k)

    monkeypatch.setattr(Recogniser, "load", staticmethod(stuck_load))
    win = window
    before = win.project.class_names
    assert win.open_model(str(path))
    assert entered.wait(10) and win.runner.busy and win.progress.cancel.isEnabled()
    with qtbot.waitSignal(win.runner.cancelled, timeout=2000):
        qtbot.mouseClick(win.progress.cancel, Qt.LeftButton)
    assert not win.runner.busy
    assert "cancelled" in win.statusBar().currentMessage()
    monkeypatch.setattr(Recogniser, "load", real_load)
    with qtbot.waitSignal(win.runner.finished, timeout=30000):  # the window takes the next request at once
        assert win.open_model(str(path))
    assert win.project.class_names == ["a", "b"] and before != ["a", "b"]
    opened = win.project.recogniser
    release.set()  # the abandoned load ends now: its result is dropped
    qtbot.wait(300)
    assert win.project.recogniser is opened
