"""hand-pose beyond 30 orientations: an even grid over all 3-D orientations, names that state the angles."""
import numpy as np
import pytest

from classmap_gui.core.data.hand_orientations import grid_shape, orientation_grid, parse_orientation
from classmap_gui.core.data.hand_pose import (N_ORIENTATIONS, class_factors, class_name, generate_hand_pose,
                                              orientation_distance, orientation_table, orientations, pose_match,
                                              render_block)
from classmap_gui.core.data.hand_style import CLEAN
from classmap_gui.core.errors import DataError


def test_the_default_30_orientations_are_what_counts_up_to_30_choose_and_render_as_before():
    grid, chosen = orientation_table(None)
    assert grid.tolist() == [list(o) for o in orientations()] and chosen.tolist() == list(range(N_ORIENTATIONS))
    grid7, chosen7 = orientation_table(7)
    assert len(grid7) == N_ORIENTATIONS and len(chosen7) == 7
    shapes, orients = np.array([3, 10, 40]), np.array([0, 17, 29])
    old = render_block(5, shapes, orients, (32, 32), 1, CLEAN)  # the default grid, as before the option
    assert np.array_equal(old, render_block(5, shapes, orients, (32, 32), 1, CLEAN, grid=grid))


def test_1235_orientations_cover_all_rotations_evenly():
    g = orientation_grid(1235)
    assert g.shape == (1235, 3) and len(np.unique(g, axis=0)) == 1235
    assert grid_shape(1235) == (95, 13)  # 95 viewing directions x 13 in-plane rolls
    # nearest-neighbour angle between grid rotations: no two nearly equal, none isolated
    nn = np.empty(len(g))
    for i in range(len(g)):
        dist = orientation_distance(np.repeat(g[i:i + 1], len(g), 0), g)
        dist[i] = np.inf
        nn[i] = dist.min()
    assert nn.min() > 10 and nn.max() < 35
    # every rotation lies within 30° of a grid orientation (pose_match's tolerance covers the gaps)
    rng = np.random.default_rng(0)
    q = rng.standard_normal((200, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    w, x, y, z = q.T  # uniform random rotations -> (yaw, pitch, roll) of Rz(roll) Rx(pitch) Ry(yaw)
    R = np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], 1),
                  np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], 1),
                  np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], 1)], 1)
    pitch = np.rad2deg(np.arcsin(np.clip(R[:, 2, 1], -1, 1)))
    roll = np.rad2deg(np.arctan2(-R[:, 0, 1], R[:, 1, 1]))
    yaw = np.rad2deg(np.arctan2(-R[:, 2, 0], R[:, 2, 2]))
    ypr = np.stack([yaw, pitch, roll], 1)
    far = [orientation_distance(np.repeat(ypr[i:i + 1], len(g), 0), g).min() for i in range(len(ypr))]
    assert max(far) < 30


def test_grid_class_names_are_readable_and_read_back():
    ims = generate_hand_pose(shapes=["V"], orientations=126, images_per_class=1, size=24)
    assert len(ims.class_names) == 126 and len(set(ims.class_names)) == 126
    g = orientation_grid(126)
    assert ims.class_names[1] == class_name("V", *g[1])
    f = class_factors(ims.class_names)
    assert np.array_equal(np.stack([f["yaw"], f["pitch"], f["roll"]], 1), g)
    assert pose_match(ims.class_names, ims.class_names).all()
    # a neighbouring roll of the same direction is 360/7 ≈ 51° away: not a match; another shape never is
    assert not pose_match(ims.class_names[:1], ims.class_names[1:2])[0]
    assert not pose_match([class_name("A", *g[0])], ims.class_names[:1])[0]
    assert ims.images.std() > 10  # hands were drawn


def test_bad_orientation_counts_and_names_get_clear_errors():
    with pytest.raises(DataError, match="1237 orientations cannot be split.*1235"):
        orientation_grid(1237)
    with pytest.raises(DataError, match="not a hand-pose class name"):
        class_factors(["Q · palm forward · turned 30° left"])
    with pytest.raises(DataError, match="not a hand-pose orientation"):
        parse_orientation("palm forward · leaning 20° left · turned 30° left")
    assert parse_orientation("palm forward · turned 150° left · fingers 80° away") == (-150, -80, 0)
