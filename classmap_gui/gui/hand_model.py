"""*File > Get the hand-pose model*: open the 2430-class hand-pose model, building it first when it is not
there (:func:`classmap_gui.core.detect.pose_model.make_hand_model`, the same build as ``classmap hand-model``,
with the task runner's progress bar). Then the Run panel names hand shapes with no training by the person."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QMessageBox, QPushButton

from ..user_dirs import built_hand_model, hand_model_dir

#: what the build costs on two cores (measured: docs/detect.md, "The hand-pose model"): the question before it
#: says it, and the status bar's time left during it starts from it
BUILD_SECONDS = 15 * 60
BUILD_MINUTES = f"about {BUILD_SECONDS // 60} minutes"


#: the app setting (:mod:`.app_settings`) holding the hand model folder last opened with File > Open model…
REMEMBERED = "hand_model_folder"


def find_hand_model() -> Path | None:
    """The hand-pose model folder the app opens: where ``classmap hand-model`` saves it by default
    (``$CLASSMAP_HAND_MODEL``, else the user data folder), else the hand model folder last opened with
    *File > Open model…*; None when neither holds one."""
    from . import app_settings

    remembered = app_settings.get(REMEMBERED)
    return built_hand_model(remembered if isinstance(remembered, str) and remembered else None)


def remember_hand_model(rec, folder) -> None:
    """After *File > Open model…*: a hand-pose model's folder is remembered, so *Get the hand-pose model* opens
    it next time instead of building another."""
    from . import app_settings

    if "hand_model" in (getattr(rec, "metadata", None) or {}):
        app_settings.put(REMEMBERED, str(Path(folder).absolute()))


def get_hand_model(win, ask: bool = True) -> bool:
    """Open the hand-pose model in ``win`` (a MainWindow): :func:`find_hand_model`'s; build it first (asking,
    unless ``ask`` is False) when there is none. False when cancelled or busy."""
    found = find_hand_model()
    folder = hand_model_dir()
    if found is not None:
        ok = win.open_model(str(found / "model.json"))
        if ok:
            win.run.find_btn.setChecked(False)
        return bool(ok)
    if ask and QMessageBox.question(
            win, "Get the hand-pose model",
            "The hand-pose model names 81 hand shapes in 30 orientations (2430 classes) with no training by you.\n\n"
            f"It is generated and trained on this computer: {BUILD_MINUTES} on two cores. Build it now?\n\n"
            f"It is saved in {folder}.\n\n(Built one already, e.g. with classmap hand-model --out X? Answer No and "
            "open X/model.json with File > Open model…: the app then remembers it.)") != QMessageBox.Yes:
        return False

    def work(progress, should_stop):
        from ..core.detect.pose_model import make_hand_model

        make_hand_model(folder, progress=progress, should_stop=should_stop)
        return folder

    return bool(win.runner.run("Building the hand-pose model", work, lambda _f: get_hand_model(win, ask=False),
                               expected_s=BUILD_SECONDS))


def hand_icon() -> QIcon:
    """The hand glyph (``resources/hand.svg``) as an icon; an empty icon when the file is missing."""
    from .resource_files import resource_path

    path = resource_path("hand.svg")
    return QIcon(str(path)) if path is not None else QIcon()


def offer_hand_model(win) -> QPushButton:
    """The first-run demo's offer, at the right of the status bar: one click opens (or builds) the hand-pose
    model; gone once it is open. Returns the button (``win.hand_model_offer``)."""
    btn = getattr(win, "hand_model_offer", None)
    if btn is None:
        built = find_hand_model() is not None
        btn = QPushButton("Show your hand: open the hand-pose model" if built else
                          "Show your hand: get the hand-pose model (81 shapes × 30 orientations)")
        btn.setIcon(hand_icon())  # drawn from the app's resources: a plain system has no emoji font for ✋
        btn.setToolTip("File > Get the hand-pose model: 2430 classes, no training by you; the Run panel then names "
                       "hand shapes on the demo video or your camera")
        btn.clicked.connect(lambda: get_hand_model(win))
        win.statusBar().addPermanentWidget(btn)
        win.hand_model_offer = btn

        def hide_when_open():
            rec = win.project.recogniser
            if rec is not None and "hand_model" in (getattr(rec, "metadata", None) or {}):
                btn.hide()
        win.project.modelChanged.connect(hide_when_open)
        # while a task runs its progress strip takes the offer's place (a stage name is read whole on a 1024 px
        # wide window); it comes back after, unless the hand model is open by then
        win.runner.busyChanged.connect(lambda busy: btn.setVisible(not busy) if not busy else btn.hide())
        win.runner.busyChanged.connect(lambda busy: busy or hide_when_open())
    btn.show()
    return btn


__all__ = ["REMEMBERED", "find_hand_model", "get_hand_model", "offer_hand_model", "remember_hand_model"]
