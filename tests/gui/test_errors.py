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


def test_a_project_with_absurd_saved_settings_opens_with_one_message_naming_each(qtbot, window, tmp_path, caplog):
    """Issue 49 item 3: wrong types and absurd values in project.json open as their defaults, named once."""
    import numpy as np

    from classmap_gui.core.data import ImageSet
    from classmap_gui.core.project import Project, save_project
    from classmap_gui.core.train.training import TrainConfig, train

    rng = np.random.default_rng(0)
    ims = ImageSet(rng.integers(0, 256, (24, 8, 8), dtype=np.uint8), np.arange(24) % 3, ["a", "b", "c"])
    rec = train(ims, TrainConfig(features="pixels", bank="ova-ridge", test_fraction=0.25)).recogniser
    bad = {"capture_target": 2 ** 40, "seed": 1e30, "features": "pixels", "features_params": [1],
           "bank": "ova-ridge", "bank_params": {}, "classmap": {"d": "abc", "p": 1e30}, "test_fraction": 0.25}
    path = save_project(Project(ims, rec, settings=bad), tmp_path / "p")
    with qtbot.waitSignal(window.runner.finished, timeout=20000):
        window.open_project(str(path))
    qtbot.waitUntil(lambda: window.project.path == path and window.error_box is not None, timeout=20000)
    text = window.error_box.informativeText()
    for name in ("capture_target", "seed", "features_params", "classmap.d", "classmap.p"):
        assert f"saved setting {name} = " in text, text
    assert "Traceback" not in text and "internal" not in text.lower()
    assert window.dataset.capture.target.value() == 50
    shown = window.train.settings()
    assert shown["seed"] == 0 and shown["features"] == "pixels"
    assert not any(r.levelname == "ERROR" for r in caplog.records)
