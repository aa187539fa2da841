"""What a save killed part-way leaves beside its target (``.<name>.saving-*``, ``.<name>.old-*``).

Issue 49 item 4: opening never changes the disk — a model or project whose save died between its
renames opens from the leftover where it lies; the next save puts it back and cleans the leftovers
of dead saves, and never deletes a folder (or anything in one) that a save did not write."""
from __future__ import annotations

import os

import numpy as np
import pytest
from hostile_helpers import run_killed_at, tiny_model, tiny_set

from classmap_gui.core.project import Project, load_project, save_project
from classmap_gui.core.recogniser import Recogniser

pytestmark = pytest.mark.timeout(120)
POINTS = [("fsync-file", 1), ("fsync-file", 2), ("fsync-tmp", 1), ("rename-old", 1), ("rename-new", 1),
          ("fsync-parent", 1), ("remove-old", 1)]
DEAD = 2 ** 22 + 12345  # a pid no process has


def listing(root) -> list[tuple]:
    """Every entry under ``root`` with its kind, size, inode and modification time: equal before and
    after a read when the read renamed, deleted, wrote or touched nothing."""
    out = []
    for d, dirs, names in os.walk(root):
        for n in sorted(dirs + names):
            st = os.lstat(os.path.join(d, n))
            out.append((os.path.relpath(os.path.join(d, n), root), st.st_mode, st.st_size, st.st_ino, st.st_mtime_ns))
    return sorted(out)


@pytest.mark.parametrize("point, nth", POINTS)
def test_a_model_save_killed_at_any_step_opens_without_changing_the_disk_and_the_next_save_cleans(
        tmp_path, point, nth):
    path = tiny_model(0).save(tmp_path / "m")
    (path / "notes.txt").write_text("mine")
    new = tiny_model(1)
    assert run_killed_at(point, nth, lambda: new.save(path))
    before = listing(tmp_path)
    Recogniser.load(path)
    assert listing(tmp_path) == before
    new.save(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]
    assert (path / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("point, nth", POINTS)
def test_a_folder_project_save_killed_at_any_step_opens_without_changing_the_disk_and_the_next_save_cleans(
        tmp_path, point, nth):
    path = save_project(Project(tiny_set()), tmp_path / "p")
    assert run_killed_at(point, nth, lambda: save_project(Project(tiny_set(n_per_class=5, seed=1)), path))
    before = listing(tmp_path)
    proj = load_project(path)
    assert listing(tmp_path) == before
    save_project(proj, path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p"]
    assert len(load_project(path).imageset) == len(proj.imageset)


@pytest.mark.parametrize("point", ["fsync-file", "rename-new"])
def test_an_archive_project_save_killed_opens_without_changing_the_disk_and_the_next_save_cleans(tmp_path, point):
    path = save_project(Project(tiny_set()), tmp_path / "p.cmproj")
    assert run_killed_at(point, 1, lambda: save_project(Project(tiny_set(n_per_class=5, seed=1)), path))
    assert any(p.name.startswith(".p.cmproj.saving-") for p in tmp_path.iterdir())  # what the kill left
    before = listing(tmp_path)
    load_project(path)
    assert listing(tmp_path) == before
    save_project(Project(tiny_set()), path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.cmproj"]


def test_a_model_whose_save_died_between_its_renames_opens_from_the_leftover_and_the_save_puts_it_back(tmp_path):
    rec = tiny_model(0)
    path = rec.save(tmp_path / "m")
    (path / "notes.txt").write_text("mine")
    os.replace(path, tmp_path / f".m.old-{DEAD}-1")
    before = listing(tmp_path)
    X = tiny_set().images
    assert np.array_equal(Recogniser.load(path).predict(X).top_scores, rec.predict(X).top_scores)
    assert listing(tmp_path) == before and not path.exists()
    tiny_model(1).save(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]
    assert (path / "notes.txt").read_text() == "mine"  # the user's file came back with it


def test_a_save_never_deletes_a_leftover_named_folder_holding_what_no_save_wrote(tmp_path):
    path = tiny_model(0).save(tmp_path / "m")
    stranger = tmp_path / f".m.old-{DEAD}-7"
    stranger.mkdir()
    (stranger / "thesis.tex").write_text("two years of work")
    half = tmp_path / f".m.saving-{DEAD}-x"
    half.mkdir()
    (half / "model.json").write_text("{}")
    (half / "photo.jpg").write_bytes(b"\xff\xd8 only copy")
    project = save_project(Project(tiny_set()), tmp_path / "p")
    pstranger = tmp_path / f".p.old-{DEAD}-1"
    (pstranger / "captures").mkdir(parents=True)
    (pstranger / "captures" / "only.png").write_bytes(b"x")
    tiny_model(1).save(path)
    save_project(Project(tiny_set()), project)
    assert (stranger / "thesis.tex").read_text() == "two years of work"
    assert (half / "photo.jpg").read_bytes() == b"\xff\xd8 only copy"
    assert (pstranger / "captures" / "only.png").read_bytes() == b"x"


def test_cli_predict_and_eval_leave_the_folder_beside_the_model_as_it_was(tmp_path, capsys):
    import cv2

    from classmap_gui.cli import main

    data = tmp_path / "data"
    ims = tiny_set()
    for i, (img, lab) in enumerate(zip(ims.images, ims.labels)):
        (data / ims.class_names[lab]).mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(data / ims.class_names[lab] / f"{i}.png"), img)
    models = tmp_path / "models"
    path = tiny_model(0).save(models / "m")
    tiny_model(1).save(models / "m2")
    os.replace(models / "m2", models / f".m.old-{DEAD}-1")  # a leftover beside a complete model
    (models / f".m.saving-{DEAD}-2").mkdir()
    (models / f".m.saving-{DEAD}-2" / "model.json").write_text("{}")
    before = listing(models)
    assert main(["predict", str(path), str(data / "a" / "0.png")]) == 0
    assert main(["eval", str(path), "--data", str(data)]) == 0
    assert listing(models) == before
    os.replace(path, models / f".m.old-{DEAD}-9")  # a save died between its renames: predict reads it
    before = listing(models)
    assert main(["predict", str(path), str(data / "a" / "0.png")]) == 0
    assert listing(models) == before
    capsys.readouterr()
