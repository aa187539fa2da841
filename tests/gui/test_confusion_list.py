"""The Train results' list of top confusions: sortable, with thumbnails, a click opens the images; past
MATRIX_MAX classes the matrix is left out and the list is what a person sees."""
from types import SimpleNamespace

import numpy as np
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from classmap_gui.core.data.imageset import ImageSet
from classmap_gui.gui.panels.train_results import MATRIX_MAX, TrainResults
from gui_drive import train_hand_pose


def _click_row(qtbot, lst, row):
    view = lst.view
    rect = view.visualRect(view.model().index(row, 2))
    QTest.mouseClick(view.viewport(), Qt.LeftButton, Qt.NoModifier, rect.center())


def test_top_confusions_after_training(qtbot, window):
    win = window
    train_hand_pose(qtbot, win)
    res = win.train.results
    o = win.train.outcome
    true, pred = np.asarray(o.test_set.labels), o.test_pred
    wrong = true != pred
    assert wrong.any()
    pairs = {(int(a), int(b)) for a, b in zip(true[wrong], pred[wrong])}
    lst = res.conf_list
    assert lst.row_count() == len(pairs)
    assert res.conf_tabs.tabText(1) == f"Top confusions ({len(pairs)})"
    counts = [lst.proxy.index(r, 2).data() for r in range(lst.row_count())]
    assert counts == sorted(counts, reverse=True)  # most frequent first
    t, p = lst.pair_at(0)
    assert counts[0] == int(((true == t) & (pred == p)).sum())
    assert lst.proxy.index(0, 0).data(Qt.DecorationRole) is not None  # a thumbnail of the mistake
    # sort by share: click its header
    res.conf_tabs.setCurrentIndex(1)
    header = lst.view.horizontalHeader()
    x = header.sectionViewportPosition(3) + header.sectionSize(3) // 2
    QTest.mouseClick(header.viewport(), Qt.LeftButton, Qt.NoModifier, QPoint(x, 5))
    shares = [lst.proxy.index(r, 3).data() for r in range(lst.row_count())]
    assert header.sortIndicatorSection() == 3
    assert shares in (sorted(shares), sorted(shares, reverse=True))
    # click a row: the images of that confusion open
    _click_row(qtbot, lst, 0)
    t, p = lst.pair_at(0)
    dlg = res.cell_dialog
    assert dlg is not None and dlg.isVisible()
    n = int(((true == t) & (pred == p)).sum())
    assert dlg.grid.count() == n
    assert win.project.class_names[t] in dlg.windowTitle() and win.project.class_names[p] in dlg.windowTitle()
    dlg.close()


def test_many_classes_list_without_matrix(qtbot):
    C = MATRIX_MAX + 50
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(C), 3)
    pred = labels.copy()
    pred[::3] = (labels[::3] + 1) % C  # one mistake per class, to its next class
    pred[:9] = 5                      # and classes 0..2 all predicted as 5 (class 1's "5" is right)
    names = [f"class {i}" for i in range(C)]
    images = rng.integers(0, 255, size=(len(labels), 8, 8), dtype=np.uint8)
    test = ImageSet(images, labels, names)
    per = np.bincount(labels, weights=labels == pred, minlength=C) / 3
    rep = SimpleNamespace(accuracy=float(np.mean(labels == pred)), evaluations_per_query=C, brute_force_evaluations=C,
                          evaluations_ratio=1.0, confusion=None, per_class_accuracy=per)
    res = TrainResults()
    qtbot.addWidget(res)
    res.show()
    res.show_report(rep, names, test, pred, 1.0)
    assert res.confusion is None and not res.conf_tabs.isTabEnabled(0)  # no C x C matrix
    assert res.conf_tabs.currentIndex() == 1
    lst = res.conf_list
    assert lst.row_count() == len({(a, b) for a, b in zip(labels, pred) if a != b})
    assert lst.proxy.index(0, 2).data() == 3 and lst.pair_at(0) in {(0, 5), (2, 5)}  # 3 of 3 images wrong
    assert lst.proxy.index(0, 3).data() == 100.0
    _click_row(qtbot, lst, 0)
    assert res.cell_dialog.grid.count() == 3
