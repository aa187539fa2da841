"""The "Run training on" setting: a Dask scheduler that cannot be reached is a clear error, the app
stays usable and trains on this machine again when switched back."""


def test_unreachable_scheduler_reports_and_app_stays_usable(qtbot, window, small_settings, shapes_folder):
    win = window
    with qtbot.waitSignal(win.runner.finished, timeout=20000):
        win.dataset.import_folder(str(shapes_folder))
    win.train.apply_settings(small_settings)
    win.train.settings_view.run_on.setCurrentIndex(1)
    assert win.train.settings_view.scheduler.isEnabled()
    win.train.settings_view.scheduler.setText("tcp://127.0.0.1:9")  # discard port: nothing listens
    with qtbot.waitSignal(win.runner.finished, timeout=60000):
        win.train.start_training()
    assert win.project.recogniser is None
    assert "tcp://127.0.0.1:9" in win.runner.last_error and "scheduler" in win.runner.last_error

    win.train.settings_view.run_on.setCurrentIndex(0)
    assert win.train.scheduler_address() is None
    with qtbot.waitSignal(win.runner.finished, timeout=120000):
        win.train.start_training()
    assert win.project.recogniser is not None, win.runner.last_error
