"""The Dataset panel's class list: a class without images shows an empty strip (not the next class's
pictures), and a long class name is shown whole (wrapped) or cut at the end, never in the middle, with
the whole name in the tooltip and in the header above the images; "Recognised as" cuts it at the end too."""
import numpy as np
from PySide6.QtCore import Qt

from gui_drive import import_folder

LONG = "1 · palm forward · turned 60° left · fingers 30° away · leaning 20° right"


def _select(qtbot, d, row):
    item = d.classes.item(row)
    qtbot.mouseClick(d.classes.viewport(), Qt.LeftButton, pos=d.classes.visualItemRect(item).center())
    assert d.current_class() == row


def _icon_pixels(item):
    from PySide6.QtGui import QImage

    img = item.icon().pixmap(140, 28).toImage().convertToFormat(QImage.Format_RGB32)
    return np.frombuffer(img.constBits(), np.uint8, img.sizeInBytes()).reshape(img.height(), -1)[:, :4 * img.width()]


def test_an_emptied_class_shows_no_other_class_s_pictures(qtbot, window, shapes_folder):
    win = window
    import_folder(qtbot, win, shapes_folder)
    d = win.dataset
    _select(qtbot, d, 1)
    d.grid.setFocus()
    qtbot.keyClick(d.grid, Qt.Key_A, Qt.ControlModifier)  # every image of "columns"
    qtbot.mouseClick(d.del_img_btn, Qt.LeftButton)
    assert win.project.imageset.counts().tolist() == [14, 0, 14, 14]
    empty, cross = _icon_pixels(d.classes.item(1)), _icon_pixels(d.classes.item(2))
    rgb = empty.reshape(empty.shape[0], -1, 4)[..., :3]
    assert (rgb == 255).all()  # a blank strip
    assert not (cross.reshape(cross.shape[0], -1, 4)[..., :3] == 255).all()  # the next class still shows its own pictures


def test_a_long_name_is_readable_in_the_list_and_the_header(qtbot, window, shapes_folder):
    win = window
    win.resize(1280, 800)
    import_folder(qtbot, win, shapes_folder)
    d = win.dataset
    d.add_class(LONG)
    _select(qtbot, d, 4)
    item = d.classes.item(4)
    assert item.text().endswith(LONG) and LONG in item.toolTip()
    rect = d.classes.visualItemRect(item)
    assert rect.height() >= 2 * d.classes.fontMetrics().lineSpacing()  # wrapped onto more lines, not cut
    assert d.classes.textElideMode() == Qt.ElideRight
    assert d.grid_label.toolTip().endswith(LONG)  # the header: cut at the end, the whole name as tooltip
    shown = d.grid_label.fontMetrics().horizontalAdvance(super(type(d.grid_label), d.grid_label).text())
    assert shown <= d.grid_label.width()


def test_a_long_name_recognised_is_cut_at_the_end_and_keeps_its_place(qtbot, window, shapes_folder, small_settings):
    from gui_drive import train_by_click

    win = window
    win.resize(1280, 800)
    import_folder(qtbot, win, shapes_folder)
    for row, old in enumerate(list(win.project.class_names)):  # names alike but for their ends, as hand poses
        _select(qtbot, win.dataset, row)
        win.dataset.rename_class(f"{LONG} · with a remark long enough for a third line · {old}")
    train_by_click(qtbot, win, {**small_settings, "classmap": None})
    r = win.run
    win.show_panel("run")
    place = r.cands.mapTo(win, r.cands.rect().topLeft())
    r.add_source("folder", str(shapes_folder / "ring"))
    qtbot.mouseClick(r.full_speed, Qt.LeftButton)
    qtbot.mouseClick(r.start_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: r.stream is None, timeout=20000)
    # the one name on screen: the shape large ("1"), the rest of the class's long name under it
    shape, rest = r.reading.shape, r.reading.orientation
    full = f"{shape.text()} · {rest.text()}"
    assert full in win.project.class_names and rest.toolTip() == rest.text()
    shown = super(type(rest), rest).text()
    assert shown.startswith("palm forward") and shown.endswith("…")  # the start kept, the end cut
    assert r.cands.mapTo(win, r.cands.rect().topLeft()) == place  # the candidates below did not move


def test_no_list_of_classes_in_the_window_cuts_names_in_the_middle(window):
    """Every table and list a class name can appear in (Dataset, Train, Run, Find the hand, the live map)
    drops the end of a long name, which tells orientations apart last; only the file list cuts paths."""
    from PySide6.QtWidgets import QAbstractItemView

    views = window.findChildren(QAbstractItemView)
    assert len(views) >= 5
    middle = [v.objectName() or type(v.parent()).__name__ for v in views
              if v.textElideMode() == Qt.ElideMiddle and v is not window.run.files]
    assert middle == []
