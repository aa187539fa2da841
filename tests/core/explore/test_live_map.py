"""The live map's computations: a frame's place on the map, the filter's list and the true class's rank,
the k-means patches that drive a frame, and the truth of labelled sources; on tiny data."""
import numpy as np
import pytest

from classmap_gui.core.explore import live_map as lm
from classmap_gui.core.errors import ConfigError, NotFittedError
from classmap_gui.core.explore.live_truth import demo_video_classes, folder_truth, source_truth, video_truth


def test_true_rank_counts_closer_classes_and_ties_in_class_order():
    dist = np.array([3.0, 1.0, 2.0, 1.0], np.float32)
    assert [lm.true_rank(dist, c) for c in range(4)] == [4, 1, 3, 2]
    assert [lm.true_rank(dist, c) for c in range(4)] == list(np.argsort(np.argsort(dist, kind="stable")) + 1)
    with pytest.raises(ConfigError):
        lm.true_rank(dist, 4)


def test_a_query_on_a_class_lands_on_it_and_between_two_classes_between_them():
    classes = np.array([[0, 0], [10, 0], [0, 10], [30, 30]], np.float32)
    xy = np.array([[0, 0], [1, 0], [0, 1], [5, 5]], np.float32)
    np.testing.assert_array_equal(lm.place(lm.class_distances(classes[2], classes), xy, k=3), xy[2])
    mid = lm.place(lm.class_distances(np.array([5, 0], np.float32), classes), xy, k=2)
    np.testing.assert_allclose(mid, [0.5, 0.0], atol=1e-6)
    near0 = lm.place(lm.class_distances(np.array([1, 0], np.float32), classes), xy, k=2)
    assert 0 < near0[0] < 0.5  # nearer class 0: pulled toward it


def test_faithfulness_is_high_on_a_map_that_is_the_embedding_and_low_on_a_shuffled_one():
    rng = np.random.default_rng(0)
    classes = rng.normal(size=(200, 2)).astype(np.float32)
    queries = (classes[:50] + rng.normal(scale=0.05, size=(50, 2))).astype(np.float32)
    good = lm.placement_faithfulness(queries, classes, classes, k=5)
    bad = lm.placement_faithfulness(queries, classes, rng.permutation(classes), k=5)
    assert good > 0.6 and bad < 0.35  # a marker on its nearest class keeps that one (1 of 5) on any map


def test_top_centroids_sum_the_quadrants_and_give_shares():
    K = 5
    f = np.zeros((4, K), np.float32)
    f[:, 3] = 1.0  # 4 in all
    f[0, 1] = 3.0
    f[2, 0] = 0.5
    idx, share = lm.top_centroids(f.ravel(), K, m=3)
    assert idx.tolist() == [3, 1, 0]
    np.testing.assert_allclose(share, [4 / 7.5, 3 / 7.5, 0.5 / 7.5], rtol=1e-6)
    with pytest.raises(ConfigError):
        lm.top_centroids(np.zeros(7, np.float32), K)


def test_rank_tally_fills_the_recall_curve():
    t = lm.RankTally(3)
    for r in (1, 1, 2, 5, 3):
        t.add(r)
    assert t.counts.tolist() == [2, 1, 1, 1] and t.frames == 5
    np.testing.assert_allclose(t.recall(), [0.4, 0.6, 0.8])


@pytest.fixture(scope="module")
def small_model():
    """A 12-class ClassMap recogniser on blobs drawn as tiny images (HOG, ridge), and its images."""
    from classmap_gui.core.data.imageset import ImageSet
    from classmap_gui.core.train.training import TrainConfig, train

    rng = np.random.default_rng(0)
    imgs, labs = [], []
    for c in range(12):
        for _ in range(12):
            im = rng.integers(0, 40, (24, 24)).astype(np.uint8)
            y, x = divmod(c, 4)
            im[2 + 6 * y:8 + 6 * y, 2 + 5 * x:8 + 5 * x] = 230
            imgs.append(im)
            labs.append(c)
    ims = ImageSet(np.stack(imgs), np.array(labs), [f"c{c}" for c in range(12)], name="blobs")
    cfg = TrainConfig(features="kmeans", features_params={"n_centroids": 8, "patch_size": 4, "n_patches": 2000},
                      bank="ova-ridge", classmap={"d": 4, "p": 5}, test_fraction=0.25, seed=0)
    return train(ims, cfg).recogniser, ims


def test_analyser_lists_the_filters_candidates_with_refined_scores_and_ranks_the_truth(small_model):
    rec, ims = small_model
    cm = rec.classmap
    xy = np.random.default_rng(1).normal(size=(12, 2)).astype(np.float32)
    an = lm.LiveAnalyser(rec, xy)
    img = ims.images[5]
    fr = an.analyse(img, truth=int(ims.labels[5]))
    X = rec.transform(img[None])
    cands, dist = cm.candidates(rec.classifier, X)
    np.testing.assert_array_equal(fr.candidates, cands[0])
    np.testing.assert_allclose(fr.distances, dist[0], rtol=1e-5)
    pred = rec.predict(img[None], top=cm.p)
    assert fr.winner == int(pred.labels[0])
    best = fr.candidates[np.nanargmax(fr.scores)]
    assert best == fr.winner  # the refine's highest score is the winner
    assert fr.refine_rank[fr.candidates.tolist().index(fr.winner)] == 1
    assert sorted(fr.refine_rank.tolist()) == list(range(1, cm.p + 1))  # v2 evaluates every candidate
    np.testing.assert_array_equal(fr.candidates[np.argsort(fr.refine_rank)], pred.top_classes[0])
    full = lm.class_distances(lm.query_embedding(cm, rec.classifier, X)[0], an.classes)
    np.testing.assert_array_equal(np.argsort(full, kind="stable")[:cm.p], fr.candidates)  # the filter is this order
    assert fr.rank == lm.true_rank(full, int(ims.labels[5])) and fr.truth == int(ims.labels[5])
    assert fr.position.shape == (2,) and fr.tally.sum() == 1
    assert len(fr.patches) == lm.TOP_PATCHES and np.all(np.diff(fr.patch_share) <= 0)
    assert fr.patch_image.dtype == np.uint8 and fr.patch_image.shape[1] > 3 * fr.patch_image.shape[0]  # one row
    unknown = an.analyse(img)
    assert unknown.rank == -1 and unknown.truth == -1 and unknown.tally.sum() == 1
    an.class_xy = None
    assert an.analyse(img).position is None
    an.reset()
    assert an.tally.frames == 0


def test_analyser_given_the_frames_features_describes_it_as_when_it_computes_them(small_model):
    rec, ims = small_model
    an = lm.LiveAnalyser(rec, np.random.default_rng(1).normal(size=(12, 2)).astype(np.float32))
    img = ims.images[7]
    own = an.analyse(img, truth=int(ims.labels[7]))
    given = an.analyse(img, truth=int(ims.labels[7]), features=rec.transform(img[None]))
    for field in ("candidates", "distances", "scores", "refine_rank", "position", "patches"):
        np.testing.assert_array_equal(getattr(given, field), getattr(own, field))
    assert (given.winner, given.rank) == (own.winner, own.rank)
    # other features give another frame: the given ones are the ones used
    other = an.analyse(img, features=rec.transform(ims.images[100][None]))
    assert other.winner == an.analyse(ims.images[100]).winner


def test_analyser_needs_classmap(small_model):
    rec, _ = small_model
    from classmap_gui.core.recogniser import Recogniser

    with pytest.raises(NotFittedError):
        lm.LiveAnalyser(Recogniser(rec.features, rec.classifier, None, rec.class_names, rec.image_size))


def test_demo_video_truth_names_hand_pose_classes_and_skips_frames_between_poses():
    from classmap_gui.core.data.hand_pose import class_name
    from classmap_gui.core.data.hand_video import KEY_POSES, demo_labels

    labels = demo_labels()
    names = ["x", class_name(*KEY_POSES[0]), class_name(*KEY_POSES[1])]
    per = demo_video_classes(names)
    assert len(per) == len(labels) and per[0] == 1 and set(per.tolist()) == {-1, 1, 2}
    assert demo_video_classes(names, n_frames=len(labels) + 1) is None  # another video of the same name
    assert demo_video_classes(["a", "b"]) is None
    truth = video_truth(per)
    first_move = labels.index(None)
    assert truth(1) == 1 and truth(first_move) == 1  # frames read 1..first_move: the held pose
    assert truth(first_move + 1) == -1  # moving
    assert truth(len(labels) + 1) == 1  # a looping video starts over
    start2 = next(f for f in range(first_move, len(labels)) if per[f] == 2)
    assert truth(start2 + 1) == -1 and truth(start2 + 3) == 2  # a pose just reached: not yet trusted


def test_folder_truth_and_sources_without_truth(tmp_path):
    t = folder_truth(["cat", "dog"])
    assert t(0, str(tmp_path / "dog" / "1.png")) == 1 and t(0, str(tmp_path / "x" / "1.png")) == -1
    assert source_truth([str(tmp_path)], ["a", "b"]) is not None
    from classmap_gui.core.data.hand_pose import class_name
    from classmap_gui.core.data.hand_video import KEY_POSES
    from pathlib import Path

    demo = Path(__file__).resolve().parents[3] / "resources" / "demo-hands.avi"
    assert source_truth(str(demo), [class_name(*KEY_POSES[0]), "b"])(1, "") == 0  # the shipped video
    assert source_truth(0, ["a", "b"]) is None and source_truth(str(tmp_path / "v.avi"), ["a", "b"]) is None
