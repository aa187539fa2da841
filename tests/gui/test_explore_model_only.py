"""Explore on a model opened without its images (the hand-pose model, File > Open model): Compute views draws
what the model holds and says plainly what it lacks, never "Something went wrong" (issue 39, major 1)."""
import numpy as np
import pytest
from PySide6.QtCore import Qt


def _open_alone(win, rec, tmp_path):
    rec.save(tmp_path / "model")
    with_done = win.open_model(str(tmp_path / "model" / "model.json"))
    assert with_done


@pytest.mark.filterwarnings("error::RuntimeWarning")   # numpy's "mean of empty slice" on stderr is not saying it
def test_compute_views_on_a_model_without_images(qtbot, window, hand_detector, tmp_path):
    win = window
    errors = []
    win.runner.failed.connect(lambda *a: errors.append(a))
    from classmap_gui.gui import errorlog

    errorlog.on_error(lambda m, d: errors.append((m, d)))
    with qtbot.waitSignal(win.runner.finished, timeout=60000):
        _open_alone(win, hand_detector, tmp_path)
    assert win.project.recogniser is not None and len(win.project.imageset) == 0
    win.show_panel("explore")
    ex = win.explore
    with qtbot.waitSignal(win.runner.finished, timeout=60000):
        qtbot.mouseClick(ex.compute_btn, Qt.LeftButton)
    # the second half of the drawing comes on a later turn of the event loop: waited for, not timed
    qtbot.waitUntil(lambda: "no held-out images" in ex.trade_note.text().lower(), timeout=30000)
    ex.grab()                                                            # paint every view
    assert not errors, errors
    assert "no held-out images" in ex.info.text().lower()                # what it lacks, said plainly
    assert len(ex.map_names) == hand_detector.n_classes                  # the classes are still on the map
    assert "no held-out images" in ex.trade_note.text().lower() and ex.trade_note.isVisible()
    # a hand model (hand classes and a background class) is coloured by its shapes and angles
    choices = [ex.colour_by.itemText(i) for i in range(ex.colour_by.count())]
    assert {"shape", "yaw", "pitch", "roll"} <= set(choices), choices
    ex.colour_by.setCurrentText("yaw")
    ex.grab()
    assert not errors, errors


def test_the_accuracy_plot_draws_with_nan_points(qtbot, window, hand_detector):
    from classmap_gui.core.explore.views import TradeOff

    ex = window.explore
    t = TradeOff(np.array([1, 2, 4]), np.array([0.5, np.nan, 0.9], np.float32), np.array([1, 2, np.nan], np.float32),
                 float("nan"), 7.0)
    ex.show_trade(t)
    ex.trade_plot.grab()                                                 # drawing raised ValueError on NaN before
    xs, ys = ex.trade_curve.getData()
    assert np.isfinite(xs).all() and np.isfinite(ys).all() and len(xs) == 1
    assert not ex.brute_line.isVisible()                                 # no brute-force accuracy to draw


def _whole_text_shown(label) -> bool:
    """``label``'s text fits its box: the height its wrapped lines need at its width is what it was given."""
    need = label.heightForWidth(label.contentsRect().width()) if label.wordWrap() else label.sizeHint().height()
    return label.contentsRect().height() >= need


def test_the_no_held_out_note_is_read_whole_beside_the_live_map(qtbot, window, hand_detector, tmp_path):
    """On a model without images the note "No held-out images…" is shown whole, under the plot's legend, not
    cut by it (issue 47: clipped under the legend on Explore beside the live map)."""
    win = window
    win.resize(1024, 600)                    # a small screen (the window keeps its own minimum): the right column is short
    with qtbot.waitSignal(win.runner.finished, timeout=60000):
        _open_alone(win, hand_detector, tmp_path)
    win.show_panel("explore")
    ex = win.explore
    with qtbot.waitSignal(win.runner.finished, timeout=60000):
        qtbot.mouseClick(ex.compute_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: "no held-out images" in ex.trade_note.text().lower(), timeout=30000)
    qtbot.wait(100)                                                      # the layout settles on the next turn
    note, legend = ex.trade_note, ex.trade_box.layout().itemAt(0).widget()   # the legend above the plot
    assert note.isVisible()
    top_left = note.mapTo(ex, note.rect().topLeft())
    legend_box = legend.geometry().translated(legend.parentWidget().mapTo(ex, legend.parentWidget().rect().topLeft()))
    assert top_left.y() >= legend_box.bottom(), "the note starts above the legend's last line"
    assert _whole_text_shown(note), (note.size(), note.heightForWidth(note.contentsRect().width()))
