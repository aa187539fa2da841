"""Explore's map of the whole embedding, driven as a person does: compute, choose PCA / t-SNE, colour by
a factor, search a class, click a star, click a neighbour."""
import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from classmap_gui.core.data.hand_pose import class_factors
from classmap_gui.core.train.training import TrainConfig, split_parts
from gui_drive import POSE_SETTINGS, train_hand_pose


def _choose(combo, text):
    i = combo.findText(text) if combo.findData(text) < 0 else combo.findData(text)
    assert i >= 0, f"{text!r} not offered"
    combo.setCurrentIndex(i)


def _click_point(qtbot, plot, x, y):
    """Press and release the left button on the plot where data point (x, y) is drawn."""
    vb = plot.getPlotItem().vb
    scene = vb.mapViewToScene(pg.Point(float(x), float(y)))
    pos = plot.mapFromScene(scene)
    QTest.mouseClick(plot.viewport(), Qt.LeftButton, Qt.NoModifier, QPoint(int(pos.x()), int(pos.y())))


def _brush_rgb(item):
    return [tuple(b.color().getRgb()[:3]) for b in item.data["brush"]]


def test_map_pca_tsne_colour_search_and_click(qtbot, window):
    win = window
    ims = train_hand_pose(qtbot, win)
    ex = win.explore
    win.show_panel("explore")
    with qtbot.waitSignal(win.runner.finished, timeout=60000):
        qtbot.mouseClick(ex.compute_btn, Qt.LeftButton)
    assert ex.data is not None, win.runner.last_error
    C = ims.n_classes
    # every class is on the map (not the first 12), and every held-out dot
    assert len(ex.class_points.data) == C == 30
    assert len(ex.points.data) == len(ex.data.labels) > 0
    stars = np.c_[ex.class_points.data["x"], ex.class_points.data["y"]]
    assert np.allclose(stars, ex.data.layouts["pca"][:C])

    # colour by shape: stars of one shape share a colour, the five shapes have five colours
    assert [ex.colour_by.itemText(i) for i in range(ex.colour_by.count())][:4] == ["shape", "yaw", "pitch", "roll"]
    _choose(ex.colour_by, "shape")
    shape = class_factors(ims.class_names)["shape_index"]
    cols = _brush_rgb(ex.class_points)
    assert len(set(cols)) == 5
    assert all(len({cols[c] for c in np.flatnonzero(shape == s)}) == 1 for s in np.unique(shape))
    _choose(ex.colour_by, "yaw")
    yaw = class_factors(ims.class_names)["yaw"]
    cols = _brush_rgb(ex.class_points)
    assert len(set(cols)) == len(np.unique(yaw))
    assert "+60°" in ex.map.legend.text() or "+30°" in ex.map.legend.text()

    # t-SNE in the background, then drawn
    with qtbot.waitSignal(win.runner.finished, timeout=120000):
        _choose(ex.mode, "tsne")
    assert "tsne" in ex.data.layouts, win.runner.last_error
    stars = np.c_[ex.class_points.data["x"], ex.class_points.data["y"]]
    assert np.allclose(stars, ex.data.layouts["tsne"][:C])
    assert ex.plot.getPlotItem().getAxis("bottom").labelText == "t-SNE 1"

    # search: type part of a name, press Enter
    want = next(i for i, n in enumerate(ims.class_names) if n.startswith("L ·"))
    ex.detail.search.clear()
    QTest.keyClicks(ex.detail.search, "l · palm")
    QTest.keyClick(ex.detail.search, Qt.Key_Return)
    assert ex.selected == want
    assert ex.detail.title.text() == ims.class_names[want]
    n_imgs = ex.detail.images.count()
    assert 0 < n_imgs <= 12
    train_part = split_parts(ims.labels, TrainConfig.from_dict(POSE_SETTINGS))["train"]
    assert ex.detail.images_label.text() == f"Training images ({int((ims.labels[train_part] == want).sum())})"
    assert ex.detail.nearest.count() == 8
    near_names = [ex.detail.nearest.item(r).data(Qt.UserRole) for r in range(8)]
    assert want not in near_names
    ring = ex.map.chosen.data
    assert np.allclose([ring["x"][0], ring["y"][0]], ex.data.layouts["tsne"][want])

    # click a star on the map
    other = (want + 7) % C
    x, y = ex.data.layouts["tsne"][other]
    win.resize(1400, 900)
    qtbot.wait(50)
    _click_point(qtbot, ex.plot, x, y)
    qtbot.waitUntil(lambda: ex.selected == other or ex.selected != want, timeout=2000)
    assert ex.selected is not None and ex.selected != want
    # the star clicked is the one under the mouse (another may sit on the same pixel)
    sel = ex.data.layouts["tsne"][ex.selected]
    px = ex.plot.getPlotItem().vb.viewPixelSize()
    assert abs(sel[0] - x) < 12 * px[0] and abs(sel[1] - y) < 12 * px[1]

    # choose a nearest class from the list
    first = ex.detail.nearest.item(0)
    target = first.data(Qt.UserRole)
    rect = ex.detail.nearest.visualItemRect(first)
    QTest.mouseClick(ex.detail.nearest.viewport(), Qt.LeftButton, Qt.NoModifier, rect.center())
    assert ex.selected == target
    assert ex.detail.title.text() == ims.class_names[target]

    # a search that matches nothing says so and keeps the chosen class
    ex.detail.search.clear()
    QTest.keyClicks(ex.detail.search, "no such hand")
    QTest.keyClick(ex.detail.search, Qt.Key_Return)
    assert ex.selected == target and "No class matches" in ex.detail.title.text()

    # pick a class from the completer's list as it drops down while typing
    ex.detail.search.clear()
    QTest.keyClicks(ex.detail.search, "y · palm")
    popup = ex.detail.completer.popup()
    qtbot.waitUntil(popup.isVisible, timeout=2000)
    QTest.keyClick(popup, Qt.Key_Down)
    QTest.keyClick(popup, Qt.Key_Down)  # the second suggestion
    QTest.keyClick(popup, Qt.Key_Return)
    ys = [i for i, n in enumerate(ims.class_names) if "y · palm" in n.lower()]
    assert ex.selected == ys[1] and ex.detail.title.text() == ims.class_names[ys[1]]

    # right / wrong: every wrongly recognised dot is drawn in a colour no right one has
    _choose(ex.colour_by, "right/wrong")
    right = ex.data.pred == ex.data.labels
    assert right.any() and (~right).any()
    cols = _brush_rgb(ex.points)
    order = ex.points.data["data"].astype(int)  # dot index of each drawn point
    by_dot = dict(zip(order.tolist(), cols))
    right_cols = {by_dot[i] for i in np.flatnonzero(right)}
    wrong_cols = {by_dot[i] for i in np.flatnonzero(~right)}
    assert right_cols and len(right_cols) == 1 and not (right_cols & wrong_cols)
    assert "right" in ex.map.legend.text() and "wrong shape" in ex.map.legend.text()


def test_tsne_cancel_falls_back_to_pca(qtbot, window):
    win = window
    train_hand_pose(qtbot, win)
    ex = win.explore
    with qtbot.waitSignal(win.runner.finished, timeout=60000):
        ex.compute()
    with qtbot.waitSignal(win.runner.finished, timeout=60000):
        _choose(ex.mode, "tsne")
        win.runner.cancel()
    assert "tsne" not in ex.data.layouts
    assert ex.map_mode() == "pca" and "cancelled" in ex.info.text()
    # chosen, left for PCA, chosen again while it still runs: one task, drawn when it ends
    with qtbot.waitSignal(win.runner.finished, timeout=120000):
        _choose(ex.mode, "tsne")
        _choose(ex.mode, "pca")
        _choose(ex.mode, "tsne")
        assert "still arranging" in ex.info.text()
    qtbot.waitUntil(lambda: "tsne" in ex.data.layouts, timeout=5000)
    C = len(ex.map_names)
    stars = np.c_[ex.class_points.data["x"], ex.class_points.data["y"]]
    assert np.allclose(stars, ex.data.layouts["tsne"][:C])


def test_a_key_for_25_shapes_and_a_search_that_finds_nothing_says_so_at_once(qtbot, window):
    from classmap_gui.core.data.hand_pose import SMALL_SHAPES, generate_hand_pose

    win = window
    ims = generate_hand_pose(shapes=",".join(SMALL_SHAPES), orientations=1, images_per_class=6, size=(32, 32))
    win.project.reset(ims)
    win.train.apply_settings({**POSE_SETTINGS, "classmap": {**POSE_SETTINGS["classmap"], "d": 6}})
    with qtbot.waitSignal(win.runner.finished, timeout=120000):
        qtbot.mouseClick(win.train.train_btn, Qt.LeftButton)
    ex = win.explore
    win.resize(1280, 800)
    win.show_panel("explore")
    with qtbot.waitSignal(win.runner.finished, timeout=60000):
        qtbot.mouseClick(ex.compute_btn, Qt.LeftButton)
    _choose(ex.colour_by, "shape")
    key = ex.map.legend
    shapes = sorted(set(class_factors(ims.class_names)["shape"]))
    assert len(shapes) == 25 and sorted(key.names()) == shapes  # every shape has its swatch and name
    assert "25 groups" in key.note.text()
    for i in (0, key.list.count() - 1):  # a key taller than its rows scrolls: the first and the last are reachable
        key.list.scrollToItem(key.list.item(i))
        assert key.list.viewport().rect().intersects(key.list.visualItemRect(key.list.item(i)))
    ex.detail.search.setFocus()
    QTest.keyClicks(ex.detail.search, "no such hand")  # no Return: it says so as you type
    assert "No class matches 'no such hand'" in ex.detail.title.text()
    QTest.keyClick(ex.detail.search, Qt.Key_A, Qt.ControlModifier)
    QTest.keyClicks(ex.detail.search, "bent-B")
    assert "No class matches" not in ex.detail.title.text()


def test_a_model_without_classmap_gets_its_map_from_one_press(qtbot, window, shapes_folder):
    """The first journey with 4 classes: the proposal leaves ClassMap off (it saves nothing on 4 classes), so
    Explore says why there is no map and offers one button that trains again with ClassMap on and draws it."""
    from gui_drive import import_folder

    win = window
    import_folder(qtbot, win, shapes_folder)
    assert win.train.settings()["classmap"] is None                     # the proposal for 4 classes
    with qtbot.waitSignal(win.runner.finished, timeout=90000):
        qtbot.mouseClick(win.train.train_btn, Qt.LeftButton)
    assert win.project.recogniser is not None and win.project.recogniser.classmap is None
    win.show_panel("explore")
    ex = win.explore
    assert ex.classmap_btn.isVisible() and "without ClassMap" in ex.info.text()
    assert not ex.map.plot.isVisible()                                   # no empty axes
    qtbot.mouseClick(ex.classmap_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: ex.data is not None and not win.runner.busy, timeout=120000)
    assert win.project.recogniser.classmap is not None, win.runner.last_error
    assert ex.map.plot.isVisible() and ex.map.n_classes == 4 and not ex.classmap_btn.isVisible()
    assert win.train.settings()["classmap"]["p"] < 4                     # the filter keeps fewer than all
