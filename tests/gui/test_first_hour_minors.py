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
