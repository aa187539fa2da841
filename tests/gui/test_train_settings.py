"""The Train panel's settings form: parameters that may be unset (pixels' size) are sent unset, not as
the text 'None', and a saved size shows as HxW and is sent back as one."""
from PySide6.QtCore import Qt

from classmap_gui.gui.panels.train_settings import TrainSettings


def _choose_features(qtbot, settings, name):
    combo = settings.features
    combo.setFocus()
    qtbot.keyClicks(combo, name)  # a person typing in the focused drop-down picks the matching entry
    assert combo.currentData() == name


def test_pixels_without_a_size_trains(qtbot, window, small_settings, shapes_folder):
    win = window
    with qtbot.waitSignal(win.runner.finished, timeout=20000):
        win.dataset.import_folder(str(shapes_folder))
    win.train.apply_settings({**small_settings, "classmap": None})
    _choose_features(qtbot, win.train.settings_view, "pixels")
    size = win.train.settings_view.features_form.widgets["size"]
    assert size.text() == "" and size.placeholderText() == "unset"
    assert win.train.settings()["features_params"] == {}
    with qtbot.waitSignal(win.runner.finished, timeout=90000):
        qtbot.mouseClick(win.train.train_btn, Qt.LeftButton)
    assert win.project.recogniser is not None, win.runner.last_error
    feats = win.project.recogniser.features
    assert type(feats).__name__ == "PixelFeatures" and feats.size is None
    assert win.project.report.accuracy >= 0.75  # four easy shapes, raw pixels


def test_a_size_typed_or_restored_is_sent_as_hxw_and_clearing_it_unsets_it(qtbot):
    s = TrainSettings()
    qtbot.addWidget(s)
    s.apply({"features": "pixels", "features_params": {"size": (12, 16)}, "bank": "ova-ridge"})
    size = s.features_form.widgets["size"]
    assert size.text() == "12x16"
    assert s.values()["features_params"] == {"size": "12x16"}
    size.selectAll()
    qtbot.keyClick(size, Qt.Key_Delete)
    assert s.values()["features_params"] == {}
    qtbot.keyClicks(size, "8x8")
    assert s.values()["features_params"] == {"size": "8x8"}


def test_before_any_data_the_form_shows_what_classmap_train_uses(qtbot):
    """A person who reads `classmap train --help` and then opens the Train panel sees the same feature map,
    bank and test part (they disagreed: the form said hog, the command kmeans)."""
    from classmap_gui.cli import build_parser
    s = TrainSettings()
    qtbot.addWidget(s)
    cli = build_parser(["train"]).parse_args(["train", "--data", "shapes", "--out", "m"])
    shown = s.values()
    assert (shown["features"], shown["bank"], shown["test_fraction"]) == \
           (cli.features, cli.bank, cli.test_fraction)
    assert s.features.currentText() != ""
