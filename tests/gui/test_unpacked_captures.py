"""Opening a .cmproj unpacks its captures to a temporary folder the project owns: the folder is there while
the project is open (new captures go beside the old ones) and is gone once the project is put away, so
opening archives does not litter the temporary folder."""
import tempfile

import numpy as np


def _archive_with_a_capture(qtbot, window, tmp_path):
    window.new_project((16, 16))
    window.project.add_class("fist")
    frame = np.full((24, 24, 3), 120, np.uint8)
    shot = window.project.save_capture(0, frame)
    window.project.add_images(0, [frame[:16, :16, 0]], [str(shot)])
    with qtbot.waitSignal(window.runner.finished, timeout=20000):
        window.save_project(str(tmp_path / "hands.cmproj"))
    assert not window.project.dirty
    return tmp_path / "hands.cmproj"


def _opened(qtbot, window, path):
    with qtbot.waitSignal(window.runner.finished, timeout=20000):
        window.open_project(str(path))
    assert window.project.path == path, window.runner.last_error


def test_unpacked_captures_live_while_open_and_go_with_the_project(qtbot, window, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    archive = _archive_with_a_capture(qtbot, window, tmp_path)

    _opened(qtbot, window, archive)
    unpacked = window.project.unpacked
    assert unpacked is not None and unpacked.parent == tmp_path / "tmp"
    assert list(unpacked.rglob("*.png")), "the archive's capture was not unpacked"
    assert window.project.capture_dir(0).parent == unpacked  # new captures go beside the unpacked ones

    _opened(qtbot, window, archive)  # opening it again: the first unpacked copy is deleted
    second = window.project.unpacked
    assert second != unpacked and not unpacked.exists() and second.exists()

    window.new_project((16, 16))  # putting the project away deletes its copy as well
    assert not second.exists() and window.project.unpacked is None
    assert list((tmp_path / "tmp").iterdir()) == []


def test_a_failed_open_and_closing_the_window_leave_nothing_behind(qtbot, window, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    bad = tmp_path / "bad.cmproj"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    with qtbot.waitSignal(window.runner.finished, timeout=20000):
        window.open_project(str(bad))
    assert window.error_box is not None and window.error_box.isVisible()
    window.error_box.close()
    assert list((tmp_path / "tmp").iterdir()) == []

    archive = _archive_with_a_capture(qtbot, window, tmp_path)
    _opened(qtbot, window, archive)
    unpacked = window.project.unpacked
    assert unpacked.exists()
    window.close()
    assert not unpacked.exists()
