"""``classmap recover``: the explicit way (besides the next save) to put back a folder whose save was
interrupted; reads never do it (issue 49 item 4)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from classmap_gui.cli import main
from classmap_gui.core.project import Project, load_project, save_project

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
from hostile_helpers import tiny_model, tiny_set

DEAD = 2 ** 22 + 12345


@pytest.mark.parametrize("kind", ["model", "project"])
def test_recover_renames_the_interrupted_saves_version_back_and_deletes_nothing(tmp_path, capsys, kind):
    path = tiny_model(0).save(tmp_path / "m") if kind == "model" else save_project(Project(tiny_set()), tmp_path / "m")
    (path / "notes.txt").write_text("mine")
    os.replace(path, tmp_path / f".m.old-{DEAD}-1")  # killed between the save's two renames
    stranger = tmp_path / f".m.saving-{DEAD}-2"
    stranger.mkdir()
    assert main(["recover", str(path)]) == 0
    assert "restored" in capsys.readouterr().out
    assert (path / "notes.txt").read_text() == "mine" and stranger.is_dir()
    if kind == "project":
        assert len(load_project(path).imageset) == len(tiny_set())
    assert main(["recover", str(path)]) == 0 and "nothing to recover" in capsys.readouterr().out


def test_recover_with_nothing_to_recover_is_one_line_and_exit_2(tmp_path, capsys):
    (tmp_path / f".m.old-{DEAD}-1").mkdir()  # a leftover's name, but no complete model or project in it
    assert main(["recover", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("classmap: error:") and "no complete version" in err[0]
    assert (tmp_path / f".m.old-{DEAD}-1").is_dir()
