"""The Train panel's speed column (issue 39, major 5): before training, every feature map of the registry shows
its milliseconds per image and live frames/s measured on this computer (in a worker thread, cached), and a
warning says when the chosen one cannot keep up with a camera."""
import threading

from PySide6.QtCore import Qt

from gui_drive import import_folder


def _tab(qtbot, win, name):
    bar = win.tabs.tabBar()
    i = [win.tabs.tabText(k) for k in range(win.tabs.count())].index(name)
    qtbot.mouseClick(bar, Qt.LeftButton, pos=bar.tabRect(i).center())


def _rows(col):
    t = col.table
    return {t.item(r, 0).text(): (t.item(r, 1).text(), t.item(r, 2).text()) for r in range(t.rowCount())}


def test_the_train_panel_shows_each_feature_maps_speed_and_warns_when_live_cannot_keep_up(
        qtbot, window, shapes_folder, tmp_path, monkeypatch):
    from classmap_gui.core import registry
    from classmap_gui.gui import feature_speed as fs

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    threads = []
    real = fs.measure

    def measure(*a, **k):
        threads.append(threading.current_thread() is threading.main_thread())
        return real(*a, **k)
    monkeypatch.setattr(fs, "measure", measure)
    win = window
    import_folder(qtbot, win, shapes_folder)
    _tab(qtbot, win, "Train")
    col = win.train.settings_view.speed
    assert col.isVisible()
    assert set(_rows(col)) == set(registry.feature_names())             # generic over the registry's maps
    qtbot.waitUntil(lambda: all("…" not in ms and "measuring" not in f for ms, f in _rows(col).values()),
                    timeout=240000)
    assert threads and not any(threads)                                 # never measured on the UI thread
    for name, (ms, fps) in _rows(col).items():
        assert fps == "cannot run" or any(ch.isdigit() for ch in fps), (name, fps)
        if fps[:1].isdigit() and ms[:1].isdigit() and float(ms) >= 1:        # the two columns agree: 1000 / ms
            assert abs(float(fps) - 1000 / float(ms)) <= max(1.0, 0.06 * float(fps)), (name, ms, fps)
    chosen = win.train.settings_view.features.currentData()
    assert col.table.item(list(_rows(col)).index(chosen), 0).font().bold()
    assert (tmp_path / "cache").rglob(fs.CACHE_FILE)                     # kept for the next start

    # a camera faster than anything here: the chosen map cannot keep up, and the panel says so
    monkeypatch.setattr(fs, "CAMERA_FPS", 1e9)
    combo = win.train.settings_view.features
    combo.setFocus()
    qtbot.keyClick(combo, Qt.Key_Down if combo.currentIndex() + 1 < combo.count() else Qt.Key_Up)
    qtbot.waitUntil(lambda: col.warning.isVisible(), timeout=120000)
    assert combo.currentData() in col.warning.text() and "cannot keep up" in col.warning.text()

    # the next window reads the cache: figures at once, nothing measured again
    n = len(threads)
    col.results.clear()
    col._next()
    assert len(threads) == n or col.busy
