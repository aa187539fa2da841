"""The window fits a 1366x768 laptop screen with nothing cut off and opens at the size it last closed at; the
hand glyph is drawn from the app's resources, so it shows on a system without an emoji font (issue 39)."""
import numpy as np
from PySide6.QtCore import QSize


def test_the_window_fits_a_laptop_screen_and_remembers_its_size(qtbot, window, tmp_path):
    from classmap_gui.gui.mainwindow import MainWindow

    win = window
    # 768 px less the title bar and a panel (~60 px): every panel fits, nothing is pushed off the screen
    assert win.width() <= 1366 and win.height() <= 708, win.size()
    assert win.minimumSizeHint().width() <= 1366 and win.minimumSizeHint().height() <= 708, win.minimumSizeHint()
    for i in range(win.tabs.count()):
        win.tabs.setCurrentIndex(i)
        hint = win.tabs.widget(i).minimumSizeHint()
        assert hint.width() <= 1366 and hint.height() <= 680, (win.tabs.tabText(i), hint)
    win.resize(1200, 690)
    qtbot.waitUntil(lambda: win.size() == QSize(1200, 690), timeout=3000), (win.size(), win.minimumSizeHint(), win.minimumSize())
    win.close()                                                          # the size is kept ...
    again = MainWindow()
    again.setProperty("no_confirm", True)
    qtbot.addWidget(again)
    assert again.size() == QSize(1200, 690)                              # ... and the next window opens at it


def test_the_hand_glyph_is_drawn_from_resources(qtbot, window):
    from classmap_gui.gui.hand_model import hand_icon, offer_hand_model

    btn = offer_hand_model(window)
    assert "✋" not in btn.text() and "81 shapes × 30 orientations" in btn.text()
    assert not btn.icon().isNull()
    img = hand_icon().pixmap(32, 32).toImage()
    px = np.array([[img.pixelColor(x, y).alpha() for x in range(32)] for y in range(32)])
    assert (px > 0).mean() > 0.2                                         # the hand is drawn, not an empty box
    lit = {img.pixelColor(x, y).name() for x in range(32) for y in range(32) if img.pixelColor(x, y).alpha() > 200}
    assert len(lit) > 2                                                  # skin and outline, not a blank tile


def test_the_window_fits_a_1024_by_600_screen(qtbot, window):
    """The smallest window is at most 1024 x 600 (a netbook screen), with the hand-model offer in the status bar;
    dragged to that size, it is that size."""
    from classmap_gui.gui.hand_model import offer_hand_model

    win = window
    offer_hand_model(win)
    for i in range(win.tabs.count()):
        win.tabs.setCurrentIndex(i)
        hint = win.minimumSizeHint()
        assert hint.width() <= 1024 and hint.height() <= 600, (win.tabs.tabText(i), hint)
    win.resize(1024, 600)
    qtbot.waitUntil(lambda: win.size() == QSize(1024, 600), timeout=3000)
