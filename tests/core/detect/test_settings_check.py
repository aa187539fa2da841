"""Issue 40 item 4: a hand model's saved detection settings are checked like the rest of the model: a
corrupted ``metadata.detection`` is one ModelFormatError naming the key, at load and when a Scanner or
HandReader is built, never an AttributeError or TypeError from inside a scan."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from classmap_gui.core.data import ImageSet
from classmap_gui.core.detect.reading import HandReader
from classmap_gui.core.detect.scanner import Scanner
from classmap_gui.core.settings.hand import DETECTION_KEYS
from classmap_gui.core.errors import ModelFormatError
from classmap_gui.core.recogniser import Recogniser
from classmap_gui.core.train.training import TrainConfig, train

GOOD = {"sides": [0.5, 0.8], "background_weight": 1.0, "detector_weight": 0.0, "vote_overlap": 0.3,
        "vote_temperature": 0.02, "found_threshold": {"classmap": 0.1, "brute_force": -math.inf}, "detector": None,
        "reading": {"temperature": 0.05, "history": 3, "crops": 1}}
#: (key, hostile value): each one refused naming detection.<key>
BAD = [("sides", []), ("sides", [0.0]), ("sides", [1.5]), ("sides", "0.5"), ("sides", [math.nan]),
       ("background_weight", "x"), ("background_weight", math.inf), ("detector_weight", [1]),
       ("vote_overlap", 0), ("vote_overlap", 2), ("vote_temperature", -1), ("found_threshold", [1, 2]),
       ("found_threshold", {"classmap": "x"}), ("found_threshold", {"classmap": math.nan}), ("found_threshold", {"other": 1.0}), ("detector", [1, 2, 3]),
       ("reading", 7), ("reading", {"history": 0}), ("reading", {"crops": 1.5}), ("reading", {"crops": -1}), ("reading", {"temperature": 0}),
       ("candidates", 0), ("finder", "hog")]


@pytest.fixture(scope="module")
def rec():
    rng = np.random.default_rng(0)
    images = rng.integers(0, 255, (24, 32, 32)).astype(np.uint8)
    images[12:, :16] //= 4
    data = ImageSet(images, np.repeat([0, 1], 12), ["a", "b"], name="tiny")
    return train(data, TrainConfig(features="hog", features_params={"cell_size": 8, "block_size": 16},
                                   bank="ova-ridge", test_fraction=0.2, seed=0)).recogniser


def _saved_with(rec, tmp_path, detection):
    rec.metadata = {"detection": GOOD}
    folder = rec.save(tmp_path / "m")
    doc = json.loads((folder / "model.json").read_text())
    doc["metadata"]["detection"] = detection
    (folder / "model.json").write_text(json.dumps(doc))
    return folder


def test_good_settings_load_and_build_a_scanner_and_a_reader(rec, tmp_path):
    loaded = Recogniser.load(_saved_with(rec, tmp_path, GOOD))
    assert Scanner(loaded, "brute_force").vote_overlap == 0.3
    assert HandReader(loaded, "brute_force").history == 3


def test_a_frame_pass_reading_setting_loads_and_builds_a_reader_that_reads_the_scans_windows(rec, tmp_path):
    loaded = Recogniser.load(_saved_with(rec, tmp_path, {**GOOD, "reading": {**GOOD["reading"], "crops": 0}}))
    assert HandReader(loaded, "classmap").crops == 0


@pytest.mark.parametrize("detection", [[1, 2, 3], "x", 5, None])
def test_detection_that_is_not_an_object_is_refused_at_load_and_by_the_scanner(rec, tmp_path, detection):
    with pytest.raises(ModelFormatError, match="detection must be an object") as exc:
        Recogniser.load(_saved_with(rec, tmp_path, detection))
    assert "\n" not in str(exc.value) and str(tmp_path / "m") in str(exc.value)
    rec.metadata = {"detection": detection}  # a model changed in memory: the scanner checks it too
    for build in (lambda: Scanner(rec, "brute_force"), lambda: HandReader(rec, "brute_force")):
        with pytest.raises(ModelFormatError, match="detection must be an object"):
            build()


@pytest.mark.parametrize("key,value", BAD, ids=[f"{k}={v!r}" for k, v in BAD])
def test_each_bad_setting_is_refused_naming_it(rec, tmp_path, key, value):
    assert key in DETECTION_KEYS
    with pytest.raises(ModelFormatError, match=rf"detection\.{key}\b") as exc:
        Recogniser.load(_saved_with(rec, tmp_path, {**GOOD, key: value}))
    assert "\n" not in str(exc.value)
    rec.metadata = {"detection": {**GOOD, key: value}}
    with pytest.raises(ModelFormatError, match=rf"detection\.{key}\b"):
        Scanner(rec, "brute_force")
