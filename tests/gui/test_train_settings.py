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


def test_classmap_ticked_and_untouched_trains_as_classmap_train_does(qtbot):
    """The ClassMap box is ClassMap's own parameters: ticked and untouched it shows and sends what
    `classmap train --classmap` uses (the hand-built box sent d = 30, p = 20 and stopped d at 1000)."""
    from classmap_gui.cli import build_parser
    from classmap_gui.cli.options import parse_classmap
    from classmap_gui.core.registry import component
    s = TrainSettings()
    qtbot.addWidget(s)
    s.cm_box.setChecked(True)
    cli = build_parser(["train"]).parse_args(["train", "--data", "shapes", "--out", "m", "--classmap"])
    assert s.values()["classmap"] == parse_classmap(cli.classmap) == {}
    d, p = s.cm_form.widgets["d"], s.cm_form.widgets["p"]
    cm = component("classmap", "classmap")
    assert (d.value(), p.value()) == (cm.param("d").default, cm.param("p").default) == (45, 40)
    assert d.maximum() == cm.param("d").high == 100_000 and p.maximum() >= 100_000


def test_d_and_p_typed_arrive_in_the_training_configuration(qtbot, window, shapes_folder, monkeypatch):
    """A person types d and p in the ClassMap box and presses Train: training is configured with exactly
    those (p fed from the d box, or either one dropped, fails here)."""
    from PySide6.QtWidgets import QAbstractSpinBox

    from classmap_gui.core.train import training
    from classmap_gui.core.errors import Cancelled
    configs = []

    def record(imageset, cfg, **_kw):
        configs.append(cfg)
        raise Cancelled("recorded the configuration")
    monkeypatch.setattr(training, "train", record)
    win = window
    with qtbot.waitSignal(win.runner.finished, timeout=20000):
        win.dataset.import_folder(str(shapes_folder))
    win.show_panel("train")
    sv = win.train.settings_view
    sv.cm_box.setChecked(True)
    for name, typed in (("d", "12"), ("p", "3")):
        box: QAbstractSpinBox = sv.cm_form.widgets[name]
        box.setFocus()
        box.selectAll()
        qtbot.keyClicks(box, typed)
    with qtbot.waitSignal(win.runner.finished, timeout=20000):
        qtbot.mouseClick(win.train.train_btn, Qt.LeftButton)
    assert len(configs) == 1
    assert (configs[0].classmap["d"], configs[0].classmap["p"]) == (12, 3)
