"""``bench add-gesture``: new hand shapes (none of the 81) recorded, added to a hand model and read on fresh takes."""
import numpy as np
import pytest

from classmap_gui.bench.gesture_takes import GESTURES, gesture_pose, take_frames
from classmap_gui.core.data.hand_shapes import SHAPE_CODES, all_poses

QUICK = ("shapes=3,orientations=2,images_per_class=12,background=200,hard_negatives=40,detector_scenes=4,p_sweep=2,d=3,"
         "reading_video_seeds=101,temperatures=0.05,histories=1,crops=1,no_hand_frames=4,validation_video_seeds=101")


def test_the_gestures_are_new_shapes_and_a_take_is_its_seeds_alone():
    assert len(GESTURES) >= 5 and not {c for _, c in GESTURES} & {c for _, c in SHAPE_CODES}
    poses = all_poses()
    for _, code in GESTURES:   # new joint angles, not one of the 81 shapes' under another name
        assert np.abs(poses - gesture_pose(code)).max(axis=1).min() > 20
    a, boxes = take_frames(gesture_pose(GESTURES[0][1]), 5, seconds=0.2, fps=10)
    b, _ = take_frames(gesture_pose(GESTURES[0][1]), 5, seconds=0.2, fps=10)
    c, _ = take_frames(gesture_pose(GESTURES[0][1]), 6, style="camera", seconds=0.2, fps=10)
    assert len(a) == 2 and a[0].shape == (240, 320, 3) and a[0].dtype == np.uint8
    assert all(np.array_equal(x, y) for x, y in zip(a, b)) and not np.array_equal(a[0], c[0])
    x, y, side = boxes[0]
    assert 0.4 * 240 <= side <= 0.57 * 240


@pytest.mark.slow   # a quick hand model is built first: minutes on a loaded machine
def test_gestures_join_a_hand_model_and_are_read_on_fresh_takes(tmp_path):
    from classmap_gui.bench.add_gesture import TEST_SEED, run
    from classmap_gui.cli import main

    model = tmp_path / "hands"
    assert main(["hand-model", "--quick", "--out", str(model), "--set", QUICK]) == 0
    out = run(model_dir=str(model), gestures=2, record_seconds=1.0, test_seconds=1.0, shape_videos=1,
              candidates="1:-:sum")
    assert out["test_seed"] == TEST_SEED and set(out["methods"]) == {"brute_force", "classmap"}
    assert out["choices"]["adding"]["chosen"] == "1:-:sum" and out["validation_seed"] != out["test_seed"]
    for m in out["methods"].values():
        assert [a["label"] for a in m["added"]] == [7, 8]                 # after the 6 classes and background
        assert m["recall_clean_mean"] > 0.3 and m["seconds_last_frame_to_named"]["max"] > 0
        assert set(m["recall"]["middle-up"]) == {"clean", "camera"}
    assert out["model_file_bytes"]["with_2_gestures"] > out["model_file_bytes"]["model"]   # the crops are kept


def test_an_adding_candidate_is_crops_rows_and_a_reading_rule_or_one_clear_line():
    from classmap_gui.bench.add_gesture import _choose, parse_candidate
    from classmap_gui.core.errors import ConfigError

    assert parse_candidate("9:150:fair") == {"name": "9:150:fair", "record_crops": 9, "rows": 150.0, "rule": "fair"}
    assert parse_candidate("1:-:sum")["rows"] is None
    for bad in ("9:150", "0:-:sum", "9:-5:sum", "9:-:max"):
        with pytest.raises(ConfigError, match="candidate"):
            parse_candidate(bad)

    def result(clean, camera, taken, change):
        m = {"recall_clean_mean": clean, "recall_camera_mean": camera, "shape_videos": {"taken_by_gestures": taken},
             "classes_2430": {"change_points": change}}
        return {"methods": {"brute_force": m, "classmap": m}}
    tried = {"a": result(0.6, 0.5, 0.0, 0.0), "b": result(0.9, 0.8, 0.05, 0.0),   # b takes too many frames
             "c": result(0.95, 0.9, 0.0, -1.0), "d": result(0.7, 0.5, 0.01, -0.2)}  # c costs the 2430 classes
    assert _choose(tried) == "d"
    assert _choose({"b": tried["b"], "e": result(0.9, 0.8, 0.03, 0.0)}) == "e"        # none within: fewest taken
