"""Unsaved work as a person meets it: a setting changed in a panel shows "*" in the window title (the project
says so by itself); closing with unsaved work and choosing Save saves in the background and the save's
completion closes the window — the close returns at once, nothing waits in a nested loop; a save that fails,
or an edit made while it ran, leaves the window open with the work unsaved."""
from contextlib import contextmanager

from PySide6.QtWidgets import QMessageBox

from classmap_gui.core.project import load_project

from gui_drive import import_folder


@contextmanager
def asking(win):
    """The unsaved-changes question is asked inside; after (a failure too) the test's window goes without it
    (pytest-qt closes the window before any fixture's teardown: a question then would hang the run)."""
    win.setProperty("no_confirm", False)
    try:
        yield
    finally:
        win.setProperty("no_confirm", True)


def _answer(button, asked: list | None = None):
    def act(box):
        assert isinstance(box, QMessageBox) and "unsaved changes" in box.text()
        if asked is not None:
            asked.append(button)
        box.button(button).click()
    return act


def _saved_project(qtbot, win, shapes_folder, path):
    import_folder(qtbot, win, shapes_folder)
    with qtbot.waitSignal(win.runner.finished, timeout=30000):
        win.save_project(str(path))
    assert path.is_file() and "*" not in win.windowTitle(), win.runner.last_error


def test_a_setting_changed_in_a_panel_shows_unsaved_and_saving_clears_it(qtbot, window, shapes_folder, tmp_path):
    win = window
    path = tmp_path / "p.cmproj"
    _saved_project(qtbot, win, shapes_folder, path)
    cap = win.dataset.capture
    cap.target.clear()
    qtbot.keyClicks(cap.target, "33")                      # the per-class capture target, typed
    assert cap.target.value() == 33 and "*" in win.windowTitle()
    with qtbot.waitSignal(win.runner.finished, timeout=30000):
        win.act_save.trigger()
    assert "*" not in win.windowTitle() and load_project(path).settings["capture_target"] == 33


def test_close_with_save_saves_then_closes_without_waiting(qtbot, window, dialogs, shapes_folder, tmp_path):
    win = window
    path = tmp_path / "p.cmproj"
    _saved_project(qtbot, win, shapes_folder, path)
    win.dataset.add_class("extra")
    assert "*" in win.windowTitle()
    with asking(win):
        dialogs.next(QMessageBox, _answer(QMessageBox.Save))
        win.close()
        dialogs.check()
        # close() came back while the save runs: still open and unsaved (a nested wait would have closed it)
        assert win.isVisible() and win.project.dirty and win.runner.busy
        qtbot.waitUntil(lambda: not win.isVisible(), timeout=30000)  # the save's completion closed the window
    assert "extra" in load_project(path).class_names and not win.project.dirty


def test_an_edit_during_the_save_asks_again_and_a_failed_save_keeps_the_window(qtbot, window, dialogs,
                                                                               shapes_folder, tmp_path):
    win = window
    path = tmp_path / "work" / "p.cmproj"
    path.parent.mkdir()
    _saved_project(qtbot, win, shapes_folder, path)
    with asking(win):
        win.dataset.add_class("extra")
        dialogs.next(QMessageBox, _answer(QMessageBox.Save))
        win.close()
        dialogs.check()
        win.dataset.add_class("late")                          # while the save runs
        asked = []
        dialogs.next(QMessageBox, _answer(QMessageBox.Cancel, asked))  # the question comes again: keep the window
        qtbot.waitUntil(lambda: bool(asked), timeout=30000)
        dialogs.check()
        assert win.isVisible() and "*" in win.windowTitle()
        names = load_project(path).class_names
        assert "extra" in names and "late" not in names         # the file holds what was there when Save was chosen
        # the project's folder has gone (a disk unplugged): Save fails, the window stays open with the work
        path.unlink()
        path.parent.rmdir()
        path.parent.write_text("a file where the folder was")
        dialogs.next(QMessageBox, _answer(QMessageBox.Save))
        win.close()
        dialogs.check()
        qtbot.waitUntil(lambda: not win.runner.busy, timeout=30000)
        qtbot.wait(200)
        assert win.isVisible() and win.project.dirty and "Saving" in win.runner.last_task.title
        assert win.runner.last_error
