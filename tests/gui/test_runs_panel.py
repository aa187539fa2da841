"""The Runs table (Train panel): runs listed and sorted, restored by clicking, kept through save and reopen,
and restored runs predict what they predicted when trained. The split note warns about too few bursts."""
import numpy as np
from PySide6.QtCore import Qt

from classmap_gui.core.data import ImageSet
from classmap_gui.core.project.runs import predictions_match
from classmap_gui.gui.panels.runs import COLUMNS, megabytes
from classmap_gui.gui.panels.train import held_out_part
from gui_drive import import_folder as _import, train_by_click as _train


def _click_cell(qtbot, table, row, col):
    rect = table.visualItemRect(table.item(row, col))
    qtbot.mouseClick(table.viewport(), Qt.LeftButton, pos=rect.center())


def _click_header(qtbot, table, col):
    h = table.horizontalHeader()
    x = h.sectionViewportPosition(col) + h.sectionSize(col) // 2
    qtbot.mouseClick(h.viewport(), Qt.LeftButton, pos=h.viewport().rect().center().__class__(x, h.height() // 2))


def _restore(qtbot, win, run_id):
    view = win.train.runs_view
    win.train.right.setCurrentWidget(view)
    _click_cell(qtbot, view.table, view.row_of(run_id), COLUMNS.index("Date"))
    assert view.selected() == run_id and view.restore_btn.isEnabled()
    with qtbot.waitSignal(win.runner.finished, timeout=90000):
        qtbot.mouseClick(view.restore_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: not win.runner.busy, timeout=30000)


def _predictions_now(win):
    p = win.project
    test = held_out_part(p.imageset, p.settings)
    return p.recogniser.predict(test.images, top=1).labels


def test_runs_are_compared_restored_and_kept_through_save_and_reopen(qtbot, window, small_settings,
                                                                     shapes_folder, tmp_path):
    win = window
    _import(qtbot, win, shapes_folder)
    _train(qtbot, win, small_settings)                                        # run 1: ClassMap
    brute = {**small_settings, "classmap": None, "seed": 1,
             "features_params": {**small_settings["features_params"], "n_centroids": 8}}
    _train(qtbot, win, brute)                                                 # run 2: brute force, other k
    view = win.train.runs_view
    assert view.table.rowCount() == 2 and win.train.right.tabText(1) == "Runs (2)"
    cells = {COLUMNS[c]: view.table.item(view.row_of(1), c).text() for c in range(len(COLUMNS))}
    assert cells["ClassMap"] == "d=3 p=3" and cells["Model"] == "kept" and cells["Split"] == "by image"
    assert cells["Accuracy"].endswith("%") and cells["Features"].startswith("kmeans (k=16")
    assert view.table.item(view.row_of(2), COLUMNS.index("ClassMap")).text() == "—"
    assert view.table.item(view.row_of(2), 0).font().bold()                  # the run in use

    # sortable: a click on the Train time header orders the rows by time
    col = COLUMNS.index("Train time")
    _click_header(qtbot, view.table, col)
    keys = [view.table.item(r, col).key for r in range(view.table.rowCount())]
    assert keys == sorted(keys) or keys == sorted(keys, reverse=True)
    _click_header(qtbot, view.table, col)
    assert [view.table.item(r, col).key for r in range(view.table.rowCount())] == keys[::-1]

    # restore run 1 by clicking: its model and settings come back, and its predictions are the recorded ones
    run1 = win.project.runs.get(1)
    _restore(qtbot, win, 1)
    assert win.project.recogniser is win.project.runs.model(1)
    assert win.train.settings()["classmap"]["d"] == 3
    assert "identical to the recorded run" in win.train.status.text()
    assert predictions_match(run1, _predictions_now(win))

    # survives save and reopen; restoring run 2 after reopening reproduces it too
    path = tmp_path / "runs.cmproj"
    with qtbot.waitSignal(win.runner.finished, timeout=60000):
        win.save_project(str(path))
    win.project.reset(None)
    assert view.table.rowCount() == 0
    with qtbot.waitSignal(win.runner.finished, timeout=60000):
        win.open_project(str(path))
    qtbot.waitUntil(lambda: not win.runner.busy, timeout=60000)
    assert view.table.rowCount() == 2 and [r["id"] for r in win.project.runs.records] == [1, 2]
    assert win.project.recogniser is win.project.runs.model(1)               # the current run, stored once
    _restore(qtbot, win, 2)
    assert win.project.recogniser is win.project.runs.model(2)
    assert predictions_match(win.project.runs.get(2), _predictions_now(win))
    assert "identical to the recorded run" in win.train.status.text()


def test_a_run_whose_model_was_let_go_is_retrained_from_its_record(qtbot, window, small_settings, shapes_folder):
    win = window
    _import(qtbot, win, shapes_folder)
    win.project.runs.keep_models = 1
    _train(qtbot, win, small_settings)
    _train(qtbot, win, {**small_settings, "seed": 5})
    view = win.train.runs_view
    assert view.table.item(view.row_of(1), COLUMNS.index("Model")).text() == "retrain"
    _restore(qtbot, win, 1)
    assert "Retrained run 1" in win.train.status.text() and "identical" in win.train.status.text()
    assert len(win.project.runs) == 3 and win.project.runs.records[-1]["settings"]["seed"] == 0
    # delete a run: gone from the table and the project
    _click_cell(qtbot, view.table, view.row_of(2), COLUMNS.index("Date"))
    qtbot.mouseClick(view.delete_btn, Qt.LeftButton)
    assert view.table.rowCount() == 2 and view.row_of(2) == -1
    assert [r["id"] for r in win.project.runs.records] == [1, 3] and win.project.dirty
    # the data changes: the runs say they were trained on other data (fingerprint hashed in the background)
    data_col = COLUMNS.index("Data")
    assert "(other data)" not in view.table.item(view.row_of(3), data_col).text()
    win.project.add_images(0, list(win.project.imageset.images[:1]))
    qtbot.waitUntil(lambda: "(other data)" in view.table.item(view.row_of(3), data_col).text(), timeout=10000)


def test_train_panel_says_how_the_data_is_split_and_warns_about_too_few_bursts(qtbot, window, small_settings):
    win = window
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(3), 24)
    images = rng.integers(0, 255, size=(72, 24, 24), dtype=np.uint8)
    images[labels == 1, ::4] = 255
    images[labels == 2, :, ::4] = 255
    groups = np.arange(72) // 6                               # bursts of 6 frames: 4 per class
    groups[labels == 2] = 100                                 # ... but class "c" in one burst
    win.project.reset(ImageSet(images, labels, ["a", "b", "c"], name="bursts", groups=groups))
    win.train.apply_settings(small_settings)
    win.train._edited()
    note = win.train.split_note.text()
    assert "grouped by capture burst: 9 bursts" in note and "⚠ 1 class(es)" in note and "'c'" in note
    assert win.train.split_warning
    _train(qtbot, win, small_settings)
    assert "'c'" in win.train.split_note.text()
    view = win.train.runs_view
    assert "⚠" in view.table.item(view.row_of(1), COLUMNS.index("Split")).text()
    win.project.reset(ImageSet(images, labels, ["a", "b", "c"], name="no bursts"))
    assert "Split by image" in win.train.split_note.text() and not win.train.split_warning


def test_a_hand_edited_record_still_shows_as_a_row():
    from classmap_gui.gui.panels.runs import run_row
    odd = {"id": 4, "date": "yesterday", "settings": {"classmap": "yes", "features_params": [1]},
           "data": {}, "split": {"too_few": "c"}, "latency_speedup": {"single": "fast"}, "accuracy": 0.5}
    cells = dict(zip(COLUMNS, (t for t, _ in run_row(odd))))
    assert cells["Accuracy"] == "50.0%" and cells["ClassMap"] == "—" and cells["Speed-up"] == "—"
    assert cells["Date"] == "yesterday" and cells["Model"] == "retrain"


def test_the_runs_table_says_what_kept_models_add_to_the_project_and_lets_them_go(qtbot, window, small_settings,
                                                                                 shapes_folder, tmp_path):
    """Kept runs grow a project (issue 47: 3 MB to 51 MB, unsaid): the Runs table says how many MB the kept
    models add, *Save* says the file's size and that share, and *Forget kept models* lets them go (the run in
    use stays), so the next save is smaller."""
    win = window
    _import(qtbot, win, shapes_folder)
    _train(qtbot, win, small_settings)
    _train(qtbot, win, {**small_settings, "seed": 3})
    view = win.train.runs_view
    win.train.right.setCurrentWidget(view)
    assert "the models of 1 other kept run(s) add" in view.note.text() and "B to the saved project" in view.note.text()
    path = tmp_path / "kept.cmproj"
    with qtbot.waitSignal(win.runner.finished, timeout=60000):
        win.save_project(str(path))
    said = win.statusBar().currentMessage()
    before = path.stat().st_size
    assert f"({megabytes(before)}" in said, said                              # the file's size, as saved
    assert "kept run(s)" in said and "Forget kept models" in said
    assert view.forget_btn.isEnabled()
    qtbot.mouseClick(view.forget_btn, Qt.LeftButton)
    assert view.table.item(view.row_of(1), COLUMNS.index("Model")).text() == "retrain"   # only its record now
    assert view.table.item(view.row_of(2), COLUMNS.index("Model")).text() == "kept"      # the run in use
    assert win.project.recogniser is win.project.runs.model(2) and win.project.dirty
    assert "kept run(s) add" not in view.note.text() and not view.forget_btn.isEnabled()
    with qtbot.waitSignal(win.runner.finished, timeout=60000):
        win.save_project(str(path))
    assert path.stat().st_size < before
