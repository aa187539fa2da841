"""Issue 40 item 7: what a save killed part-way leaves beside its target (``.<name>.saving-*``,
``.<name>.old-*``) is gone once the model or project is opened again, not only after the next save."""
from __future__ import annotations

import pytest
from hostile_helpers import run_killed_at, tiny_model, tiny_set

from classmap_gui.core.project import Project, load_project, save_project
from classmap_gui.core.recogniser import Recogniser

pytestmark = pytest.mark.timeout(120)
POINTS = [("fsync-file", 1), ("fsync-file", 2), ("fsync-tmp", 1), ("rename-old", 1), ("rename-new", 1),
          ("fsync-parent", 1), ("remove-old", 1)]


@pytest.mark.parametrize("point, nth", POINTS)
def test_a_model_save_killed_at_any_step_leaves_nothing_once_opened(tmp_path, point, nth):
    path = tiny_model(0).save(tmp_path / "m")
    new = tiny_model(1)
    assert run_killed_at(point, nth, lambda: new.save(path))
    Recogniser.load(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]


@pytest.mark.parametrize("point, nth", POINTS)
def test_a_folder_project_save_killed_at_any_step_leaves_nothing_once_opened(tmp_path, point, nth):
    path = save_project(Project(tiny_set()), tmp_path / "p")
    assert run_killed_at(point, nth, lambda: save_project(Project(tiny_set(n_per_class=5, seed=1)), path))
    load_project(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p"]


@pytest.mark.parametrize("point", ["fsync-file", "rename-new"])
def test_an_archive_project_save_killed_leaves_nothing_once_opened(tmp_path, point):
    path = save_project(Project(tiny_set()), tmp_path / "p.cmproj")
    assert run_killed_at(point, 1, lambda: save_project(Project(tiny_set(n_per_class=5, seed=1)), path))
    assert any(p.name.startswith(".p.cmproj.saving-") for p in tmp_path.iterdir())  # what the kill left
    load_project(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.cmproj"]
