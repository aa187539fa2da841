"""The headless project model: edits, dirty flag, model validity and captures, without a window."""
import numpy as np
import pytest

from classmap_gui.core.data import ImageSet
from classmap_gui.core.errors import DataError
from classmap_gui.core.workspace import DATASET, MODEL, Workspace


def _ws(tmp_path):
    notes = []
    ws = Workspace(capture_root=lambda: tmp_path / "captures", listener=lambda k, t: notes.append(k))
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
    assert ws.imageset.images.shape == (1, 32, 32) and DATASET in notes


def test_opened_set_is_not_unsaved_and_a_model_is(tmp_path):
    ws, notes = _ws(tmp_path)
    ims = ImageSet(np.zeros((4, 8, 8), np.uint8), [0, 0, 1, 1], ["a", "b"], name="demo")
    ws.reset(ims)
    assert not ws.replaces_work and ws.title == "demo"
    ws.set_trained(object(), None)
    assert ws.replaces_work and ws.model_is_current and MODEL in notes
    ws.add_class("c")
    assert not ws.model_is_current and ws.recogniser is not None  # stale, kept until retrained
    ws.delete_class(2)
    assert ws.recogniser is None  # labels shifted: the model no longer applies
    ws.mark_saved(tmp_path)
    assert not ws.dirty and ws.capture_root == tmp_path / "captures"
