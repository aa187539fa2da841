"""The Train panel's settings are the project's the moment a person edits them: the window says unsaved,
closing asks to save, and the saved project shows them again when reopened (they used to reach the project
only after a training succeeded, so saving lost them and closing did not ask). Another panel asks for a
training through the project, and the Train panel answers."""
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from gui_drive import import_folder


def _check_mark(box):
    """Where a checkable group box draws its check mark."""
    from PySide6.QtWidgets import QStyle, QStyleOptionGroupBox
    opt = QStyleOptionGroupBox()
    box.initStyleOption(opt)
    return box.style().subControlRect(QStyle.CC_GroupBox, opt, QStyle.SC_GroupBoxCheckBox, box).center()


def _type(qtbot, box, text: str) -> None:
    box.setFocus()
    box.selectAll()
    qtbot.keyClicks(box, text)


def test_p_and_seed_edited_then_closed_ask_to_save_and_reopen_as_edited(qtbot, window, dialogs, shapes_folder,
                                                                        tmp_path):
    from classmap_gui.gui.mainwindow import MainWindow

    win = window
    path = tmp_path / "p.cmproj"
    import_folder(qtbot, win, shapes_folder)
    with qtbot.waitSignal(win.runner.finished, timeout=30000):
        win.save_project(str(path))
    assert "*" not in win.windowTitle(), win.runner.last_error
    win.show_panel("train")
    sv = win.train.settings_view
    qtbot.mouseClick(sv.cm_box, Qt.LeftButton, pos=_check_mark(sv.cm_box))  # ClassMap ticked
    assert sv.cm_box.isChecked()
    _type(qtbot, sv.cm_form.widgets["p"], "7")
    _type(qtbot, sv.seed, "123")
    assert "*" in win.windowTitle()

    asked = []

    def save(box):
        assert isinstance(box, QMessageBox) and "unsaved changes" in box.text()
        asked.append(box.text())
        box.button(QMessageBox.Save).click()
    win.setProperty("no_confirm", False)
    try:
        dialogs.next(QMessageBox, save)
        win.close()
        dialogs.check()
        qtbot.waitUntil(lambda: not win.isVisible(), timeout=30000)  # saved, then closed
    finally:
        win.setProperty("no_confirm", True)
    assert asked

    again = MainWindow()
    again.setProperty("no_confirm", True)
    qtbot.addWidget(again)
    with qtbot.waitSignal(again.runner.finished, timeout=30000):
        again.open_project(str(path))
    shown = again.train.settings_view
    assert shown.cm_box.isChecked()
    assert shown.cm_form.widgets["p"].value() == 7 and shown.seed.value() == 123
    assert again.train.settings()["classmap"]["p"] == 7 and "*" not in again.windowTitle()


def test_a_training_asked_of_the_project_is_started_by_the_train_panel(qtbot, window, shapes_folder, small_settings):
    win = window
    import_folder(qtbot, win, shapes_folder)
    win.train.apply_settings(small_settings)
    with qtbot.waitSignal(win.runner.finished, timeout=90000):
        win.project.request_training()
    assert win.project.recogniser is not None, win.runner.last_error


def test_every_panel_is_stopped_and_shut_down_from_the_panel_table(qtbot, window, monkeypatch):
    """The window reaches panels only through the table's protocol (stop on a new project, shutdown on close)."""
    from classmap_gui.gui.panel_table import PANELS

    win = window
    called = []
    for entry in PANELS:
        panel = getattr(win, entry.name)
        monkeypatch.setattr(panel, "stop", lambda n=entry.name: called.append(("stop", n)))
        monkeypatch.setattr(panel, "shutdown", lambda n=entry.name: called.append(("shutdown", n)))
    win.new_project((24, 24))
    win.close()
    names = [e.name for e in PANELS]
    assert called == [("stop", n) for n in names] + [("shutdown", n) for n in names]


def test_shapes_recorded_from_the_demo_video_are_proposed_the_hand_network(qtbot, window, shapes_folder):
    """The README's own-classes journey (issue 48 item 4): a burst recorded from the shipped demo video makes the
    Train panel propose the trained hand network's features, and say why; recorded from another video, HOG."""
    from classmap_gui.gui.demo import demo_video

    win = window
    import_folder(qtbot, win, shapes_folder)
    assert win.train.settings()["features"] == "hog"                  # images of unknown content
    d, cap = win.dataset, win.dataset.capture
    cap.choose_video(str(demo_video()))
    qtbot.mouseClick(cap.start_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: cap.latest_crop is not None, timeout=20000)
    item = d.classes.item(0)
    qtbot.mouseClick(d.classes.viewport(), Qt.LeftButton, pos=d.classes.visualItemRect(item).center())
    n = len(win.project.imageset)
    qtbot.mousePress(cap.record_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: len(cap.burst) >= 2, timeout=20000)
    qtbot.mouseRelease(cap.record_btn, Qt.LeftButton, pos=cap.record_btn.rect().center())
    qtbot.waitUntil(lambda: len(win.project.imageset) > n, timeout=10000)
    qtbot.mouseClick(cap.start_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: cap.stream is None, timeout=5000)
    assert win.train.settings()["features"] == "network"
    assert "trained hand network" in win.train.settings_view.advice.text()
