"""File > Open model: a saved recogniser without its images opens on the Run panel and runs live."""
import cv2
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
