"""A hand model built elsewhere (``classmap hand-model --out X``) is opened with File > Open model…, and from then
on File > Get the hand-pose model opens it rather than building another (issue 39, major 7)."""
import copy

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QFileDialog, QMessageBox


def test_open_model_finds_a_hand_model_anywhere_and_get_opens_it_again(qtbot, window, dialogs, hand_detector,
                                                                       tmp_path, monkeypatch):
    from classmap_gui.core.detect.pose_model import MODEL_ENV

    monkeypatch.setenv(MODEL_ENV, str(tmp_path / "the-default-place"))    # nothing built where the app looks
    rec = copy.copy(hand_detector)
    rec.metadata = {**copy.deepcopy(hand_detector.metadata or {}), "hand_model": {"quick": True}}
    elsewhere = tmp_path / "X"
    rec.save(elsewhere)
    win = window

    def choose(dlg):
        dlg.selectFile(str(elsewhere / "model.json"))
        qtbot.mouseClick(dlg.findChild(QDialogButtonBox, "buttonBox").button(QDialogButtonBox.Open), Qt.LeftButton)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", _non_native(QFileDialog.getOpenFileName))
    dialogs.next(QFileDialog, choose)
    with qtbot.waitSignal(win.runner.finished, timeout=30000):
        win.act_open_model.trigger()                                      # File > Open model…
    dialogs.check()
    assert win.project.recogniser is not None and win.project.recogniser.n_classes == hand_detector.n_classes

    win.project.reset(None)                                               # another project ...
    assert win.project.recogniser is None
    asked = []

    def refuse():
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox):
            asked.append(box.text())
            box.button(QMessageBox.No).click()
        elif not asked and win.runner.busy is False and win.project.recogniser is None:
            QTimer.singleShot(20, refuse)
    QTimer.singleShot(0, refuse)
    with qtbot.waitSignal(win.runner.finished, timeout=30000):
        win.act_hand_model.trigger()                                      # ... File > Get the hand-pose model
    assert not asked, asked                                               # no offer to build another
    assert win.project.recogniser is not None and "hand_model" in win.project.recogniser.metadata
    assert not (tmp_path / "the-default-place").exists()


def _non_native(real):
    def call(parent, caption="", folder="", filt="", *args, **kwargs):
        return real(parent, caption, folder, filt, "", QFileDialog.DontUseNativeDialog)
    return call


def test_the_cli_says_what_will_find_a_model_built_elsewhere(tmp_path, capsys, monkeypatch):
    from classmap_gui.cli import hand_model as cli_hand_model

    monkeypatch.setenv("CLASSMAP_HAND_MODEL", str(tmp_path / "default"))

    class Rec:
        n_classes = 7

    monkeypatch.setattr("classmap_gui.core.detect.pose_model.make_hand_model",
                        lambda out, *a, **k: (Rec(), {"seconds": {}, "detection": {}}))
    ns = type("A", (), {"out": str(tmp_path / "X"), "quick": True, "set": [], "json": False})()
    assert cli_hand_model.cmd_hand_model(ns) == 0
    said = capsys.readouterr().out
    assert "File > Open model" in said and str(tmp_path / "X" / "model.json") in said
    ns.out = None
    assert cli_hand_model.cmd_hand_model(ns) == 0
    assert "File > Get the hand-pose model" in capsys.readouterr().out
