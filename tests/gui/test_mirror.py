"""Mirror is for the person looking at the screen: with it ticked the preview and the Run view are flipped,
but the images a project stores and the frames a model reads are what the camera gives (issue 39, major 2)."""
import cv2
import numpy as np
import pytest
from PySide6.QtCore import Qt

from gui_drive import import_folder


@pytest.fixture
def half_video(tmp_path):
    """A 96x96 video whose left half is bright and right half dark: a flip is plain to see."""
    path = tmp_path / "half.avi"
    vw = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 15.0, (96, 96))
    for j in range(45):
        img = np.full((96, 96, 3), 30, np.uint8)
        img[:, :48] = 220 - j
        vw.write(img)
    vw.release()
    return path


def _left_brighter(img) -> bool:
    g = np.asarray(img, np.float64)
    g = g.mean(axis=2) if g.ndim == 3 else g
    w = g.shape[1]
    return g[:, : w // 3].mean() > g[:, -w // 3:].mean() + 50


def _pixmap_left_brighter(label) -> bool:
    img = label.pixmap().toImage()
    w, h = img.width(), img.height()
    left = np.mean([img.pixelColor(x, h // 2).lightness() for x in range(w // 10, w // 3)])
    right = np.mean([img.pixelColor(x, h // 2).lightness() for x in range(2 * w // 3, 9 * w // 10)])
    return left > right + 50


def test_mirror_flips_what_you_see_not_what_is_stored_or_read(qtbot, window, shapes_folder, half_video, small_settings):
    from gui_drive import train_by_click

    win = window
    import_folder(qtbot, win, shapes_folder)
    d, cap = win.dataset, win.dataset.capture
    d.add_class("bright left")
    row = win.project.class_names.index("bright left")
    cap.choose_video(str(half_video))
    assert cap.mirror.isChecked()                                   # the capture default: a mirror
    qtbot.mouseClick(cap.region, Qt.LeftButton)
    cap.region.setValue(100)                                         # the whole frame
    qtbot.mouseClick(cap.start_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: cap.latest_crop is not None and cap.preview.pixmap() is not None
                    and not cap.preview.pixmap().isNull(), timeout=10000)
    qtbot.waitUntil(lambda: not _pixmap_left_brighter(cap.preview), timeout=5000)   # the preview is mirrored
    item = d.classes.item(row)
    d.classes.scrollToItem(item)
    qtbot.mouseClick(d.classes.viewport(), Qt.LeftButton, pos=d.classes.visualItemRect(item).center())
    before = int(np.sum(win.project.imageset.labels == row))
    qtbot.mousePress(cap.record_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: len(cap.burst) >= 12, timeout=20000)
    qtbot.mouseRelease(cap.record_btn, Qt.LeftButton, pos=cap.record_btn.rect().center())
    qtbot.waitUntil(lambda: int(np.sum(win.project.imageset.labels == row)) > before, timeout=10000)
    ims = win.project.imageset
    stored = ims.images[np.flatnonzero(ims.labels == row)]
    assert all(_left_brighter(im) for im in stored)                 # stored as the camera gives them
    files = sorted(win.project.capture_dir(row).glob("*.png"))
    assert files and _left_brighter(cv2.imread(str(files[0])))      # and so on disk
    qtbot.mouseClick(cap.start_btn, Qt.LeftButton)                  # stop the preview

    # Run, Mirror ticked: the view is flipped, the model reads the frame as it is
    train_by_click(qtbot, win, {**small_settings, "classmap": None})
    run = win.run
    win.show_panel("run")
    run.add_source("video", str(half_video))
    if not run.mirror.isChecked():
        qtbot.mouseClick(run.mirror, Qt.LeftButton)
    assert run.mirror.isChecked()
    crops = []
    run.project.live.frame.connect(lambda crop, *_: crops.append(crop))
    qtbot.mouseClick(run.start_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: len(crops) >= 3, timeout=20000)
    assert not _pixmap_left_brighter(run.view)                      # what you see: mirrored
    assert all(_left_brighter(c) for c in crops)                    # what the model reads: the camera's frame
    qtbot.waitUntil(lambda: run.winner.text() == "bright left", timeout=10000)
    qtbot.mouseClick(run.start_btn, Qt.LeftButton)
