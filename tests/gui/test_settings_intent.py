"""Settings change only when a person means it: the mouse wheel scrolls the settings past a field
without turning it (it turns a field clicked into first), and a ridge penalty typed as 1.0 is trained
with, not replaced by one training chooses ("auto" is a choice the form shows)."""
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QScrollArea


def _wheel(widget, steps=-3):
    """Turn the mouse wheel over ``widget`` (negative: towards the person, scrolling down)."""
    pos = QPointF(widget.rect().center())
    glob = QPointF(widget.mapToGlobal(widget.rect().center()))
    ev = QWheelEvent(pos, glob, QPoint(), QPoint(0, 120 * steps), Qt.NoButton, Qt.NoModifier,
                     Qt.NoScrollPhase, False)
    QApplication.sendEvent(widget, ev)


def _choose(qtbot, combo, text):
    combo.setFocus()
    qtbot.keyClicks(combo, text)
    assert combo.currentData() == text


def test_wheel_over_a_field_scrolls_the_settings_and_changes_nothing(qtbot, window):
    win = window
    win.resize(1280, 800)
    win.show_panel("train")
    sv = win.train.settings_view
    sv.apply({"features": "hog", "bank": "ova-ridge", "bank_params": {"alpha": 10.0},
              "classmap": {"d": 30, "p": 20}, "test_fraction": 0.2, "seed": 0})
    win.setFocus()
    qtbot.wait(50)
    scroll = next(a for a in win.train.findChildren(QScrollArea) if a.widget() is sv)
    bar = scroll.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=5000)  # the settings are taller than the window: they scroll

    before = sv.values()
    cm = sv.cm_form.widgets
    for w in (cm["d"], cm["p"], sv.test_fraction, sv.features, sv.bank_form.widgets["alpha"]):
        start = bar.value()
        _wheel(w, -1)
        assert sv.values() == before, f"the wheel over {type(w).__name__} changed a setting"
        assert bar.value() > start or bar.value() == bar.maximum()  # the page scrolled instead
        bar.setValue(0)
    qtbot.mouseClick(cm["d"], Qt.LeftButton)  # clicked into: now the wheel turns it
    d = cm["d"].value()
    _wheel(cm["d"], 1)
    assert cm["d"].value() == d + 1


def test_alpha_typed_as_one_is_trained_with_and_auto_is_shown(qtbot, window, shapes_folder):
    win = window
    with qtbot.waitSignal(win.runner.finished, timeout=20000):
        win.dataset.import_folder(str(shapes_folder))
    sv = win.train.settings_view
    _choose(qtbot, sv.bank, "ova-ridge")
    alpha = sv.bank_form.widgets["alpha"]
    assert alpha.currentText() == "auto" and "validation" in alpha.toolTip()  # said before training
    alpha.setFocus()
    alpha.lineEdit().selectAll()
    qtbot.keyClicks(alpha, "1.0")
    assert win.train.settings()["bank_params"] == {"alpha": 1.0}
    with qtbot.waitSignal(win.runner.finished, timeout=90000):
        qtbot.mouseClick(win.train.train_btn, Qt.LeftButton)
    assert win.project.recogniser is not None, win.runner.last_error
    stages = [win.train.stages.item(i).text() for i in range(win.train.stages.count())]
    assert not any("choosing alpha" in s for s in stages), stages
    record = win.project.runs.get(win.project.runs.current_of(win.project.recogniser))
    assert record["settings"]["bank_params"]["alpha"] == 1.0 and not record["chosen"]
