"""The first hour's small things (issue 39's minors), each as a person meets it."""
import time

import numpy as np


def test_the_progress_bar_never_goes_back_and_its_time_left_only_falls(qtbot):
    from classmap_gui.gui.widgets import TaskProgress

    p = TaskProgress()
    qtbot.addWidget(p)
    p.start("Building the hand-pose model")
    p.update_progress(0.5, "stage 1", 100.0)
    assert p.bar.value() == 500 and p.eta.text() in ("about 2 min left", "100 s left", "99 s left")
    p.update_progress(0.1, "stage 2", 300.0)                     # a stage that restarts its own count
    assert p.bar.value() == 500                                  # the bar stays
    assert p.eta.text() in ("about 2 min left", "100 s left", "99 s left"), p.eta.text()  # no jump up
    p._left = (5.0, time.monotonic() - 10)                       # the estimate runs out before the work
    p._show_left()
    assert p.eta.text() == "almost done"


def test_the_split_line_says_why_burst_counts_do_not_add_up():
    from classmap_gui.gui.panels.train_jobs import split_text

    text, _ = split_text({"by": "capture group", "groups": 13, "groups_per_part": {"train": 9, "test": 5}})
    assert "1 burst(s) counted in two parts" in text
    text, _ = split_text({"by": "capture group", "groups": 13, "groups_per_part": {"train": 9, "test": 4}})
    assert "two parts" not in text


def test_the_live_map_says_no_frames_yet_and_draws_no_empty_histogram(qtbot, window):
    from classmap_gui.gui.panels.live_map import NO_FRAMES

    live = window.explore.live
    assert live.rank_label.text() == NO_FRAMES and not live.hist.isVisible()


def test_the_dataset_header_is_the_projects_name_once_saved(qtbot, window, tmp_path, shapes_folder):
    from gui_drive import import_folder

    win = window
    import_folder(qtbot, win, shapes_folder)
    path = tmp_path / "my hands.cmproj"
    with qtbot.waitSignal(win.runner.finished, timeout=30000):
        assert win.save_project(str(path))
    assert "<b>my hands</b>" in win.dataset.summary.text()


def test_a_few_classes_with_classmap_say_it_cannot_help(qtbot):
    from types import SimpleNamespace

    from classmap_gui.core.data.imageset import ImageSet
    from classmap_gui.gui.panels.train_results import TrainResults

    view = TrainResults()
    qtbot.addWidget(view)
    labels = np.repeat(np.arange(4), 3)
    ims = ImageSet(np.zeros((12, 8, 8), np.uint8), labels, ["a", "b", "c", "d"])
    report = SimpleNamespace(accuracy=1.0, evaluations_per_query=3.2, brute_force_evaluations=4,
                             evaluations_ratio=1.25, latency_speedup={"single": 0.8, "batch": 0.9},
                             confusion=None, per_class_accuracy=np.ones(4))
    view.show_report(report, ["a", "b", "c", "d"], ims, labels, 1.0)
    title = view.figure_titles["speedup"]
    assert "too few classes (4)" in title.text() and "Untick ClassMap" in title.toolTip()


def test_help_menu_f1_opens_the_manual_and_about_names_the_version(qtbot, window, monkeypatch):
    from PySide6.QtCore import QTimer, Qt
    from PySide6.QtGui import QDesktopServices
    from PySide6.QtWidgets import QApplication, QMessageBox

    from classmap_gui import __version__

    opened = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url.toLocalFile()) or True)
    window.activateWindow()
    window.setFocus()
    qtbot.keyClick(window, Qt.Key_F1)                                      # F1
    assert opened and opened[0].endswith(("index.html", "README.md"))
    menus = [a.text() for a in window.menuBar().actions()]
    assert "&Help" in menus
    seen = []

    def read_and_close():
        box = QApplication.activeModalWidget()
        if box is None:
            QTimer.singleShot(20, read_and_close)
            return
        seen.append(box.text())
        box.done(QMessageBox.Ok)
    QTimer.singleShot(0, read_and_close)
    window.act_about.trigger()                                             # Help > About ClassMap Studio
    assert seen and f"ClassMap Studio {__version__}" in seen[0]


def test_classmap_on_a_few_classes_says_what_it_costs_not_brute_force(qtbot):
    from types import SimpleNamespace

    from classmap_gui.core.data.imageset import ImageSet
    from classmap_gui.gui.panels.train_results import TrainResults

    view = TrainResults()
    qtbot.addWidget(view)
    labels = np.repeat(np.arange(4), 3)
    ims = ImageSet(np.zeros((12, 8, 8), np.uint8), labels, ["a", "b", "c", "d"])
    report = SimpleNamespace(accuracy=1.0, evaluations_per_query=6.0, brute_force_evaluations=4,
                             evaluations_ratio=4 / 6, latency_speedup=None, confusion=None,
                             per_class_accuracy=np.ones(4))
    view.show_report(report, ["a", "b", "c", "d"], ims, labels, 1.0, classmap=True)     # ClassMap ticked
    title = view.figure_titles["speedup"]
    assert "brute force" not in view.figures["speedup"].text() and "every classifier" not in title.text()
    assert "ClassMap on" in title.text() and "4 classes" in title.text()
    report.evaluations_per_query, report.evaluations_ratio = 4.0, 1.0
    view.show_report(report, ["a", "b", "c", "d"], ims, labels, 1.0, classmap=False)    # ClassMap off: why
    assert "ClassMap off" in title.text() and "pays off from about" in title.toolTip()


def test_the_demo_names_its_set_in_the_picker_while_it_opens(qtbot, window):
    from classmap_gui.gui.demo import demo_dataset, open_demo

    task = open_demo(window)
    assert task is not None and demo_dataset() in window.dataset.summary.text()
    assert window.dataset.builtin.currentData() == demo_dataset()           # not "digits" beside it
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=60000)


def test_the_first_start_says_it_is_opening_the_source(qtbot, window, shapes_folder, shapes_video, small_settings):
    from PySide6.QtCore import Qt

    from gui_drive import import_folder, train_by_click

    win = window
    import_folder(qtbot, win, shapes_folder)
    train_by_click(qtbot, win, {**small_settings, "classmap": None})
    r = win.run
    win.show_panel("run")
    r.add_source("video", str(shapes_video))
    qtbot.mouseClick(r.start_btn, Qt.LeftButton)
    assert r.view.text().startswith("Opening ") and "Pick a source" not in r.view.text()
    qtbot.mouseClick(r.pause_btn, Qt.LeftButton)                           # paused, then one Step
    n = r.frames_shown
    qtbot.mouseClick(r.step_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: r.frames_shown > n, timeout=30000)
    assert r.fps_label.text() == "– frames/s" or float(r.fps_label.text().split()[0]) > 5   # not the 0.7 of a Step
    qtbot.mouseClick(r.start_btn, Qt.LeftButton)                           # Stop: no rate left on screen
    assert r.fps_label.text() == "– frames/s"


def test_the_confusion_matrix_has_numbers_and_a_colour_key(qtbot):
    from types import SimpleNamespace

    from classmap_gui.core.data.imageset import ImageSet
    from classmap_gui.core.explore.views import confusion_from_labels
    from classmap_gui.gui.panels.train_results import TrainResults

    view = TrainResults()
    qtbot.addWidget(view)
    view.show()
    labels = np.repeat(np.arange(4), 3)
    pred = labels.copy()
    pred[0] = 2                                                           # one "a" read as "c"
    ims = ImageSet(np.zeros((12, 8, 8), np.uint8), labels, ["a", "b", "c", "d"])
    conf = confusion_from_labels(labels, pred, 4)
    report = SimpleNamespace(accuracy=11 / 12, evaluations_per_query=4.0, brute_force_evaluations=4,
                             evaluations_ratio=1.0, latency_speedup=None, confusion=conf,
                             per_class_accuracy=np.array([2 / 3, 1, 1, 1]), top_confusions=[(0, 2, 1)])
    view.show_report(report, ["a", "b", "c", "d"], ims, pred, 1.0, classmap=False)
    texts = {(round(t.pos().y() - 0.5), round(t.pos().x() - 0.5)): t.toPlainText() for t in view.cell_texts}
    assert texts[(0, 0)] == "2" and texts[(0, 2)] == "1" and texts[(1, 1)] == "3" and len(texts) == 16
    assert view.conf_key.isVisible() and "share" in view.conf_key.getAxis("left").labelText
