"""A model's test part found again after training (the Explore views, ``classmap eval`` on the training
set) is the one training held out: on data with capture bursts the split keeps bursts whole, so the
part must be re-derived with the bursts, or it mixes training frames into the "held-out" images."""
import numpy as np
import pytest

from classmap_gui.cli.model import _held_out
from classmap_gui.core.explore import views
from classmap_gui.bench.bursts import make_sets
from classmap_gui.core.train.training import TrainConfig, split_parts, train


@pytest.fixture(scope="module")
def trained():
    cap, _ = make_sets(sources=6, frames=4, fresh=1, noise=6, seed=1)
    cfg = TrainConfig(features="pixels", bank="ova-ridge", test_fraction=0.25, seed=2)
    res = train(cap, cfg)
    # the bursts matter here: an image-level split of this set is another part
    assert not np.array_equal(split_parts(cap.labels, cfg)["test"], res.split["test"])
    return cap, cfg, res


def test_views_test_part_is_the_part_training_held_out(trained):
    cap, cfg, res = trained
    test = views.test_part(cap, cfg)
    assert np.array_equal(test.images, cap.images[res.split["test"]])
    assert np.array_equal(test.groups, cap.groups[res.split["test"]])


def test_cli_eval_on_the_training_set_scores_the_held_out_bursts(trained):
    cap, _, res = trained
    data, note = _held_out(res.recogniser, cap, score_all=False)
    assert np.array_equal(data.images, cap.images[res.split["test"]])
    assert f"scoring the {len(res.split['test'])} images its training held out" in note
    assert not set(data.groups.tolist()) & set(cap.groups[res.split["train"]].tolist())  # no burst on both sides
