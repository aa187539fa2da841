"""What the GUI tests share besides fixtures: small data, settings, and the clicks a person makes.

Imported by name (``from gui_drive import train_by_click``): several conftest.py files share the module name
``conftest``, so a test importing from ``conftest`` would get whichever pytest loaded last.
"""
from pathlib import Path

import cv2
import numpy as np

SHAPES = ("bars", "columns", "cross", "ring")

# Training settings small enough for a test: a few seconds on two loaded cores.
SMALL_SETTINGS = {"features": "kmeans",
            "features_params": {"n_centroids": 16, "patch_size": 5, "n_patches": 3000, "stride": 2},
            "bank": "ova-ridge", "bank_params": {},
            "classmap": {"d": 3, "p": 3, "embedding": "boosted", "refine": "v2"},
            "test_fraction": 0.25, "seed": 0}


def shape_image(kind: str, rng, size: int = 24) -> np.ndarray:
    """A small grey picture of one of four easily told apart shapes, with noise and jitter."""
    img = np.full((size, size), 40, np.uint8)
    o = int(rng.integers(-2, 3))
    c = size // 2 + o
    if kind == "bars":
        img[2 + o % 3::6, :] = 220
    elif kind == "columns":
        img[:, 2 + o % 3::6] = 220
    elif kind == "cross":
        cv2.line(img, (2, 2 + o), (size - 3, size - 3 + o), 230, 2)
        cv2.line(img, (size - 3, 2 + o), (2, size - 3 + o), 230, 2)
    else:
        cv2.circle(img, (c, c), size // 3, 230, 2)
    noise = rng.integers(0, 30, size=img.shape)
    return np.clip(img.astype(np.int64) + noise, 0, 255).astype(np.uint8)


#: a hand-pose subset with factors for the Explore map: 5 shapes x 6 orientations, small images
POSE_SETTINGS = {"features": "hog", "features_params": {}, "bank": "ova-ridge", "bank_params": {"alpha": 10.0},
                 "classmap": {"d": 8, "p": 6, "embedding": "boosted", "refine": "v2"},
                 "test_fraction": 0.4, "seed": 0}


def train_hand_pose(qtbot, win, shapes: str = "V,A,L,B,Y", orientations: int = 6, images_per_class: int = 10):
    """Put a generated hand-pose subset in the window's project and train it with the Train button's code."""
    from classmap_gui.core.data.hand_pose import generate_hand_pose

    ims = generate_hand_pose(shapes=shapes, orientations=orientations, images_per_class=images_per_class,
                             size=(32, 32), name="hand-pose-test")
    win.project.reset(ims)
    win.train.apply_settings(POSE_SETTINGS)
    with qtbot.waitSignal(win.runner.finished, timeout=120000):
        win.train.start_training()
    assert win.project.recogniser is not None, win.runner.last_error
    return ims


class DialogDriver:
    """Acts on the next modal dialog the way a person would, from inside its event loop.

    A failure inside closes the dialog (so the test never hangs) and is raised afterwards by ``check``.
    """

    def __init__(self):
        self.error = None

    def next(self, kind, act):
        from PySide6.QtCore import QTimer
        from PySide6.QtWidgets import QApplication

        def run():
            dlg = QApplication.activeModalWidget()
            if dlg is None:  # not shown yet: look again shortly
                QTimer.singleShot(20, run)
                return
            try:
                assert isinstance(dlg, kind), f"expected a {kind.__name__}, got {type(dlg).__name__}"
                act(dlg)
            except BaseException as exc:  # noqa: BLE001 - reported by check()
                self.error = exc
                dlg.reject()
        QTimer.singleShot(0, run)

    def check(self):
        if self.error is not None:
            raise self.error



def save_as(qtbot, path):
    """A save dialog's action: put ``path`` into its name box and click Save."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QDialogButtonBox, QLineEdit

    def act(dlg):
        # the name box's completer fights synthetic key presses under the offscreen platform (it
        # selected every folder on the path); the name is set as typing would, then Save is clicked
        dlg.selectFile(str(path))
        assert dlg.findChild(QLineEdit, "fileNameEdit").text().endswith(Path(path).name)
        buttons = dlg.findChild(QDialogButtonBox, "buttonBox")
        qtbot.mouseClick(buttons.button(QDialogButtonBox.Save), Qt.LeftButton)
    return act


def import_folder(qtbot, win, folder):
    """Open an image folder as the project and wait for it."""
    with qtbot.waitSignal(win.runner.finished, timeout=20000):
        win.dataset.import_folder(str(folder))


def train_by_click(qtbot, win, settings):
    """Show ``settings`` in the Train panel, click Train and wait for the recogniser."""
    from PySide6.QtCore import Qt

    win.train.apply_settings(settings)
    with qtbot.waitSignal(win.runner.finished, timeout=90000):
        qtbot.mouseClick(win.train.train_btn, Qt.LeftButton)
    assert win.project.recogniser is not None, win.runner.last_error
