"""bench scan on a tiny model: the JSON a reader needs, every choice on validation, the model cached."""
from __future__ import annotations

import pytest

from classmap_gui.bench.scan import run

TINY = dict(shapes=2, orientations=2, images_per_class=16, background=200, hard_negatives=40, bootstrap_rounds=1,
            p_sweep="2,3", d=3, frames="320x240", detector_scenes=6, validation_video_seeds="101,102",
            reading_video_seeds="101", test_videos=1, camera_images_per_class=1, no_hand_frames=6,
            side_sets="0.36,0.43,0.52", vote_temperatures="0,0.05", histories="1,3", temperatures="0.05",
            interleave_pause=0.0)    # no test asserts a time: the pause for BLAS to sleep between turns only costs


@pytest.mark.slow
def test_scan_bench_reports_both_methods_with_their_choices(tmp_path):
    out = run(cache_dir=str(tmp_path), **TINY)
    rows = {(r["frame"], r["method"]): r for r in out["scan"]}
    assert set(rows) == {("320x240", "classmap"), ("320x240", "brute_force")}
    assert out["test_seed"] == 7001 and out["test_video_seeds"] == [7001]
    for r in [*rows.values(), out["camera"]["classmap"], out["camera"]["brute_force"]]:
        for key in ("class_accuracy", "shape_accuracy", "pose_accuracy_within_30"):
            assert 0 <= r[key] <= 1, key
        assert r["class_accuracy"] <= r["pose_accuracy_within_30"] <= r["shape_accuracy"]
    for r in rows.values():
        assert r["frames_per_second"] > 0 and 0 <= r["localisation"] <= 1
        assert r["windows"] == sum(sc["windows"] for sc in r["scales"]) and len(r["scales"]) >= 3   # every window
        assert len(r["load_average_before"]) == 3
    cm, bf = rows[("320x240", "classmap")], rows[("320x240", "brute_force")]
    assert bf["evaluations_per_window"] == out["model"]["classes"]         # every class (no detector)
    assert cm["evaluations_per_window"] < bf["evaluations_per_window"] + 4
    assert out["speedup"]["320x240"] == pytest.approx(cm["frames_per_second"] / bf["frames_per_second"])
    rounds = out["speedup_rounds"]["320x240"]["wall"]    # the ratio round by round, the methods in turn
    assert rounds["rounds"] == len(cm["round_ms_per_frame"]) == len(bf["round_ms_per_frame"]) >= 2
    assert rounds["min"] <= rounds["median"] <= rounds["max"] and len(rounds["load_after"]) == 3
    assert cm["rounds"]["min"] <= cm["rounds"]["median"] <= cm["rounds"]["max"]
    sel = out["selection"]
    # the one search's choices (bank penalty, references, refine and p) on the build's held-out hand crops,
    # scored as the reader reads (their rows recorded)
    # (the window model's bank, the network's own class head, has no penalty to choose: no bank.alpha record)
    assert ("bank.alpha" in sel) == (out["model"].get("bank", "ova-ridge") == "ova-ridge")
    for key in [k for k in ("bank.alpha", "references", "classmap_point") if k in sel]:
        assert sel[key]["split"] == "validation" and 0 < sel[key]["split_rows"] <= out["model"]["images"]["validation"], key
    for key in ("background_weight", "sides", "detector_weight", "vote", "found_threshold", "reading"):
        assert sel[key]["split"] == "validation videos", key                 # scored on their own seeds' videos
    assert sel["validation_localisation"]["split"] == "validation"
    assert sel["sides"]["chosen"] in sel["sides"]["candidates"]
    assert sel["vote"]["chosen"] in sel["vote"]["candidates"]
    assert out["model"]["detection"]["vote_overlap"] == sel["vote"]["chosen"]["overlap"]
    assert {"classmap", "brute_force"} <= set(sel["validation_localisation"])
    assert len(cm["scales"]) == len(sel["sides"]["chosen"]) and cm["scales"] == bf["scales"]
    assert out["model"]["detection"]["sides"] == sel["sides"]["chosen"]
    assert sel["classmap_point"]["chosen"]["p"] in (2, 3)
    # brute force gets its faster BLAS setting, timed on a validation video (never a test video)
    bl = sel["brute_force_blas_threads"]["320x240"]
    assert bl["split"] == "validation videos" and bl["video_seed"] not in out["test_video_seeds"]
    assert bl["chosen"] == min((None, 1), key=lambda k: bl["median_ms_per_frame"]["blas_default" if k is None
                                                                                 else "one_thread"])
    assert out["options"]["test_seed"] == out["test_seed"]
    assert out["cpu_count"] >= 1 and len(out["load_average"]) == 3
    assert out["model"]["hard_negatives"] == 0 and not out["model"]["cached"]   # the window network: no bootstrap
    again = run(cache_dir=str(tmp_path), **TINY)                  # the built model comes from the cache
    assert out["model"]["detection"]["detector_weight"] == sel["detector_weight"]["chosen"]
    assert out["model"]["detection"]["reading"] == sel["reading"]["chosen"]
    # the reading the model chose is the one timed, and each frame's time is split by stage: the trunk (the network's
    # passes), the windows' classification, the reading, the rest
    assert cm["reading_crops"] == bf["reading_crops"] == sel["reading"]["chosen"]["crops"]
    assert "0" in sel["reading"]["by_crops"] and sel["reading"]["tolerance"] == 0.005
    for r in (cm, bf):
        assert {"features: network", "features: levels", "classify", "reading", "select"} <= set(r["stage_ms_per_frame"])
    timed = "brute_force_blas_threads"                             # a timing, taken again
    assert again["model"]["cached"] and {k: v for k, v in again["selection"].items() if k != timed} == \
        {k: v for k, v in sel.items() if k != timed}


def test_scan_bench_refuses_a_test_seed_that_is_a_validation_seed():
    from classmap_gui.core.errors import ConfigError

    with pytest.raises(ConfigError, match="validation_video_seeds part shares 2"):
        run(test_seed=100, test_videos=3, validation_video_seeds="101,102")   # 100, 101, 102: 101 is validation


def test_the_selection_scores_the_box_the_scanner_reports():
    # the validation grid's fast vote must hit exactly when the scanner's own voted box does
    import numpy as np

    from classmap_gui.core.detect.choice import _vote_hits
    from classmap_gui.core.detect.boxes import box_ious, iou, vote_box

    rng = np.random.default_rng(1)
    boxes = np.concatenate([np.stack([rng.uniform(0, 200, 300), rng.uniform(0, 120, 300), np.full(300, s),
                                      np.full(300, s)], 1) for s in (90, 110)]).astype(np.float32)
    pair = np.stack([box_ious(boxes, b) for b in boxes])
    votes = [(0.3, 0.0), (0.3, 0.02), (0.4, 0.05)]
    agree = 0
    for _ in range(40):
        truth = (rng.uniform(0, 200), rng.uniform(0, 120), 100.0, 100.0)
        score = (box_ious(boxes, truth) + rng.normal(0, 0.3, len(boxes))).astype(np.float32)
        score[rng.random(len(boxes)) < 0.2] = -np.inf
        got = _vote_hits(boxes, score, pair, votes, truth)
        k = int(np.argmax(score))
        want = [iou(boxes[k] if t == 0 else vote_box(boxes, score, k, o, t), truth) >= 0.5 for o, t in votes]
        assert list(got) == want
        agree += sum(want)
    assert 0 < agree < 120                                     # both hits and misses were compared


@pytest.mark.slow
def test_a_poisoned_test_part_changes_no_choice(tmp_path, monkeypatch, poison):
    # the test videos (and the style tests' images) replaced by noise with shuffled truth: every choice -
    # the model's penalty, reference penalty and p, the scan and reading settings - must come out the same
    import numpy as np

    from classmap_gui.core.data import hand_pose
    from classmap_gui.core.detect import choice

    clean = run(cache_dir=str(tmp_path / "clean"), **TINY)
    video, generate = choice.validation_video, hand_pose.generate_hand_pose
    test = set(clean["test_video_seeds"])

    def noisy_video(seed, size):
        frames = list(video(seed, size))
        if int(seed) not in test:
            return frames
        order = poison.permuted(np.arange(len(frames)))            # each frame's truth from another frame
        return [(poison.noise_like(f, 1000 * int(seed) + i), frames[j][1], frames[j][2])
                for i, ((f, _, _), j) in enumerate(zip(frames, order))]

    def noisy_images(*a, seed=0, **k):
        ims = generate(*a, seed=seed, **k)
        if seed == 1000:                                                   # the style tests' camera_seed
            ims.images[...] = poison.noise_like(ims.images)
        return ims

    monkeypatch.setattr(choice, "validation_video", noisy_video)
    monkeypatch.setattr(hand_pose, "generate_hand_pose", noisy_images)
    dirty = run(cache_dir=str(tmp_path / "dirty"), **TINY)
    for out in (clean, dirty):       # a choice by wall clock (on a validation video: tested above), not by accuracy
        out["selection"].pop("brute_force_blas_threads")
    assert poison.without_timings(dirty["selection"]) == poison.without_timings(clean["selection"])
    assert dirty["scan"][0]["localisation"] < clean["scan"][0]["localisation"]   # the poison reached the test
