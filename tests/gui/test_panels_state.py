"""What the panels show follows the project: File > New project leaves no old run's figures in the Train
panel or the Run panel; Pause cannot be pressed while nothing runs; the unsaved-changes question offers
Save (which saves), Discard and Cancel (which aborts); the Stages log's times add up to the "done in"
time and the training-time figure, and a restored run shows the speed-up its record has."""
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox, QFileDialog, QMessageBox

from classmap_gui.core.train.evaluation import speed_text
from classmap_gui.gui.dialogs import NewProjectDialog
from classmap_gui.gui.panels.runs import COLUMNS

from gui_drive import import_folder as _import, save_as, train_by_click as _train


def _ok_new_project(qtbot):
    return lambda dlg: qtbot.mouseClick(dlg.buttons.button(QDialogButtonBox.Ok), Qt.LeftButton)


def test_new_project_leaves_no_old_run_on_screen(qtbot, window, dialogs, shapes_folder, small_settings):
    win = window
    _import(qtbot, win, shapes_folder)
    _train(qtbot, win, small_settings)
    t, r = win.train, win.run
    assert t.results.figure_titles["speedup"].text() != "fewer evaluations"  # this run's own line
    assert "Train a recogniser" not in r.view.text()  # trained: the Run panel does not ask for training
    r.add_source("folder", str(shapes_folder / "cross"))
    qtbot.mouseClick(r.full_speed, Qt.LeftButton)
    qtbot.mouseClick(r.start_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: r.stream is None, timeout=20000)
    assert r.winner.text() != "–" and r.files.rowCount() == 14
    dialogs.next(NewProjectDialog, _ok_new_project(qtbot))
    win.act_new.trigger()
    dialogs.check()
    assert win.project.imageset is not None and len(win.project.imageset) == 0
    assert [lab.text() for lab in t.results.figures.values()] == ["–"] * 4
    assert t.results.figure_titles["speedup"].text() == "fewer evaluations"
    assert t.results.conf_tabs.tabText(1) == "Top confusions" and t.stages.count() == 0
    assert "Train a recogniser" in r.view.text() and r.winner.text() == "–"
    assert r.files.rowCount() == 0 and r.cands.rowCount() == 0 and r.fps_label.text() == "– frames/s"


def test_pause_is_pressed_only_while_running(qtbot, window, shapes_folder, small_settings):
    win = window
    _import(qtbot, win, shapes_folder)
    _train(qtbot, win, {**small_settings, "classmap": None})
    r = win.run
    qtbot.mouseClick(r.pause_btn, Qt.LeftButton)
    assert not r.pause_btn.isChecked() and not r.pause_btn.isEnabled()  # stopped: nothing to pause
    r.add_source("folder", str(shapes_folder / "ring"))
    qtbot.mouseClick(r.start_btn, Qt.LeftButton)  # real time: one image a second
    qtbot.mouseClick(r.pause_btn, Qt.LeftButton)
    assert r.pause_btn.isChecked() and r.stream.paused
    qtbot.mouseClick(r.start_btn, Qt.LeftButton)  # Stop
    qtbot.waitUntil(lambda: r.stream is None, timeout=10000)
    assert not r.pause_btn.isChecked() and not r.pause_btn.isEnabled()  # not left down


def _answer(button):
    def act(box):
        assert isinstance(box, QMessageBox)
        offered = {box.standardButton(b) for b in box.buttons()}
        assert offered == {QMessageBox.Save, QMessageBox.Discard, QMessageBox.Cancel}, offered
        box.button(button).click()
    return act


def test_unsaved_changes_save_discard_or_cancel(qtbot, window, dialogs, shapes_folder, tmp_path):
    win = window
    win.setProperty("no_confirm", False)
    _import(qtbot, win, shapes_folder)
    win.dataset.add_class("extra")
    names = list(win.project.class_names)
    # Cancel: nothing happens
    dialogs.next(QMessageBox, _answer(QMessageBox.Cancel))
    win.act_new.trigger()
    dialogs.check()
    assert win.project.class_names == names and win.project.dirty
    # Save: asks where, saves, then goes on to the new project
    saved = tmp_path / "kept.cmproj"

    def save_then_new(box):
        dialogs.next(QFileDialog, lambda dlg: (save_as(qtbot, saved)(dlg),
                                               dialogs.next(NewProjectDialog, _ok_new_project(qtbot))))
        _answer(QMessageBox.Save)(box)
    dialogs.next(QMessageBox, save_then_new)
    win.act_new.trigger()
    assert win.project.class_names == names  # the save runs in the background; the window did not wait for it
    qtbot.waitUntil(lambda: win.project.class_names == [], timeout=30000)  # saved, then the new project came
    dialogs.check()
    assert saved.is_file() and len(win.project.imageset) == 0
    with qtbot.waitSignal(win.runner.finished, timeout=30000):
        win.open_project(str(saved))
    assert win.project.class_names == names  # what was saved is what was there
    # Discard: the changes go
    win.dataset.add_class("another")
    dialogs.next(QMessageBox, lambda box: (dialogs.next(NewProjectDialog, _ok_new_project(qtbot)),
                                           _answer(QMessageBox.Discard)(box)))
    win.act_new.trigger()
    dialogs.check()
    assert win.project.class_names == [] and Path(saved).is_file()


def _stage_lines(t):
    return [t.stages.item(i).text() for i in range(t.stages.count())]


def test_stage_times_add_up_and_a_restored_run_shows_its_recorded_speed(qtbot, window):
    from classmap_gui.core.data.hand_pose import generate_hand_pose

    from gui_drive import POSE_SETTINGS

    win = window
    # 30 classes: enough for ClassMap to evaluate fewer classifiers than brute force, so a speed is measured
    win.project.reset(generate_hand_pose(shapes="V,A,L,B,Y", orientations=6, images_per_class=10, size=(32, 32)))
    small_settings = POSE_SETTINGS
    _train(qtbot, win, small_settings)
    t = win.train
    lines = _stage_lines(t)
    assert lines[-1].startswith("done in ") and not any(ln.startswith("done  (") for ln in lines[:-1]), lines
    total = float(lines[-1].split()[2])
    assert t.figures["time"].text() == f"{total:.1f} s"  # the training-time figure is the log's total
    stages = [float(ln.rsplit("(", 1)[1].split()[0]) for ln in lines[:-1]]
    assert all(s <= total + 0.05 for s in stages) and sum(stages) <= total + 0.1 * len(stages), lines
    first = win.project.runs.get(win.project.runs.current_of(win.project.recogniser))
    _train(qtbot, win, {**small_settings, "seed": 1})
    view = t.runs_view
    t.right.setCurrentWidget(view)
    rect = view.table.visualItemRect(view.table.item(view.row_of(first["id"]), COLUMNS.index("Date")))
    qtbot.mouseClick(view.table.viewport(), Qt.LeftButton, pos=rect.center())
    with qtbot.waitSignal(win.runner.finished, timeout=90000):
        qtbot.mouseClick(view.restore_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: not win.runner.busy and t.outcome is not None, timeout=30000)
    title = t.results.figure_titles["speedup"].text()
    single = first["latency_speedup"]["single"]
    # the restored run's own speed, or (a ClassMap slower than brute force here) the reason it cannot help
    assert speed_text(single) in title or (single < 1 and "too few classes" in title), (title, first["latency_speedup"])
    assert t.figures["time"].text() == f"{first['train_seconds']:.1f} s"


def test_explore_and_run_follow_the_model_and_project(qtbot, window, shapes_folder, small_settings, hand_detector,
                                                      tmp_path):
    """Leaving Find the hand shows no old frame and no frames/s of a stopped video; Explore on another model
    shows nothing of the last one (its search, its image, its live reading, its colour groups, its axes); back
    on a project, no hand-pose words either."""
    from PySide6.QtTest import QTest

    from classmap_gui.gui.panels.live_map import START

    from classmap_gui.core.train.training import TrainConfig, train

    win = window
    _import(qtbot, win, shapes_folder)
    ims = win.project.imageset                 # a small ClassMap model of the project, trained outside the window
    res = train(ims, TrainConfig(features="hog", bank="ova-ridge", classmap={"d": 2, "p": 2, "n_triples": 2000},
                                 test_fraction=0.25, seed=0))
    win.project.set_trained(res.recogniser, res.report, (None, ims.subset(res.split["test"])))
    qtbot.waitUntil(lambda: not win.runner.busy, timeout=60000)
    r = win.run
    win.show_panel("run")
    r.add_source("folder", str(shapes_folder / "ring"))
    qtbot.mouseClick(r.full_speed, Qt.LeftButton)
    qtbot.mouseClick(r.start_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: r.stream is None, timeout=30000)
    assert r.fps_label.text() != "– frames/s" and r.view.pixmap() is not None   # the run's mean rate stays
    qtbot.mouseClick(r.find_btn, Qt.LeftButton)
    qtbot.mouseClick(r.find_btn, Qt.LeftButton)                            # back to recognising
    assert r.view.text() == "Pick a source and press Start." and r.fps_label.text() == "– frames/s"
    assert r.view.pixmap() is None or r.view.pixmap().isNull()

    win.show_panel("explore")
    ex, live = win.explore, win.explore.live
    with qtbot.waitSignal(win.runner.finished, timeout=120000):
        qtbot.mouseClick(ex.compute_btn, Qt.LeftButton)
    qtbot.wait(100)
    QTest.keyClicks(ex.detail.search, "cross")                             # a search typed and entered
    QTest.keyClick(ex.detail.search, Qt.Key_Return)
    ims = win.project.imageset
    win.project.live.start([str(shapes_folder / "cross")])                # a frame of the Run panel, drawn live
    n = live.updates
    win.project.live.publish(ims.images[0], None, str(shapes_folder / "cross" / "00.png"), 1)
    qtbot.waitUntil(lambda: live.updates > n, timeout=20000)
    win.project.live.end("stopped")
    assert "Recognised as" in live.status.text() and ex.img_view.pixmap() is not None
    hand_detector.save(tmp_path / "hands")
    with qtbot.waitSignal(win.runner.finished, timeout=60000):
        assert win.open_model(str(tmp_path / "hands" / "model.json"))       # the hand model, no video running
    assert ex.detail.search.text() == "" and live.status.text() == START
    assert ex.img_view.pixmap() is None or ex.img_view.pixmap().isNull()
    assert ex.colour_by.count() == 0 and ex.map.plot.isHidden()             # no last map, no empty axes
    with qtbot.waitSignal(win.runner.finished, timeout=120000):
        qtbot.mouseClick(ex.compute_btn, Qt.LeftButton)
    qtbot.wait(100)
    assert "shape" in [ex.colour_by.itemText(i) for i in range(ex.colour_by.count())]
    _import(qtbot, win, shapes_folder)                                     # back on a project of shapes
    assert ex.colour_by.count() == 0 and "shape" not in ex.info.text()
    assert ex.map.plot.isHidden() and not ex.map.empty.isHidden()          # a sentence, not empty axes
