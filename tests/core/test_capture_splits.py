"""Capture-aware splits: frames of one burst never sit on both sides, and on a capture-like set the
reported accuracy is the honest one (what the model scores on bursts it has never seen)."""
import numpy as np
import pytest

from classmap_gui.bench.bursts import make_sets
from classmap_gui.core.data import ImageSet, load_digits
from classmap_gui.core.data.editing import NEW_GROUP, add_images, delete_images
from classmap_gui.core.selection.splits import grouped_split
from classmap_gui.core.errors import DataError
from classmap_gui.core.train.training import TrainConfig, evaluate, split_parts, train, validation_split


@pytest.fixture(scope="module")
def capture_like():
    """Digits as bursts (``classmap bench bursts``'s set): 12 source images per class x 6 near-identical
    frames; and 20 new bursts per class from other images (the honest measure)."""
    return make_sets(sources=12, frames=6, fresh=20, noise=6, seed=0)


def _sides(groups, parts):
    return [set(groups[p].tolist()) for p in parts]


@pytest.mark.parametrize("classmap", [None, {"d": 4, "p": 3, "n_triples": 500}])
def test_no_burst_on_both_sides_of_any_split(capture_like, classmap):
    cap, _ = capture_like
    for seed in range(5):
        cfg = TrainConfig(features="pixels", bank="ova-ridge", classmap=classmap, seed=seed)
        parts = split_parts(cap.labels, cfg, cap.groups)
        used = [parts[k] for k in ("train", "test", "embedding") if len(parts[k])]
        assert sum(len(p) for p in used) == len(cap)                       # nothing lost
        sides = _sides(cap.groups, used)
        for a in range(len(sides)):
            for b in range(a + 1, len(sides)):
                assert not sides[a] & sides[b], f"seed {seed}: a burst is in two parts"
        for p in used:                                                     # still stratified: every class tested
            assert len(np.unique(cap.labels[p])) == cap.n_classes
        # the validation part a penalty is chosen on keeps bursts whole too
        train_labels, train_groups = cap.labels[parts["train"]], cap.groups[parts["train"]]
        fit, val = validation_split(train_labels, train_groups, seed)
        assert not set(train_groups[fit].tolist()) & set(train_groups[val].tolist())


def test_reported_accuracy_falls_to_the_honest_one(capture_like):
    cap, fresh = capture_like
    cfg = TrainConfig(features="pixels", bank="ova-ridge", test_fraction=0.25, seed=0)
    grouped = train(cap, cfg)
    assert grouped.split_info["by"] == "capture group" and grouped.split_info["groups"] == 120
    naive_set = ImageSet(cap.images, cap.labels, cap.class_names, name="no groups")
    naive = train(naive_set, cfg)
    assert naive.split_info["by"] == "image"
    honest_grouped = evaluate(grouped.recogniser, fresh, measure_latency=False).accuracy
    honest_naive = evaluate(naive.recogniser, fresh, measure_latency=False).accuracy
    # a random split of near-duplicates flatters: it reports far more than the model scores on new bursts
    assert naive.report.accuracy - honest_naive > 0.1
    # the burst-grouped split reports what the model scores on new bursts
    assert abs(grouped.report.accuracy - honest_grouped) < 0.08
    assert grouped.report.accuracy < naive.report.accuracy - 0.08


def test_class_with_too_few_bursts_is_named(capture_like):
    cap, _ = capture_like
    groups = cap.groups.copy()
    groups[cap.labels == 3] = 999                     # class 3 captured in a single burst
    cfg = TrainConfig(features="pixels", bank="ova-ridge", seed=0)
    parts, info = grouped_split(cap.labels, groups, [cfg.test_fraction], 0)
    assert info["too_few"] == [3] and info["needed"] == 2
    assert (cap.labels[parts[1]] == 3).any()          # still tested (images split one by one), but named
    res = train(ImageSet(cap.images, cap.labels, cap.class_names, groups=groups), cfg)
    assert res.split_info["too_few"] == ["3"]


def test_ungrouped_split_is_unchanged():
    d = load_digits()
    cfg = TrainConfig(features="pixels", bank="ova-ridge", seed=4)
    plain = split_parts(d.labels, cfg)
    singletons = split_parts(d.labels, cfg, np.arange(len(d)))
    for k in plain:
        assert np.array_equal(plain[k], singletons[k])


def test_groups_follow_edits():
    d = load_digits().subset(np.arange(20))
    assert d.groups is None
    two = add_images(d, 1, list(d.images[:3]), group=NEW_GROUP)            # one burst of 3
    assert two.groups is not None and len(set(two.groups[-3:].tolist())) == 1
    assert len(np.unique(two.groups[:20])) == 20 and two.groups[-1] not in two.groups[:20]
    singles = add_images(two, 2, list(d.images[:2]))                      # files: each its own group
    assert len(np.unique(singles.groups[-2:])) == 2 and not set(singles.groups[-2:]) & set(two.groups)
    more = add_images(singles, 1, list(d.images[:2]), group=int(two.groups[-1]))  # same video again
    assert (more.groups[-2:] == two.groups[-1]).all()
    left = delete_images(more, [0, 1])
    assert np.array_equal(left.groups, more.groups[2:])
    assert np.array_equal(more.subset([20, 21]).groups, more.groups[[20, 21]])
    with pytest.raises(DataError, match="groups"):
        ImageSet(d.images, d.labels, d.class_names, groups=np.arange(3))


def test_bursts_bench_reports_both_splits(capsys):
    import json

    from classmap_gui.cli import main
    assert main(["bench", "bursts", "--set", "seeds=0", "--set", "fresh=10"]) == 0
    doc = json.loads(capsys.readouterr().out)
    row = doc["runs"][0]
    assert row["grouped"]["split"] == "capture group" and row["random"]["split"] == "image"
    assert doc["mean"]["random"]["flatters_by"] > doc["mean"]["grouped"]["flatters_by"] + 0.05
    assert len(doc["load"]) == 3
