"""GUI tests run headless (offscreen Qt); captures go to a temporary folder, never the user's."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path

import cv2
import numpy as np
import pytest
from gui_drive import SHAPES, SMALL_SETTINGS, DialogDriver, shape_image

#: A wait's timeout guards against a hang; it is no timing. Every pytest-qt wait gets this many times the
#: time the test names, so the suite passes on a loaded machine (a fresh clone's `make test` at load 4-8 on 2
#: cores ran out of a 60 s wait for a training of 56 tiny images) while a real hang still fails.
#: CLASSMAP_TEST_WAIT_SCALE sets another factor.
WAIT_SCALE = float(os.environ.get("CLASSMAP_TEST_WAIT_SCALE", "5"))


def _patient(method):
    import functools

    @functools.wraps(method)
    def wait(self, *args, timeout=5000, **kwargs):
        return method(self, *args, timeout=None if timeout is None else int(timeout * WAIT_SCALE), **kwargs)
    return wait


def _scale_pytest_qt_waits() -> None:
    from pytestqt.qtbot import QtBot

    for name in ("waitSignal", "waitSignals", "waitUntil", "waitCallback", "waitActive", "waitExposed"):
        method = getattr(QtBot, name)
        if not getattr(method, "_scaled", False):
            scaled = _patient(method)
            scaled._scaled = True
            setattr(QtBot, name, scaled)


_scale_pytest_qt_waits()


@pytest.fixture
def small_settings() -> dict:
    return dict(SMALL_SETTINGS)


@pytest.fixture
def shapes_folder(tmp_path) -> Path:
    """A folder of 4 class sub-folders x 14 PNG images, plus one unreadable file."""
    rng = np.random.default_rng(0)
    root = tmp_path / "shapes"
    for k in SHAPES:
        (root / k).mkdir(parents=True)
        for i in range(14):
            cv2.imwrite(str(root / k / f"{i:02d}.png"), shape_image(k, rng))
    (root / "ring" / "broken.png").write_bytes(b"not a png")
    return root


@pytest.fixture
def shapes_video(tmp_path) -> Path:
    """An MJPG .avi of 60 frames (96x96 colour) cycling through the four shapes: the fake camera."""
    rng = np.random.default_rng(1)
    path = tmp_path / "camera.avi"
    vw = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 30.0, (96, 96))
    assert vw.isOpened()
    for i in range(60):
        img = cv2.resize(shape_image(SHAPES[(i // 15) % 4], rng), (96, 96), interpolation=cv2.INTER_NEAREST)
        vw.write(cv2.cvtColor(img, cv2.COLOR_GRAY2BGR))
    vw.release()
    return path


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    from classmap_gui.gui import project as project_mod
    from classmap_gui.gui.mainwindow import MainWindow

    monkeypatch.setattr(project_mod, "default_capture_root", lambda: tmp_path / "captures")
    # autosaves and the recent-projects list go to the test's folder, never the user's
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    win = MainWindow()
    win.setProperty("no_confirm", True)
    qtbot.addWidget(win)
    win.show()
    yield win
    win.runner.cancel()
    win.runner.wait(10000)
    win.run.stop()
    win.dataset.capture.shutdown()


@pytest.fixture
def dialogs():
    return DialogDriver()

