"""Issue 40 item 5: a file the app refuses is one log line, not a traceback: opening a `.cmproj` of random
bytes shows "Opening garbage.cmproj failed." and writes no traceback to stderr or the log."""
import logging
import os


def test_a_refused_project_is_one_log_line_and_no_traceback(qtbot, window, tmp_path, capfd, caplog):
    bad = tmp_path / "garbage.cmproj"
    bad.write_bytes(os.urandom(4096))
    capfd.readouterr()
    with caplog.at_level(logging.INFO, logger="classmap_gui"), \
            qtbot.waitSignal(window.runner.finished, timeout=20000):
        window.open_project(str(bad))
    assert window.error_box is not None and window.error_box.isVisible()
    assert window.error_box.text() == "Opening garbage.cmproj failed."
    err = capfd.readouterr().err
    assert "Traceback" not in err and "task failed" not in err, err
    records = [r for r in caplog.records if r.name.startswith("classmap_gui")]
    assert all("Traceback" not in r.getMessage() and "\n" not in r.getMessage() for r in records), \
        [r.getMessage()[:300] for r in records]
    assert any(str(bad) in r.getMessage() for r in records)  # the refusal is logged, on one line
