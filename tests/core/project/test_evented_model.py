"""The project's own events: a setting changed, a run forgotten or an evaluation set emits from the model
itself (no caller emits for it), and "unsaved" follows the edits — including one made while a background
save of an earlier snapshot was running."""
import numpy as np

from classmap_gui.core.data import ImageSet
from classmap_gui.core.project import Project, load_project, save_project


def _project(tmp_path):
    p = Project(default_captures=lambda: tmp_path / "captures")
    p.reset(ImageSet(np.zeros((4, 8, 8), np.uint8), [0, 0, 1, 1], ["a", "b"], name="demo"))
    notes = []
    for kind in ("stateChanged", "evaluated", "modelChanged"):
        getattr(p, kind).connect(lambda kind=kind: notes.append(kind))
    return p, notes


def test_a_setting_changed_emits_and_makes_the_project_unsaved(tmp_path):
    p, notes = _project(tmp_path)
    assert not p.dirty
    heard = []
    p.settings.events.changed.connect(lambda key, old, new: heard.append((key, old, new)))
    p.settings["capture_target"] = 40
    assert p.dirty and notes == ["stateChanged"]
    p.mark_saved(tmp_path / "p.cmproj")
    notes.clear()
    p.settings["capture_target"] = 40          # the same value again: nothing to lose
    assert not p.dirty and notes == []
    p.settings["capture_target"] = 41
    assert p.dirty and notes == ["stateChanged"] and heard == [("capture_target", 40, 41)]
    p.reset(p.imageset)                         # opened again: clean
    assert not p.dirty


def test_an_edit_during_a_background_save_stays_unsaved(tmp_path):
    p, _ = _project(tmp_path)
    p.add_class("c")
    snap = p.snapshot()                         # what the background save writes
    p.settings["capture_target"] = 7            # edited while it is written
    out = save_project(snap, tmp_path / "p.cmproj")
    p.mark_saved(out, snap.revision)
    assert p.dirty and p.path == out            # the setting is not in the file yet
    assert "capture_target" not in load_project(out).settings
    snap = p.snapshot()
    p.mark_saved(save_project(snap, out), snap.revision)
    assert not p.dirty and load_project(out).settings["capture_target"] == 7


def test_runs_and_evaluation_are_set_through_the_model_and_emit(tmp_path):
    p, notes = _project(tmp_path)
    p.add_run({"settings": {}, "accuracy": 0.5})
    p.mark_saved(tmp_path / "p.cmproj")
    notes.clear()
    p.remove_run(1)
    assert len(p.runs) == 0 and p.dirty and notes == ["stateChanged"]
    notes.clear()
    p.set_evaluation("report", (None, p.imageset))
    assert p.report == "report" and p.split[1] is p.imageset and notes == ["evaluated"]
    p.report = None
    assert notes == ["evaluated", "evaluated"]
    p.runs = type(p.runs)()
    assert notes[-1] == "stateChanged"


def test_a_model_trained_or_images_edited_make_it_unsaved_and_saving_clean(tmp_path):
    p, notes = _project(tmp_path)
    p.set_trained(object(), "report", settings={"features": "pixels"})
    assert p.dirty and p.report == "report" and dict(p.settings) == {"features": "pixels"}
    p.mark_saved(tmp_path / "p.cmproj")
    assert not p.dirty
    p.move_images([0], 1)
    assert p.dirty
