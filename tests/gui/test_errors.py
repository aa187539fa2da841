"""Bad input and a full disk reach the person as a sentence, never as a traceback or a parser's words."""
import errno



def test_corrupt_project_is_a_plain_message_with_details_kept(qtbot, window, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "project.json").write_text('{"format": "classmap-studio-project",\n')
    with qtbot.waitSignal(window.runner.finished, timeout=20000):
        window.open_project(str(bad))
    box = window.error_box
    assert box is not None and box.isVisible()
    text = box.informativeText()
    assert "corrupt" in text and str(bad) in text
    assert "JSONDecodeError" not in text and "char" not in text  # the parser's words are in the details
    assert "JSONDecodeError" in box.detailedText()
    assert box.width() >= 520


def test_full_disk_while_saving_is_said_plainly(qtbot, window, tmp_path, monkeypatch):
    from classmap_gui.gui import mainwindow

    window.new_project((16, 16))
    window.project.add_class("a")

    def full(*_a, **_k):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "p.cmproj"))
    monkeypatch.setattr(mainwindow, "save_project", full)
    with qtbot.waitSignal(window.runner.finished, timeout=10000):
        window.save_project(str(tmp_path / "p.cmproj"))
    text = window.error_box.informativeText()
    assert "disk is full" in text and "Traceback" not in text and "Errno" not in text
    assert window.project.dirty  # nothing pretended to be saved


def test_internal_error_names_the_log(qtbot, window, tmp_path, monkeypatch):
    import sys

    from classmap_gui.gui import errorlog

    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # setup() installs its own; restored after
    monkeypatch.setattr(errorlog, "_log_file", None)
    errorlog.setup(tmp_path / "log")
    with qtbot.waitSignal(window.runner.finished, timeout=10000):
        window.runner.run("Computing", lambda p, s: {}["missing"])
    text = window.error_box.informativeText()
    assert str(tmp_path / "log" / "classmap-studio.log") in text and "KeyError" not in text.split("(")[0]
    assert "KeyError" in (tmp_path / "log" / "classmap-studio.log").read_text()
