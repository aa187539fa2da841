"""The generated glyph-pose sets: determinism, classes and names, what the images look like."""
import numpy as np
import pytest

from classmap_gui.core.data import builtin_datasets, load_dataset
from classmap_gui.core.data.glyph_pose import (BENCH_SPLIT, N_ORIENTATIONS, N_SHAPES, generate_glyph_pose,
                                               orientations, shape_names, split_per_class)
from classmap_gui.core.errors import Cancelled, DataError


def test_full_set_has_2430_readable_classes_indexed_shape_major():
    assert N_SHAPES == 81 and N_ORIENTATIONS == 30
    ims = generate_glyph_pose(images_per_class=1, size=16)
    assert ims.n_classes == 2430 and len(ims) == 2430
    assert ims.images.shape == (2430, 16, 16) and ims.images.dtype == np.uint8
    assert len(set(ims.class_names)) == 2430
    shapes, oris = shape_names(), orientations()
    # class index = shape * 30 + orientation
    k = 7 * 30 + 11
    yaw, pitch, roll = oris[11]
    assert ims.class_names[k].startswith(shapes[7] + "@")
    assert f"yaw{yaw:+d}" in ims.class_names[k] or (yaw == 0 and "yaw0" in ims.class_names[k])
    assert ims.class_names[0] == "A@yaw-50,pitch-30,roll-20"
    assert "B@yaw0,pitch0," in " ".join(ims.class_names[30:60])


def test_same_seed_same_images_whatever_the_parallelism_other_seed_differs():
    kw = dict(shapes=3, orientations=4, images_per_class=30, size=32)  # 360 images: two random blocks
    a = load_dataset("glyph-pose", seed=5, **kw)
    b = generate_glyph_pose(seed=5, n_jobs=2, **kw)
    c = generate_glyph_pose(seed=6, **kw)
    np.testing.assert_array_equal(a.images, b.images)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.class_names == b.class_names
    assert np.mean(a.images != c.images) > 0.5


def test_orientations_of_one_glyph_differ_and_images_vary_within_a_class():
    ims = generate_glyph_pose(shapes=1, images_per_class=12, size=48, seed=1)
    assert ims.n_classes == 30
    # The glyph itself (not the background) must change with the orientation: compare the class
    # means, where backgrounds and noise average out.
    means = ims.images.reshape(30, 12, 48, 48).astype(np.float32).mean(1)
    d = np.abs(means[:, None] - means[None, :]).mean((2, 3))
    off = d[~np.eye(30, dtype=bool)]
    assert off.min() > 0.5
    same = ims.images[:12].reshape(12, -1).astype(np.float32)
    assert np.abs(same[0] - same[1:]).mean() > 10  # jitter and backgrounds: no two alike


def test_backgrounds_are_photo_crops_not_flat():
    ims = generate_glyph_pose(shapes=2, orientations=2, images_per_class=10, size=64, seed=2)
    x = ims.images.astype(np.float32)
    # 4x4-pixel block means of the top band (mostly background): the added noise averages out
    # (sigma <= 7 -> <= 1.75), the photographs' structure stays.
    band = x[:, :16, :].reshape(len(x), 4, 4, 16, 4).mean((2, 4)).reshape(len(x), -1)
    assert np.median(band.std(1)) > 5
    # and the backgrounds differ between images of the same class
    assert np.abs(band[0] - band[1]).mean() > 5


def test_small_variant_parameters_and_benchmark_split():
    names = [d.name for d in builtin_datasets()]
    assert "glyph-pose" in names and "glyph-pose-small" in names
    ims = load_dataset("glyph-pose-small", images_per_class=3, size=(24, 32))
    assert ims.n_classes == 250 and ims.images.shape == (750, 24, 32)
    assert ims.name == "glyph-pose-small"
    full = generate_glyph_pose(shapes=2, orientations=3, images_per_class=sum(BENCH_SPLIT), size=16)
    parts = split_per_class(full)
    assert [len(p) for p in parts] == [6 * c for c in BENCH_SPLIT]
    for p, c in zip(parts, BENCH_SPLIT):
        assert (p.counts() == c).all()
    with pytest.raises(DataError, match="images per class"):
        split_per_class(generate_glyph_pose(shapes=1, orientations=2, images_per_class=5, size=16))


def test_bad_parameters_and_stop_request():
    with pytest.raises(DataError, match="shapes"):
        generate_glyph_pose(shapes=0)
    with pytest.raises(DataError, match="orientations"):
        generate_glyph_pose(orientations=31)
    with pytest.raises(DataError, match="images_per_class"):
        generate_glyph_pose(images_per_class=0)
    seen = []
    with pytest.raises(Cancelled):
        generate_glyph_pose(shapes=2, images_per_class=10, size=16, progress=lambda f, s: seen.append(f),
                            should_stop=lambda: len(seen) > 1)
