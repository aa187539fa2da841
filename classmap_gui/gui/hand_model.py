"""*File > Get the hand-pose model*: open the 2430-class hand-pose model, building it first when it is not
there (:func:`classmap_gui.core.detect.pose_model.make_hand_model`, the same build as ``classmap hand-model``,
with the task runner's progress bar). Then the Run panel names hand shapes with no training by the person."""
from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QPushButton

from ..user_dirs import hand_model_dir

#: what the build costs, for the question before it (measured: docs/detect.md, "The hand-pose model")
BUILD_MINUTES = "about 15 minutes"


def get_hand_model(win, ask: bool = True) -> bool:
    """Open the hand-pose model in ``win`` (a MainWindow); build it first (asking, unless ``ask`` is False)
    when it is missing. False when cancelled or busy."""
    folder = hand_model_dir()
    if (folder / "model.json").is_file():
        ok = win.open_model(str(folder / "model.json"))
        if ok:
            win.run.find_btn.setChecked(False)
        return bool(ok)
    if ask and QMessageBox.question(
            win, "Get the hand-pose model",
            "The hand-pose model names 81 hand shapes in 30 orientations (2430 classes) with no training by you.\n\n"
            f"It is generated and trained on this computer: {BUILD_MINUTES} on two cores. Build it now?\n\n"
            f"It is saved in {folder}.") != QMessageBox.Yes:
        return False

    def work(progress, should_stop):
        from ..core.detect.pose_model import make_hand_model

        make_hand_model(folder, progress=progress, should_stop=should_stop)
        return folder

    return bool(win.runner.run("Building the hand-pose model", work, lambda _f: get_hand_model(win, ask=False)))


def offer_hand_model(win) -> QPushButton:
    """The first-run demo's offer, at the right of the status bar: one click opens (or builds) the hand-pose
    model; gone once it is open. Returns the button (``win.hand_model_offer``)."""
    btn = getattr(win, "hand_model_offer", None)
    if btn is None:
        built = (hand_model_dir() / "model.json").is_file()
        btn = QPushButton("✋ Show your hand: open the hand-pose model" if built else
                          "✋ Show your hand: get the hand-pose model (2430 shapes × orientations, no training)")
        btn.setToolTip("File > Get the hand-pose model: the Run panel then names hand shapes on the demo video or "
                       "your camera")
        btn.clicked.connect(lambda: get_hand_model(win))
        win.statusBar().addPermanentWidget(btn)
        win.hand_model_offer = btn

        def hide_when_open():
            rec = win.project.recogniser
            if rec is not None and "hand_model" in (getattr(rec, "metadata", None) or {}):
                btn.hide()
        win.project.modelChanged.connect(hide_when_open)
    btn.show()
    return btn


__all__ = ["get_hand_model", "offer_hand_model"]
