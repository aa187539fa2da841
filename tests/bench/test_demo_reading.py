"""bench demo-reading: the demo video's frames scored per take and key pose as a person reads the Run panel."""
import numpy as np
import pytest

from classmap_gui.bench.demo_reading import read_video, run, score, shipped_video
from classmap_gui.core.detect.reading import Reading
from classmap_gui.core.errors import ConfigError, DataError


def _r(shape, conf=0.9):
    return Reading(shape is not None, 0 if shape else None, shape, "", conf)


def test_each_key_pose_of_each_take_is_scored_and_the_empty_scene_apart():
    timeline = [(0, ("5", 0, 0, 0), True)] * 4 + [(0, None, True), (0, None, False), (1, ("5", 0, 0, 0), True)]
    readings = [_r("5"), _r("5"), _r("open-8"), _r(None), _r("B"), _r(None), _r("open-8", 0.2)]
    t = score(readings, timeline, unsure_below=0.5)
    first = t["per_take"]["take_1"]["5"]
    assert (first["frames"], first["right"], first["no_hand"], first["wrong_sure"]) == (4, 2, 1, 1)
    assert first["fraction_right"] == 0.5 and first["named"] == {"5": 2, "open-8": 1, "no hand": 1}
    assert t["per_take"]["take_2"]["5"]["wrong_sure"] == 0            # wrong but unsure: shown as a guess
    assert t["worst_key_pose_fraction"] == 0.0 and t["key_poses_at_90"] == 0 and t["key_poses"] == 2
    assert t["moving"] == {"frames": 1, "no_hand": 0} and t["empty_scene"] == {"frames": 1, "no_hand": 1}


def test_the_shipped_video_is_cut_as_the_run_panel_cuts_it_and_bad_input_is_named(tmp_path):
    boxes = read_video(shipped_video(), 1.0)
    assert boxes.shape[1:] == (240, 240, 3) and boxes.dtype == np.uint8
    assert read_video(shipped_video(), 0.5).shape[1] == 120
    bad = tmp_path / "not-a-video.avi"
    bad.write_bytes(b"nothing")
    with pytest.raises(DataError, match="not-a-video.avi"):
        read_video(bad, 1.0)
    with pytest.raises(ConfigError, match="classmap hand-model"):
        run(model_dir=None)
    with pytest.raises(ConfigError, match="not both"):      # fresh takes or a given video: which was read is clear
        run(model_dir=str(tmp_path), video=str(bad), test_seed=7)


def test_fresh_takes_have_the_shipped_videos_truth_in_other_scenes(tmp_path):
    from classmap_gui.core.data.hand_video import demo_timeline, write_demo_video

    write_demo_video(tmp_path / "fresh.avi", seed=52)
    fresh, shipped = read_video(tmp_path / "fresh.avi", 1.0), read_video(shipped_video(), 1.0)
    assert len(fresh) == len(shipped) == len(demo_timeline())
    assert np.abs(fresh.astype(np.int16) - shipped).mean() > 10       # other scenes behind the same poses


def test_the_shipped_find_the_hand_video_has_the_generators_truth_frame_by_frame():
    from classmap_gui.core.data.hand_video import FIND_HAND_POSES, find_hand_labels

    labels = find_hand_labels()
    assert len(read_video(shipped_video().with_name("demo-find-hand.avi"), 0.2)) == len(labels)
    held = [lab for lab in labels if lab is not None]
    assert list(dict.fromkeys(held)) == list(FIND_HAND_POSES) and len(held) == 9 * len(FIND_HAND_POSES)
