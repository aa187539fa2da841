"""The headless, evented project model: edits, dirty flag, model validity, captures and the signals a view
subscribes to, without a window; and the same object saved and opened by the project format."""
import numpy as np
import pytest

from classmap_gui.core.data import ImageSet
from classmap_gui.core.errors import DataError
from classmap_gui.core.project import Project, load_project, save_project


def _ws(tmp_path):
    notes = []
    ws = Project(default_captures=lambda: tmp_path / "captures")
    for kind in ("datasetChanged", "modelChanged", "stateChanged"):
        getattr(ws, kind).connect(lambda kind=kind: notes.append(kind))
    ws.message.connect(lambda text: notes.append(f"message: {text}"))
    return ws, notes


def test_new_project_accepts_classes_and_captures(tmp_path):
    ws, notes = _ws(tmp_path)
    with pytest.raises(DataError, match="New project"):
        ws.add_class("fist")
    ws.new_project((32, 32))
    assert not ws.dirty and ws.title == "untitled"
    assert ws.add_class("fist") == 0 and ws.dirty
    frame = np.full((48, 64, 3), 90, np.uint8)
    path = ws.save_capture(0, frame)
    assert path.parent == tmp_path / "captures" / "fist" and path.exists()
    assert oct(path.stat().st_mode & 0o777) != oct(0o600)  # honours the umask, not private
    assert ws.add_images(0, [frame], [str(path)]) == 1
    assert ws.imageset.images.shape == (1, 32, 32) and "datasetChanged" in notes and "message: added 1 image(s) to 'fist'" in notes


def test_opened_set_is_not_unsaved_and_a_model_is(tmp_path):
    ws, notes = _ws(tmp_path)
    ims = ImageSet(np.zeros((4, 8, 8), np.uint8), [0, 0, 1, 1], ["a", "b"], name="demo")
    ws.reset(ims)
    assert not ws.replaces_work and ws.title == "demo"
    ws.set_trained(object(), None)
    assert ws.replaces_work and ws.model_is_current and "modelChanged" in notes
    ws.add_class("c")
    assert not ws.model_is_current and ws.recogniser is not None  # stale, kept until retrained
    ws.delete_class(2)
    assert ws.recogniser is None  # labels shifted: the model no longer applies
    ws.mark_saved(tmp_path)
    assert not ws.dirty and ws.captures_dir == tmp_path / "captures"


def test_restore_run_puts_back_model_and_settings_and_refuses_what_it_cannot():
    """Runs in the headless project: a kept model is restored with its settings (capture options kept),
    counts as current only on unchanged data; a let-go model or other classes are clear errors."""
    from classmap_gui.core.data import load_digits
    from classmap_gui.core.project.runs import run_record
    from classmap_gui.core.train.training import TrainConfig, train

    d = load_digits().subset(np.arange(300))
    ws = Project()
    ws.reset(d)
    ws.settings["capture_target"] = 40
    results = [train(d, TrainConfig(features="pixels", bank="ova-ridge", seed=s)) for s in (0, 1)]
    ws.runs.keep_models = 1
    for r in results:
        ws.add_run(run_record(r, d), r.recogniser)
    assert ws.dirty and [r["model_kept"] for r in ws.runs.records] == [False, True]
    with pytest.raises(DataError, match="kept only its record"):
        ws.restore_run(1)
    rec = ws.restore_run(2)
    assert ws.recogniser is results[1].recogniser and ws.model_is_current
    assert ws.settings == {**rec["settings"], "capture_target": 40}
    ws.add_images(0, list(d.images[:2]))                 # the data changed: restored, but not current
    ws.restore_run(2)
    assert not ws.model_is_current
    ws.add_class("extra")
    with pytest.raises(DataError, match="other classes"):
        ws.restore_run(2)


def test_an_owned_temporary_folder_goes_when_the_project_is_replaced_not_before(tmp_path):
    ws, _ = _ws(tmp_path)
    owned = tmp_path / "unpacked"
    (owned / "fist").mkdir(parents=True)
    ims = ImageSet(np.zeros((2, 8, 8), np.uint8), [0, 0], ["fist"], name="demo")
    ws.reset(ims, captures_dir=owned, unpacked=owned)
    ws.reset(ims, captures_dir=owned, unpacked=owned)  # the same project again keeps its folder
    assert owned.is_dir() and ws.capture_dir(0) == owned / "fist"
    ws.reset(ims)
    assert not owned.exists() and ws.unpacked is None
    ws.close()  # nothing owned: nothing to do


def test_a_saved_project_opens_as_the_same_evented_model(tmp_path):
    """What a person edits is what is saved and what comes back: one Project type end to end; the opened one
    is not unsaved, a view subscribed to the window's project hears the replacement, and a background save's
    snapshot does not change when the project is edited after it was taken."""
    ws, notes = _ws(tmp_path)
    ws.new_project((16, 16))
    ws.add_class("fist")
    ws.add_images(0, [np.full((16, 16), 7, np.uint8)] * 3)
    ws.settings["capture_target"] = 12
    snap = ws.snapshot()
    ws.add_class("palm")                                   # edited while the snapshot is being saved
    out = save_project(snap, tmp_path / "p.cmproj")
    opened = load_project(out)
    assert isinstance(opened, Project) and opened.class_names == ["fist"] and len(opened.imageset) == 3
    assert opened.settings == {"capture_target": 12} and not opened.dirty and opened.path == out
    notes.clear()
    ws.adopt(opened)
    assert ws.class_names == ["fist"] and ws.title == "p.cmproj" and not ws.replaces_work
    assert {"datasetChanged", "modelChanged", "stateChanged"} <= set(notes)


def test_settings_edited_are_one_unsaved_edit_and_saved_with_the_project(tmp_path):
    """A person's edits reach the project at once: one edit (one revision) whatever the number of keys, the
    same values again change nothing, and saving writes them."""
    p = Project(ImageSet(np.zeros((4, 8, 8), np.uint8), [0, 0, 1, 1], ["a", "b"]))
    states = []
    p.stateChanged.connect(lambda: states.append(p.revision))
    p.edit_settings({"seed": 123, "classmap": {"p": 7}})
    assert p.dirty and states == [1] and p.settings["seed"] == 123
    p.edit_settings({"seed": 123, "classmap": {"p": 7}})
    assert states == [1]
    save_project(p, tmp_path / "p.cmproj")
    assert load_project(tmp_path / "p.cmproj").settings["classmap"] == {"p": 7}


def test_a_training_is_asked_of_the_project_not_of_a_panel():
    p = Project(ImageSet(np.zeros((4, 8, 8), np.uint8), [0, 0, 1, 1], ["a", "b"]))
    asked = []
    p.trainingRequested.connect(lambda what: asked.append(what == ""))
    p.request_training()
    assert asked == [True] and not p.dirty


def test_images_recorded_from_a_hand_video_make_a_hands_project_kept_when_saved(tmp_path):
    """Recording from the shipped hand videos says the project's images are hands (the Train panel's proposal
    reads it); a camera or another video says nothing; the setting is saved with the project."""
    p = Project()
    p.new_project((32, 32))
    p.note_capture_source(0)
    p.note_capture_source(str(tmp_path / "my-holiday.avi"))
    assert "capture_subject" not in p.settings
    p.note_capture_source(str(tmp_path / "resources" / "demo-hands.avi"))
    assert p.settings["capture_subject"] == "hands" and p.dirty
    p.add_class("a")
    p.add_class("b")
    save_project(p, tmp_path / "h.cmproj")
    assert load_project(tmp_path / "h.cmproj").settings["capture_subject"] == "hands"


def test_a_model_that_took_or_lost_a_class_keeps_the_project_in_step(tmp_path):
    """A gesture added to a model opened alone (Project.change_classes): the project's classes follow the model's,
    the model stays current, and once it was saved to its folder nothing is unsaved; removed, the class goes."""
    from types import SimpleNamespace

    ws, notes = _ws(tmp_path)
    ws.reset(ImageSet(np.zeros((0, 8, 8), np.uint8), np.zeros(0, np.int64), ["a", "b"]),
             recogniser=SimpleNamespace(class_names=["a", "b"]), model_folder=tmp_path / "model")
    assert ws.model_folder == tmp_path / "model" and not ws.dirty
    notes.clear()
    ws.change_classes(SimpleNamespace(class_names=["a", "b", "rock-on"]), saved=True)
    assert ws.class_names == ["a", "b", "rock-on"] and ws.model_is_current and not ws.dirty
    assert {"datasetChanged", "modelChanged"} <= set(notes)
    ws.change_classes(SimpleNamespace(class_names=["a", "b"]))      # not saved anywhere: unsaved
    assert ws.class_names == ["a", "b"] and ws.model_is_current and ws.dirty
    with pytest.raises(DataError, match="retrain"):
        ws.change_classes(SimpleNamespace(class_names=["b", "a"]))
    ws.reset(ws.imageset)                                           # another project: no model folder
    assert ws.model_folder is None
