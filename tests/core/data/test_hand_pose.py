"""hand-pose: the procedural hand, its renderer and the built-in sets, as a user of the data would see them."""
import json
import math

import numpy as np
import pytest

from classmap_gui.core.data import dataset_version, load_dataset
from classmap_gui.core.data.clutter import CAMERA_FAMILIES, CLEAN_FAMILIES, tile_bank
from classmap_gui.core.data.hand_model import LIMITS, N_PARAMS, fingertip, forward_kinematics
from classmap_gui.core.data.hand_pose import (GENERATOR_VERSION, N_ORIENTATIONS, N_SHAPES, SMALL_SHAPES, class_factors,
                                              class_name, generate_hand_pose, orientations, pose_match, shape_names,
                                              split_per_class)
from classmap_gui.core.data.hand_render import render_into
from classmap_gui.core.data.hand_shapes import SHAPE_NAMES, all_poses, shape_code
from classmap_gui.core.data.hand_style import CAMERA, CLEAN
from classmap_gui.core.errors import DataError


def test_81_shapes_30_orientations_and_readable_class_names():
    assert N_SHAPES == 81 and N_ORIENTATIONS == 30 and len(set(shape_names())) == 81
    assert len(set(orientations())) == 30
    assert class_name("V", -30, 0, 20) == "V · palm forward · turned 30° left · leaning 20° left"
    assert class_name("B", 0, 30, -20) == "B · palm forward · fingers 30° toward camera · leaning 20° right"
    ims = generate_hand_pose(shapes=["V", "A"], orientations=3, images_per_class=1, size=24)
    assert len(ims.class_names) == 6 and len(set(ims.class_names)) == 6
    # class index = shape * n_orientations + orientation, over the chosen subsets, shapes in index order
    assert [n.split(" · ")[0] for n in ims.class_names] == ["A"] * 3 + ["V"] * 3
    f = class_factors(ims.class_names)
    assert f["shape"] == ["A"] * 3 + ["V"] * 3
    assert list(f["shape_index"]) == [SHAPE_NAMES.index("A")] * 3 + [SHAPE_NAMES.index("V")] * 3
    grid = [orientations()[i] for i in (0, 14, 29)]  # 3 spread evenly over the 30
    assert [(y, p, r) for y, p, r in zip(f["yaw"], f["pitch"], f["roll"])][:3] == grid
    with pytest.raises(DataError):
        class_factors(["not a hand"])


def test_pose_match_is_same_shape_within_30_degrees():
    a = class_name("V", 0, 0, 20)
    assert pose_match([a], [class_name("V", 30, 0, 20)]).tolist() == [True]    # 30 degrees of yaw
    assert pose_match([a], [class_name("V", 60, 0, 20)]).tolist() == [False]   # 60
    assert pose_match([a], [class_name("V", 0, 0, -20)]).tolist() == [False]   # 40 of roll
    assert pose_match([a], [class_name("K", 0, 0, 20)]).tolist() == [False]    # other shape


def test_every_shape_is_inside_the_joint_limits_and_shapes_differ():
    P = all_poses()
    assert P.shape == (81, N_PARAMS)
    assert np.all(P >= LIMITS[:, 0] - 1e-9) and np.all(P <= LIMITS[:, 1] + 1e-9)
    d = np.abs(P[:, None] - P[None]).max(axis=2)
    np.fill_diagonal(d, np.inf)
    assert d.min() > 5.0, "two shapes have (nearly) the same joint angles"


@pytest.mark.parametrize("name", ["9", "8", "D", "O", "baby-O", "7"])
def test_pinch_shapes_bring_the_thumb_to_the_finger(name):
    caps = forward_kinematics(all_poses()[SHAPE_NAMES.index(name)])
    who = shape_code(name).split("-")[-1]
    fingers = range(4) if who == "all" else ["IMRP".index(who)]
    tip = np.mean([fingertip(caps, f) for f in fingers], axis=0)
    assert np.linalg.norm(fingertip(caps, 4) - tip) < 20.0  # mm: thumb and finger tips touch (radii ~8 + 9)


def _render(caps, size=64, light=(0.0, 0.0, 1.0), ambient=0.2):
    shade = np.empty((size, size), np.float32)
    alpha = np.empty((size, size), np.float32)
    depth = np.empty((size, size))
    edge = np.empty((size, size))
    render_into(np.asarray(caps, np.float64), np.asarray(light, np.float64), ambient, shade, alpha, depth, edge)
    return shade, alpha, depth


def test_renderer_single_capsule_area_depth_and_shading():
    r, half = 6.0, 12.0
    shade, alpha, depth = _render([[32.5 - half, 32.5, 5.0, 32.5 + half, 32.5, 5.0, r]])
    area = 2 * r * 2 * half + math.pi * r * r  # the outline of a capsule seen side-on: a stadium
    assert abs(alpha.sum() - area) / area < 0.01
    assert depth.max() == pytest.approx(5.0 + r, abs=1e-3)  # nearest point: the top of the cylinder
    assert shade[32, 32] == pytest.approx(1.0, abs=1e-3)  # normal toward the light: fully lit
    assert shade[32 + int(r) - 1, 32] < 0.8 * shade[32, 32]  # darker toward the rim (across the axis)
    assert shade[32, 32 + int(half)] == pytest.approx(1.0, abs=1e-3)  # same normal all along the body
    assert alpha[0, 0] == 0 and alpha[32, 32] == 1


def test_renderer_capsule_along_the_view_is_a_disc_and_nearer_capsules_win():
    shade, alpha, depth = _render([[20.5, 20.5, 0.0, 20.5, 20.5, 30.0, 5.0]])
    assert abs(alpha.sum() - math.pi * 25) / (math.pi * 25) < 0.02
    assert depth.max() == pytest.approx(35.0, abs=1e-3)  # the near end sphere
    far = [10.0, 32.5, 0.0, 54.0, 32.5, 0.0, 4.0]
    near = [32.5, 10.0, 20.0, 32.5, 54.0, 20.0, 4.0]
    for order in ([far, near], [near, far]):  # the depth buffer, not the drawing order, decides
        _, _, depth = _render(order)
        assert depth[32, 32] == pytest.approx(24.0, abs=1e-3)


def test_same_seed_same_images_for_any_n_jobs_and_seeds_differ():
    kw = dict(shapes=2, orientations=3, images_per_class=50, size=24)  # 300 images: two random blocks
    a = generate_hand_pose(seed=5, **kw)
    b = generate_hand_pose(seed=5, n_jobs=2, **kw)
    c = generate_hand_pose(seed=6, **kw)
    assert a.images.shape == (300, 24, 24) and a.images.dtype == np.uint8
    assert np.array_equal(a.images, b.images) and np.array_equal(a.labels, b.labels)
    assert not np.array_equal(a.images, c.images)
    assert a.images.std() > 20  # a hand over clutter, not a blank
    assert GENERATOR_VERSION >= 1 and dataset_version("hand-pose") == GENERATOR_VERSION


def test_camera_style_never_uses_clean_backgrounds_lighting_or_skin():
    assert not set(CLEAN_FAMILIES) & set(CAMERA_FAMILIES)
    assert not set(CLEAN.skins) & set(CAMERA.skins)
    assert CLEAN.light_angle[1] < CAMERA.light_angle[0]  # light further off the camera axis
    assert CLEAN.ambient[0] > CAMERA.ambient[1]
    assert CAMERA.jpeg_quality and not CLEAN.jpeg_quality and CAMERA.blur[0] > CLEAN.blur[1]
    clean, cam = tile_bank("clean", 8, 64), tile_bank("camera", 8, 64)
    assert not any(np.array_equal(x, y) for x in clean for y in cam)
    kw = dict(shapes=1, orientations=1, images_per_class=4, size=32, seed=0)
    assert not np.array_equal(generate_hand_pose(**kw).images, generate_hand_pose(style="camera", **kw).images)


def test_builtin_sets_options_split_and_errors():
    small = load_dataset("hand-pose-small", images_per_class=1, size=24)
    assert len(small.class_names) == 250
    assert sorted({n.split(" · ")[0] for n in small.class_names}) == sorted(SMALL_SHAPES)
    ims = load_dataset("hand-pose", shapes="3", orientations="2", images_per_class="60", size="24", seed="1",
                       style="camera")
    assert ims.images.shape == (360, 24, 24)
    parts = split_per_class(ims)
    assert [len(p) for p in parts] == [240, 60, 60]
    for bad in (dict(shapes="no-such-shape"), dict(style="studio"), dict(orientations=31), dict(size=8)):
        with pytest.raises(DataError):
            load_dataset("hand-pose", images_per_class=1, **bad)


def test_classmap_datasets_lists_both_hand_sets(capsys):
    from classmap_gui.cli import main

    assert main(["datasets", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["hand-pose"]["available"] and rows["hand-pose-small"]["available"]
    assert "2430 classes" in rows["hand-pose"]["description"]


def test_demo_video_is_readable_and_shows_hand_pose_small_classes(tmp_path):
    import cv2

    from classmap_gui.core.data.hand_video import KEY_POSES, write_demo_video

    small = set(load_dataset("hand-pose-small", images_per_class=1, size=16).class_names)
    assert all(class_name(*k) in small for k in KEY_POSES)  # a model of the demo set has a right answer
    info = write_demo_video(tmp_path / "d.avi", size=(48, 64), fps=10)
    cap = cv2.VideoCapture(str(tmp_path / "d.avi"))
    frames = []
    while True:
        ok, f = cap.read()
        if not ok:
            break
        frames.append(f)
    assert len(frames) == info["frames"] > 10 * len(KEY_POSES) * 0.8
    assert frames[0].shape == (48, 64, 3)
    assert np.abs(frames[0].astype(int) - frames[len(frames) // 2]).mean() > 5  # it moves


def test_a_finger_state_code_gives_the_joint_angles_its_shape_has_and_new_codes_new_shapes():
    from classmap_gui.core.data.hand_shapes import all_poses, code_pose, shape_code, shape_pose

    for name in ("V", "O", "K"):      # fixed thumb, pinch and between: the same solver as the named shapes
        np.testing.assert_array_equal(code_pose(shape_code(name)), shape_pose(name))
    new = code_pose("FEFF/-/out")     # the middle finger alone: none of the 81
    assert np.abs(all_poses() - new).max(axis=1).min() > 20
    assert np.all(new >= LIMITS[:, 0]) and np.all(new <= LIMITS[:, 1])
