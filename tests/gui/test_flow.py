"""The whole flow a person follows: import a folder -> train (and cancel once) -> run on a video
file standing in for the camera -> explore -> save -> reopen -> the same predictions."""
import numpy as np




def _idle(qtbot, win, timeout=60000):
    qtbot.waitUntil(lambda: not win.runner.busy, timeout=timeout)


def _import_and_train(qtbot, win, folder, small_settings):
    with qtbot.waitSignal(win.runner.finished, timeout=20000):
        win.dataset.import_folder(str(folder))
    win.train.apply_settings(small_settings)
    with qtbot.waitSignal(win.runner.finished, timeout=60000):
        assert win.train.start_training()
    assert win.project.recogniser is not None, win.runner.last_error


def test_whole_flow(qtbot, window, small_settings, shapes_folder, shapes_video, tmp_path, mosaic_tile_count):
    win = window
    with qtbot.waitSignal(win.runner.finished, timeout=20000):
        win.dataset.import_folder(str(shapes_folder))

    # -- train, cancelled at once: nothing trained, the app says so and stays usable
    win.train.apply_settings(small_settings)
    assert win.train.settings()["features_params"] == small_settings["features_params"]
    with qtbot.waitSignal(win.runner.cancelled, timeout=30000):
        assert win.train.start_training()
        win.train.cancel_btn.click()
    _idle(qtbot, win)
    assert win.project.recogniser is None
    assert "cancelled" in win.train.status.text().lower()

    # -- train for real
    with qtbot.waitSignal(win.runner.finished, timeout=60000):
        assert win.train.start_training()
    assert win.project.recogniser is not None, win.runner.last_error
    rep = win.project.report
    assert win.train.figures["accuracy"].text() == f"{100 * rep.accuracy:.1f}%"
    assert rep.accuracy >= 0.75  # four easy shapes
    assert win.train.per_class.rowCount() == 4
    assert win.train.stages.count() >= 3  # per-stage progress was shown
    conf = win.train.confusion
    assert conf.shape == (4, 4) and conf.sum() == rep.n
    i, j = np.unravel_index(np.argmax(conf - np.diag(np.diag(conf)) + np.eye(4, dtype=int) * -1), conf.shape)
    dlg = win.train.open_cell(int(i), int(j))
    assert dlg.grid.count() == conf[i, j]

    # -- run on the video file as the camera
    win.run.add_source("video", str(shapes_video))
    win.run.full_speed.setChecked(True)
    assert win.run.start()
    qtbot.waitUntil(lambda: win.run.stream is None, timeout=30000)
    assert win.run.frames_shown > 10
    assert "end of video" in win.run.last_message
    assert win.run.winner.text() in win.project.class_names
    assert 1 <= win.run.cands.rowCount() <= 3
    assert "features" in win.run.timings.text() and "refine" in win.run.timings.text()
    assert win.run.fps_label.text().endswith("frames/s")
    assert float(win.run.fps_label.text().split()[0]) > 0  # a measured figure, not the initial "–"
    n0 = len(win.project.imageset)
    assert win.run.snapshot(0)
    assert len(win.project.imageset) == n0 + 1

    # -- explore
    with qtbot.waitSignal(win.runner.finished, timeout=60000):
        assert win.explore.compute()
    data = win.explore.data
    assert data is not None, win.runner.last_error
    assert len(win.explore.points.data) == len(data.labels)  # all four classes shown
    assert len(win.explore.class_points.data) == 4
    assert mosaic_tile_count(data.mosaic, data.patch_size, columns=data.columns, scale=data.scale) == 16
    assert data.mosaic_k == 16
    # the map is drawn first, the curve, centroids and candidates a turn of the event loop later, as a person sees
    qtbot.waitUntil(lambda: win.explore.trade_curve.getData()[0] is not None, timeout=5000)
    xs, ys = win.explore.trade_curve.getData()
    assert len(xs) >= 2 and ys.max() <= 1.0
    win.explore.mode.setCurrentIndex(win.explore.mode.findData("fig2"))  # the paper's two-classifier view
    win.explore.dim_b.setValue(2)
    assert "classifier of" in win.explore.dims_label.text()
    win.explore.choose(1)
    assert win.explore.cands.rowCount() >= 1
    texts = [win.explore.cands.item(r, 0).text() for r in range(win.explore.cands.rowCount())]
    assert sum("true class" in t for t in texts) == 1  # marked among the candidates, or said to be missing

    # -- save, reopen, same predictions
    images = win.project.imageset.images[::3]
    before = win.project.recogniser.predict(images, top=3)
    path = tmp_path / "proj"
    with qtbot.waitSignal(win.runner.finished, timeout=30000):
        assert win.save_project(str(path))
    assert not win.project.dirty and (path / "project.json").exists()
    assert str(path) in [str(p) for p in win.recent.list()]  # File > Open recent
    assert win.recent_menu.actions()[0].text() == str(path)
    assert win.new_project((32, 32))  # a saved project: replaced without a question
    assert len(win.project.imageset) == 0 and win.project.class_names == []
    with qtbot.waitSignal(win.runner.finished, timeout=30000):
        assert win.open_project(str(path))
    assert win.project.recogniser is not None, win.runner.last_error
    assert len(win.project.imageset) == n0 + 1
    after = win.project.recogniser.predict(images, top=3)
    np.testing.assert_array_equal(before.top_classes, after.top_classes)
    # the same model: the same classes, scores to float32 rounding (BLAS may split the GEMM another way)
    np.testing.assert_allclose(before.top_scores, after.top_scores, rtol=1e-5, atol=1e-6)
    assert win.train.settings()["features_params"] == small_settings["features_params"]
    _idle(qtbot, win)  # the reopened recogniser is evaluated again in the background
    assert win.train.figures["accuracy"].text().endswith("%") and win.train.per_class.rowCount() == 4


def test_training_error_shows_a_dialog_and_app_stays_usable(qtbot, window, small_settings, shapes_folder):
    win = window
    with qtbot.waitSignal(win.runner.finished, timeout=20000):
        win.dataset.import_folder(str(shapes_folder))
    win.dataset.add_class("empty")  # a class with no images cannot be trained
    with qtbot.waitSignal(win.runner.failed, timeout=30000):
        win.train.start_training()
    _idle(qtbot, win)
    assert win.error_box is not None and "empty" in win.error_box.informativeText()
    assert win.train.train_btn.isEnabled()
    win.dataset.classes.setCurrentRow(4)
    win.dataset.delete_class(confirm=False)
    win.train.apply_settings(small_settings)
    with qtbot.waitSignal(win.runner.finished, timeout=60000):
        win.train.start_training()
    assert win.project.recogniser is not None


def test_run_without_model_or_source_says_what_to_do(qtbot, window, small_settings, shapes_folder, monkeypatch):
    from classmap_gui.gui import camera

    monkeypatch.setattr(camera, "list_cameras", lambda: [])
    assert not window.run.start()
    assert "train one" in window.run.last_message
    _import_and_train(qtbot, window, shapes_folder, small_settings)
    assert window.run.refresh_cameras() == []
    assert "No camera found" in window.run.last_message
    window.run.sources.combo.clear()
    assert not window.run.start()
    assert "No source" in window.run.last_message
