"""hand-pose generated and HOG-encoded in chunks into memory maps, here and on a 2-worker Dask cluster;
the ridge bank trained from those maps gives the same weights either way."""
import json

import numpy as np
import pytest

from classmap_gui.core.classify.banks.ridge_moments import ridge_moments
from classmap_gui.core.data.hand_chunks import (FEATURES_FILE, META_FILE, build_hand_pose_memmap,
                                                open_hand_pose_memmap)
from classmap_gui.core.data.hand_pose import generate_hand_pose
from classmap_gui.core.errors import DataError
from classmap_gui.core.features.hog import HOGFeatures
from classmap_gui.core.parallel import parallel_backend

OPTS = dict(shapes=3, orientations=40, images_per_class=8, seed=2, size=32)


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    return build_hand_pose_memmap(tmp_path_factory.mktemp("local"), **OPTS)


def test_chunked_files_hold_the_generators_images_and_their_hog(local):
    ref = generate_hand_pose(shapes=3, orientations=40, images_per_class=8, seed=2, size=32)
    assert local.class_names == ref.class_names and local.n_classes == 120
    assert isinstance(local.images, np.memmap) and isinstance(local.features, np.memmap)
    assert np.array_equal(local.images, ref.images)
    assert np.array_equal(local.features, HOGFeatures().fit(ref.images).transform(ref.images))
    rows = local.rows([6, 7])  # the test positions of every class
    assert np.array_equal(local.labels(rows), ref.labels[rows]) and len(rows) == 240
    assert set(local.seconds) == {"generation", "encoding"} and not local.cached


def test_a_complete_folder_is_reused_and_other_options_rebuild(local, tmp_path):
    again = build_hand_pose_memmap(local.folder, **OPTS)
    assert again.cached and np.array_equal(again.features, local.features)
    other = build_hand_pose_memmap(tmp_path, **{**OPTS, "seed": 3})
    assert not np.array_equal(other.images, local.images)
    (tmp_path / META_FILE).unlink()  # a build that died before its last step
    with pytest.raises(DataError, match="no complete generated hand-pose set"):
        open_hand_pose_memmap(tmp_path)
    assert not build_hand_pose_memmap(tmp_path, **{**OPTS, "seed": 3}).cached


def test_dask_cluster_gives_the_same_files_and_bank_weights(local, tmp_path):
    labels = local.labels(np.arange(len(local.images)))
    here = ridge_moments(str(local.folder / FEATURES_FILE), labels, local.n_classes, chunk=200, n_jobs=2)
    W_here, b_here = here.path().weights(10.0)
    with parallel_backend("dask", n_workers=2) as where:
        assert where["workers"] == 2
        remote = build_hand_pose_memmap(tmp_path, **OPTS)
        mom = ridge_moments(str(remote.folder / FEATURES_FILE), labels, remote.n_classes, chunk=200, n_jobs=2)
    assert np.array_equal(remote.images, local.images) and np.array_equal(remote.features, local.features)
    W, b = mom.path().weights(10.0)
    assert np.abs(W - W_here).max() <= 1e-5 * np.abs(W_here).max()
    assert np.abs(b - b_here).max() <= 1e-5
    assert json.loads((tmp_path / META_FILE).read_text())["n_classes"] == 120
