"""OpenCV's own log lines kept off stderr while the app decodes images or runs a network (issue 49)."""
from types import SimpleNamespace

from classmap_gui.core.guards import opencv_log


def test_quiet_opencv_silences_and_restores_the_log_level_with_either_api(monkeypatch):
    levels = [3]
    top_level = SimpleNamespace(setLogLevel=levels.append, getLogLevel=lambda: levels[-1])  # no cv2.utils
    monkeypatch.setattr(opencv_log, "cv2", top_level)
    with opencv_log.quiet_opencv():
        assert levels[-1] == 0
    assert levels[-1] == 3
    log = SimpleNamespace(LOG_LEVEL_SILENT=0, setLogLevel=levels.append, getLogLevel=lambda: levels[-1])
    monkeypatch.setattr(opencv_log, "cv2", SimpleNamespace(utils=SimpleNamespace(logging=log)))
    levels.append(4)
    with opencv_log.quiet_opencv(), opencv_log.quiet_opencv():
        assert levels[-1] == 0
    assert levels[-1] == 4
