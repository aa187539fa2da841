"""A project's saved settings are checked on open against the schema the Train panel and the CLI read:
each value it refuses is named once and replaced by its default, and the project opens (issue 49 item 3)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from classmap_gui.core.data import ImageSet
from classmap_gui.core.project import Project, load_project, save_project
from classmap_gui.core.project.saved_settings import check_saved_settings
from classmap_gui.core.train.config import TrainConfig

GOOD = {"features": "pixels", "features_params": {"size": [8, 8]}, "bank": "ova-ridge", "bank_params": {"alpha": "auto"},
        "classmap": {"d": 12, "p": [5, 10], "refine": "auto"}, "test_fraction": 0.25, "seed": 7,
        "capture_target": 120, "window": {"tab": 2}}

# (saved settings, the name each note must carry, the value the setting becomes)
HOSTILE = [
    ({"capture_target": 2 ** 40}, "capture_target", ("capture_target", 50)),
    ({"capture_target": "abc"}, "capture_target", ("capture_target", 50)),
    ({"capture_target": True}, "capture_target", ("capture_target", 50)),
    ({"seed": 1e30}, "seed", ("seed", 0)),
    ({"seed": "abc"}, "seed", ("seed", 0)),
    ({"seed": -3}, "seed", ("seed", 0)),
    ({"classmap": {"d": "abc", "p": 8}}, "classmap.d", ("classmap", {"p": 8})),
    ({"classmap": {"d": 1e30}}, "classmap.d", ("classmap", {})),
    ({"classmap": {"d": float("nan")}}, "classmap.d", ("classmap", {})),
    ({"classmap": {"p": [3, "x"]}}, "classmap.p", ("classmap", {})),
    ({"classmap": [45, 40]}, "classmap", ("classmap", None)),
    ({"features": "pixels", "features_params": [1, 2]}, "features_params", ("features_params", {})),
    ({"features": "pixels", "features_params": {"nope": 1}}, "features_params.nope", ("features_params", {})),
    ({"features": 3, "features_params": {}}, "features", ("features", TrainConfig.features)),
    ({"bank": "ova-ridge", "bank_params": {"alpha": -1}}, "bank_params.alpha", ("bank_params", {})),
    ({"bank": "ova-ridge", "bank_params": {"trainer": "x"}}, "bank_params.trainer", ("bank_params", {})),
    ({"test_fraction": 5}, "test_fraction", ("test_fraction", TrainConfig.test_fraction)),
    ({"classmap_fraction": 0}, "classmap_fraction", ("classmap_fraction", TrainConfig.classmap_fraction)),
    ({"search": [1]}, "search", ("search", {})),
]


def test_settings_the_schema_accepts_come_back_unchanged():
    got, notes = check_saved_settings(json.loads(json.dumps(GOOD)))
    assert notes == []
    assert got["classmap"] == {"d": 12, "p": [5, 10], "refine": "auto"} and got["seed"] == 7
    assert got["capture_target"] == 120 and got["window"] == {"tab": 2}  # keys it does not know are kept


@pytest.mark.parametrize("saved, name, becomes", HOSTILE, ids=[h[1] + "=" + repr(h[0])[:30] for h in HOSTILE])
def test_each_refused_saved_value_is_named_and_replaced_by_its_default(saved, name, becomes):
    got, notes = check_saved_settings({**saved, "seed": saved.get("seed", 7)})
    assert len(notes) == 1 and notes[0].startswith(f"{name} = "), notes
    key, value = becomes
    assert got[key] == value
    if key != "seed":
        assert got["seed"] == 7  # the other settings stay as saved


def tiny() -> ImageSet:
    rng = np.random.default_rng(0)
    return ImageSet(rng.integers(0, 256, (12, 8, 8), dtype=np.uint8), np.arange(12) % 3, ["a", "b", "c"])


@pytest.mark.parametrize("name", ["p", "p.cmproj"])
def test_a_project_with_absurd_saved_settings_opens_with_defaults_and_one_line_per_value(tmp_path, name):
    bad = {"capture_target": 2 ** 40, "seed": 1e30, "features": "pixels", "features_params": [3],
           "classmap": {"d": "abc", "p": 7}, "test_fraction": 0.3}
    path = save_project(Project(tiny(), settings=bad), tmp_path / name)
    proj = load_project(path)
    assert dict(proj.settings) == {"capture_target": 50, "seed": 0, "features": "pixels", "features_params": {},
                                   "classmap": {"p": 7}, "test_fraction": 0.3}
    assert len(proj.settings_notes) == 4
    for key in ("capture_target", "seed", "features_params", "classmap.d"):
        assert sum(f"saved setting {key} = " in n for n in proj.settings_notes) == 1
    assert all(n.startswith(str(path)) for n in proj.settings_notes)
    assert not proj.dirty
