"""train(): the split it reports, penalties chosen on validation, seeds, and costs named for what they measure."""
import numpy as np
import pytest

from classmap_gui.core.data import load_digits
from classmap_gui.core.errors import ConfigError
from classmap_gui.core.selection.splits import stratified_split
from classmap_gui.core.train.training import AUTO_CANDIDATES, EvalReport, TrainConfig, cost_line, evaluate, train


@pytest.fixture(scope="module")
def digits():
    return load_digits()


@pytest.fixture(scope="module")
def with_classmap(digits):
    cfg = TrainConfig(features="pixels", bank="ova-ridge", classmap={"d": 4, "p": 3, "n_triples": 2000}, seed=3)
    return train(digits, cfg)


def test_split_parts_are_disjoint_and_cover_the_set(with_classmap, digits):
    split = with_classmap.split
    parts = [split["train"], split["embedding"], split["test"]]
    assert sum(len(p) for p in parts) == len(digits)
    assert len(np.unique(np.concatenate(parts))) == len(digits)          # disjoint, nothing lost
    assert {k: len(split[k]) for k in ("train", "embedding", "test")} == with_classmap.sizes
    # the validation part the penalty was chosen on lies inside the training part, away from the test part
    assert len(split["validation"]) > 0 and np.isin(split["validation"], split["train"]).all()
    for part in parts:                                                  # stratified: every class in every part
        assert len(np.unique(digits.labels[part])) == digits.n_classes


def test_test_predictions_are_those_of_the_test_part(with_classmap, digits):
    test = digits.subset(with_classmap.split["test"])
    pred = with_classmap.test_predictions
    assert len(pred) == len(test)
    again = with_classmap.recogniser.predict(test.images)
    assert np.array_equal(pred.labels, again.labels)
    assert with_classmap.report.accuracy == pytest.approx(np.mean(pred.labels == test.labels))
    assert np.array_equal(pred.evaluations, again.evaluations)


def test_split_indices_match_imageset_split(digits):
    idx = stratified_split(digits.labels, [0.2, 0.1], seed=5)
    parts = digits.split(0.2, 0.1, seed=5)
    for i, part in zip(idx, parts):
        assert np.array_equal(digits.labels[i], part.labels) and np.array_equal(digits.images[i], part.images)


def test_ridge_penalty_is_chosen_on_validation_by_default(digits):
    res = train(digits, TrainConfig(features="pixels", bank="ova-ridge", seed=0))
    sel = res.selection["bank.alpha"]
    assert sel["split"] == "validation" and len(sel["candidates"]) == len(AUTO_CANDIDATES["alpha"])
    assert sel["scores"][f"{sel['chosen']:g}"] == max(sel["scores"].values())  # the best on validation
    assert res.recogniser.classifier.alpha == sel["chosen"]             # and the bank was refitted with it
    assert res.recogniser.metadata["selection"] == res.selection
    # an explicit value is kept, and nothing is chosen
    fixed = train(digits, TrainConfig(features="pixels", bank="ova-ridge", bank_params={"alpha": 2.0}, seed=0))
    assert fixed.selection == {} and fixed.recogniser.classifier.alpha == 2.0
    assert len(fixed.split["validation"]) == 0


def test_liblinear_c_auto(digits):
    small = digits.select_classes([0, 1, 2])
    res = train(small, TrainConfig(features="pixels", bank="ova-liblinear", bank_params={"C": "auto"}, seed=0))
    sel = res.selection["bank.C"]
    assert sel["chosen"] in sel["candidates"] and res.recogniser.classifier.C == sel["chosen"]


def test_auto_on_a_bank_without_that_penalty_is_refused(digits):
    with pytest.raises(ConfigError, match="no parameter C"):
        train(digits, TrainConfig(features="pixels", bank="compressive", bank_params={"C": "auto"}))


def test_the_seed_reaches_every_random_component(digits):
    cfg = TrainConfig(features="pixels", bank="ova-ridge", classmap={"d": 4, "p": 3, "n_triples": 2000,
                                                                     "embedding": "random"}, seed=11)
    rec = train(digits, cfg).recogniser
    assert rec.classmap.random_state == 11
    rec2 = train(digits, TrainConfig(**{**cfg.to_dict(), "seed": 12})).recogniser
    assert rec2.classmap.random_state == 12
    assert not np.array_equal(rec.classmap.reference_, rec2.classmap.reference_)
    # a value the user sets wins over the seed
    cfg3 = TrainConfig(features="cnn", features_params={"random_state": 5, "m": 50}, bank="ova-ridge",
                       bank_params={"alpha": 1.0}, seed=9)
    assert train(digits, cfg3).recogniser.features.random_state == 5
    cfg4 = TrainConfig(features="cnn", features_params={"m": 50}, bank="ova-ridge", bank_params={"alpha": 1.0}, seed=9)
    assert train(digits, cfg4).recogniser.features.random_state == 9


def test_costs_are_named_for_what_they_measure(with_classmap, digits):
    rep = with_classmap.report
    assert rep.brute_force_evaluations == 10
    assert rep.evaluations_ratio == pytest.approx(10 / rep.evaluations_per_query)
    assert set(rep.latency_speedup) == {"single", "batch"}              # measured, so its size is not asserted
    d = rep.to_dict()
    assert "speedup" not in d and d["evaluations_ratio"] == rep.evaluations_ratio
    line = cost_line(rep)
    assert line.startswith(f"{rep.evaluations_ratio:.1f}× fewer evaluations · ")
    sp = rep.latency_speedup["single"]
    assert line.endswith(f"{sp:.1f}× faster per image" if sp >= 1 else f"{1 / sp:.1f}× slower per image")
    assert "fewer evaluations" in rep.summary() and "speed-up" not in rep.summary()


def test_brute_force_has_no_latency_speedup(digits):
    res = train(digits, TrainConfig(features="pixels", bank="ova-ridge", bank_params={"alpha": 1.0}))
    assert res.report.latency_speedup is None and res.report.evaluations_ratio == 1
    assert cost_line(res.report) == "1.0× fewer evaluations"


def test_evaluate_can_skip_the_latency_measurement(with_classmap, digits):
    rep = evaluate(with_classmap.recogniser, digits.subset(with_classmap.split["test"]), measure_latency=False)
    assert isinstance(rep, EvalReport) and rep.latency_speedup is None
    assert rep.accuracy == with_classmap.report.accuracy


def test_reference_penalty_trains_smoother_references(digits):
    cfg = TrainConfig(features="pixels", bank="ova-ridge", bank_params={"alpha": 1.0},
                      classmap={"d": 4, "p": 3, "n_triples": 2000, "reference_penalty": 10}, seed=0)
    res = train(digits, cfg)
    cm = res.recogniser.classmap
    assert cm.reference_coef_.shape == (4, 64)                    # the references' own weights, kept with the model
    assert np.all(res.test_predictions.evaluations == 4 + 3)      # d + p: none of the bank's rows is a reference
    assert res.recogniser.metadata["classmap_params"]["reference_penalty"] == 10   # the model says so
    with pytest.raises(ConfigError, match="reference_penalty"):
        train(digits, TrainConfig(features="pixels", bank="ova-ridge",
                                  classmap={"d": 4, "p": 3, "reference_penalty": -1}))


def test_an_encoded_set_trains_the_same_model_as_its_images(with_classmap, digits):
    """A caller that encodes its images and lets them go (the hand model's build) trains the very model the images
    train: the same split, bank, ClassMap and test-part report, from feature rows alone."""
    from classmap_gui.core.train.encode import encode_set
    from classmap_gui.core.train.training import feature_map

    cfg = TrainConfig(features="pixels", bank="ova-ridge", classmap={"d": 4, "p": 3, "n_triples": 2000}, seed=3)
    encoded = encode_set(digits, feature_map(cfg).fit(digits.images))
    assert not hasattr(encoded, "images")                               # no pixels travel with it
    res = train(encoded, cfg)
    assert {k: v.tolist() for k, v in res.split.items()} == {k: v.tolist() for k, v in with_classmap.split.items()}
    a, b = res.recogniser, with_classmap.recogniser
    assert np.array_equal(a.classifier.coef_, b.classifier.coef_)
    assert np.array_equal(a.classmap.reference_, b.classmap.reference_)
    assert np.array_equal(a.classmap.class_embeddings_, b.classmap.class_embeddings_)
    assert res.report.accuracy == with_classmap.report.accuracy
    assert np.array_equal(res.test_predictions.labels, with_classmap.test_predictions.labels)
    with pytest.raises(ConfigError, match="features"):                  # rows of another feature map are refused
        train(encoded, TrainConfig(features="hog", bank="ova-ridge", seed=3))
