"""Run on image files and folders, export a recogniser, the app's self-test entry point."""
import json




def _trained(qtbot, win, folder, settings):
    with qtbot.waitSignal(win.runner.finished, timeout=20000):
        win.dataset.import_folder(str(folder))
    win.train.apply_settings(settings)
    with qtbot.waitSignal(win.runner.finished, timeout=60000):
        win.train.start_training()
    assert win.project.recogniser is not None, win.runner.last_error


def test_run_on_a_folder_of_images_and_single_step(qtbot, window, shapes_folder, small_settings):
    win = window
    _trained(qtbot, win, shapes_folder, small_settings)
    win.run.add_source("folder", str(shapes_folder / "cross"))
    win.run.pause_btn.setChecked(True)
    win.run.full_speed.setChecked(True)
    assert win.run.start()
    for k in range(3):
        win.run.step_btn.click()
        qtbot.waitUntil(lambda k=k: win.run.frames_shown == k + 1, timeout=5000)
    assert win.run.winner.text() == "cross"
    win.run.pause_btn.setChecked(False)
    qtbot.waitUntil(lambda: win.run.stream is None, timeout=20000)
    assert "shown all 14 images" in win.run.last_message
    assert win.run.frames_shown == 14


def test_export_writes_a_standalone_predictor(qtbot, window, shapes_folder, small_settings, tmp_path):
    win = window
    _trained(qtbot, win, shapes_folder, small_settings)
    out = tmp_path / "export"
    with qtbot.waitSignal(win.runner.finished, timeout=30000):
        assert win.export(str(out))
    assert (out / "predict.py").exists() and (out / "model.json").exists(), win.runner.last_error
    assert json.loads((out / "model.json").read_text())["class_names"] == ["bars", "columns", "cross", "ring"]


def test_self_test_entry_point(qtbot, capsys):
    from classmap_gui.gui.app import main

    assert main(["--self-test"]) == 0
    out = capsys.readouterr().out
    assert "self-test passed" in out and "graph filter index ok" in out  # faiss works where the app runs
