"""The one search (core/train/search.py): every choice made on the validation rows it was handed, recorded with
their digest, and the refit on fit + validation; no choice left at the edge of its grid where widening it helps;
ClassMap's embedding_examples; the Train panel's path through it."""
from __future__ import annotations

import numpy as np
import pytest

from classmap_gui.core.classify import ClassMap
from classmap_gui.core.errors import ConfigError
from classmap_gui.core.registry import make_bank
from classmap_gui.core.train.search import ClassMapSearch
from classmap_gui.core.selection.policy import part, record
from classmap_gui.core.selection.splits import row_ids


def problem(C=30, D=12, n_per=(8, 3, 3, 3), seed=0):
    """Gaussian classes: fit, validation, embedding and test parts (n_per images per class each)."""
    rng = np.random.default_rng(seed)
    mu = (rng.normal(size=(C, 4)) @ rng.normal(size=(4, D)) / 2 + 0.5 * rng.normal(size=(C, D))).astype(np.float32)
    out = []
    for n in n_per:
        y = np.repeat(np.arange(C), n)
        out.append(((mu[y] + 1.5 * rng.normal(size=(len(y), D))).astype(np.float32), y))
    return out


CM = {"d": 4, "n_triples": 2000, "p": [3, 5, 10, 20], "refine": "auto", "reference_penalty": [1.0, 3.0, 10.0, 30.0],
      "embedding_examples": "auto"}


@pytest.fixture(scope="module")
def digits():
    from classmap_gui.core.data import load_digits

    return load_digits()


@pytest.fixture(scope="module")
def parts():
    return problem()


@pytest.fixture(scope="module")
def fitted(parts):
    (Xf, yf), (Xv, yv), (Xe, ye), _ = parts
    return ClassMapSearch("ova-ridge", {"alpha": [0.1, 1.0, 10.0, 100.0]}, CM, curve_seeds=2).fit(Xf, yf, Xv, yv, Xe, ye)


def test_every_choice_names_the_validation_rows_and_the_refit_carries_it(parts, fitted):
    (Xf, yf), (Xv, yv), (Xe, ye), (Xt, yt) = parts
    s = fitted
    val = part("validation", row_ids(Xv))
    assert set(s.selection_) == {"bank.alpha", "references", "classmap_point"}
    for rec in s.selection_.values():
        assert (rec["split"], rec["split_rows"], rec["split_digest"]) == ("validation", len(yv), val["digest"])
    assert part("validation", row_ids(Xv[::-1]))["digest"] == val["digest"]      # rows, not their order
    assert part("validation", row_ids(Xt))["digest"] != val["digest"]
    chosen = s.selection_["classmap_point"]["chosen"]
    assert s.bank_.alpha == s.selection_["bank.alpha"]["chosen"] == s.best_params_["bank"]["alpha"]
    assert s.classmap_.p == chosen["p"] and s.classmap_.refine == chosen["refine"]
    assert s.classmap_.embedding_examples == chosen["embedding_examples"]
    assert set(s.models_) == {"v2", "v3"} and s.models_["v3"].threshold_ is not None
    assert (s.reference_bank_ is None) == (chosen["reference_penalty"] == 1.0)
    # every record names the grid it tried and whether its choice is still at an edge of it
    for name, grid in (("bank.alpha", "alpha"), ("references", "reference_penalty"), ("classmap_point", "p")):
        rec = s.selection_[name]
        value = rec["chosen"] if name == "bank.alpha" else rec["chosen"][grid]
        tried = rec["grid"][grid]
        assert rec["at_edge"] == (value in (tried[0], tried[-1])) == (grid in rec["edge"]), name
        assert rec["at_edge"] == (grid in rec["stopped_by"]), name
    assert s.candidates_["p"] == s.selection_["classmap_point"]["grid"]["p"]
    assert s.candidates_["reference_penalty"] == s.selection_["references"]["grid"]["reference_penalty"]
    # the refit: the bank on fit + validation (brute force's test accuracy is that bank's)
    again = make_bank("ova-ridge", alpha=s.bank_.alpha).fit(np.concatenate([Xf, Xv]), np.concatenate([yf, yv]))
    assert np.array_equal(again.predict(Xt), s.bank_.predict(Xt))
    assert len(s.predict(Xt)) == len(yt)


def test_the_choices_are_read_off_the_validation_part(parts, fitted):
    """A check that can fail: other validation labels, other scores (the records come from that part)."""
    (Xf, yf), (Xv, yv), (Xe, ye), _ = parts
    poisoned = np.random.default_rng(5).permutation(yv)
    other = ClassMapSearch("ova-ridge", {"alpha": [0.1, 1.0, 10.0, 100.0]}, CM, curve_seeds=2).fit(
        Xf, yf, Xv, poisoned, Xe, ye)
    for name in ("bank.alpha", "references"):
        assert other.selection_[name]["scores"] != fitted.selection_[name]["scores"], name


def test_a_part_sharing_a_row_with_the_test_part_is_refused_before_any_work(parts, monkeypatch):
    (Xf, yf), (Xv, yv), (Xe, ye), (Xt, yt) = parts
    monkeypatch.setattr(ClassMapSearch, "_choose_penalty", lambda *a, **k: pytest.fail("the search ran"))
    leaky = np.concatenate([Xv, Xt[:1]])
    with pytest.raises(ConfigError, match="validation part shares 1 item"):
        ClassMapSearch("ova-ridge", {}, CM).fit(Xf, yf, leaky, np.concatenate([yv, yt[:1]]), Xe, ye,
                                                unseen={"test": row_ids(Xt)})


def test_nothing_to_choose_fits_the_settings_given_without_validation(parts):
    (Xf, yf), _, (Xe, ye), _ = parts
    s = ClassMapSearch("ova-ridge", {"alpha": 1.0}, {"d": 4, "p": 5, "n_triples": 2000})
    assert not s.searches()
    s.fit(Xf, yf, Xf[:0], yf[:0], Xe, ye)
    assert s.selection_ == {} and s.classmap_.p == 5 and s.classmap_.embedding_examples == "embedding"
    assert s.bank_.alpha == 1.0


def test_bad_settings_are_refused_by_name():
    with pytest.raises(ConfigError, match="only reference_penalty, embedding_examples, refine, p"):
        ClassMapSearch("ova-ridge", {}, {"d": [4, 8]}).check()
    with pytest.raises(ConfigError, match="embedding_examples"):
        ClassMapSearch("ova-ridge", {}, {"embedding_examples": ["embedding", "everything"]}).check()
    with pytest.raises(ConfigError, match="not gamma"):
        ClassMapSearch("ova-rbf", {"gamma": [1.0, 2.0]}).check()
    with pytest.raises(ConfigError, match="reference_penalty must be positive"):
        ClassMapSearch("ova-ridge", {}, {"reference_penalty": -1}).check()


def test_a_record_names_the_part_it_was_handed():
    with pytest.raises(TypeError):
        record(1.0, [1.0], {}, by="x")                                     # no constant default
    with pytest.raises(ConfigError, match="part it was chosen on"):
        record(1.0, [1.0], {}, split="", by="x")
    r = record(1.0, [1.0], {}, split=part("validation videos", np.arange(4)), by="x")
    assert r["split"] == "validation videos" and r["split_rows"] == 4 and len(r["split_digest"]) == 16


def test_embedding_examples_is_a_classmap_parameter(parts):
    (Xf, yf), _, (Xe, ye), _ = parts
    bank = make_bank("ova-ridge", alpha=1.0).fit(Xf, yf)
    with pytest.raises(ConfigError, match="needs the bank's training examples"):
        ClassMap(d=4, n_triples=2000, embedding_examples="embedding+training").fit_embedding(bank, Xe, ye)
    both = ClassMap(d=4, n_triples=2000, embedding_examples="embedding+training").fit_embedding(
        bank, Xe, ye, X_train=Xf, y_train=yf)
    alone = ClassMap(d=4, n_triples=2000).fit_embedding(bank, Xe, ye, X_train=Xf, y_train=yf)  # unused here
    same = ClassMap(d=4, n_triples=2000).fit_embedding(bank, Xe, ye)
    assert np.array_equal(alone.class_embeddings_, same.class_embeddings_)
    assert not np.array_equal(both.class_embeddings_, alone.class_embeddings_)
    # the scikit-learn path: the examples held out of the bank, with its training examples too
    X, y = np.concatenate([Xf, Xe]), np.concatenate([yf, ye])
    cm = ClassMap(d=4, n_triples=2000, embedding_examples="embedding+training").fit(X, y)
    assert cm.predict(X[:5]).shape == (5,)


def test_the_train_path_chooses_on_validation_and_a_poisoned_test_part_moves_nothing(digits):
    from classmap_gui.core.data import ImageSet
    from classmap_gui.core.train.training import TrainConfig, train

    cfg = TrainConfig(features="pixels", bank="ova-ridge", classmap={**CM, "p": [2, 3, 5, 8]}, seed=0)
    clean = train(digits, cfg)
    test = clean.split["test"]
    labels = digits.labels.copy()
    labels[test] = np.random.default_rng(3).permutation(labels[test]) + 1
    labels[test] %= digits.n_classes
    images = digits.images.copy()
    images[test] = np.random.default_rng(4).integers(0, 256, images[test].shape).astype(images.dtype)
    # the same parts (a stratified split of the poisoned labels would be another split)
    dirty = train(ImageSet(images, labels, list(digits.class_names), name=digits.name), cfg, parts=clean.split)
    assert np.array_equal(dirty.split["test"], test)
    assert dirty.selection == clean.selection                                # not one score moved
    assert dirty.report.accuracy < 0.5 * clean.report.accuracy               # the poison reached the test
    val = clean.split["validation"]
    assert len(val) and not np.intersect1d(val, test).size and np.isin(val, clean.split["train"]).all()
    assert clean.selection["bank.alpha"]["split_digest"] == part("validation", val)["digest"]


def test_train_refuses_parts_whose_test_rows_are_chosen_on(digits, monkeypatch):
    from classmap_gui.core.train.training import TrainConfig, train

    n = len(digits)
    idx = np.arange(n)
    with pytest.raises(ConfigError, match="shares .* with the test part"):
        train(digits, TrainConfig(features="pixels", bank="ova-ridge", classmap=CM),
              parts={"train": idx[: n // 2], "validation": idx[: n // 8], "embedding": idx[n // 2:],
                     "test": idx[n // 8: n // 4]})


def test_v2_shares_v3s_fit_and_predicts_as_a_fresh_v2_fit(parts):
    (Xf, yf), _, (Xe, ye), (Xt, yt) = parts
    bank = make_bank("ova-ridge", alpha=1.0).fit(Xf, yf)
    params = {"d": 6, "n_triples": 3000, "random_state": 0}
    models = ClassMapSearch()._fit_refines(bank, params, ["v2", "v3"], 8, Xe, ye, Xf, yf, None)
    assert models["v3"].threshold_ is not None and models["v2"].threshold_ is None
    fresh = ClassMap(**params, p=8, refine="v2").fit_embedding(bank, Xe, ye)
    assert np.array_equal(models["v2"].reference_, fresh.reference_)
    np.testing.assert_array_equal(models["v2"].predict_result(Xt, bank=bank).top_classes,
                                  fresh.predict_result(Xt, bank=bank).top_classes)
    assert models["v3"].refine == "v3"                                  # the copy did not change the original


def brute_accuracy(alpha, Xf, yf, Xv, yv):
    return float(np.mean(make_bank("ova-ridge", alpha=alpha).fit(Xf, yf).predict(Xv) == yv))


def test_a_penalty_past_the_grid_is_found_and_an_interior_one_widens_nothing():
    """D = 80 features from 5 images a class: the best ridge penalty is a few hundred (validation accuracy 0.36
    at alpha 0.001, 0.85 at 100, 0.88 at 300, 0.82 at 3000)."""
    (Xf, yf), (Xv, yv), _, _ = problem(C=10, D=80, n_per=(5, 40, 1, 1), seed=1)
    s = ClassMapSearch("ova-ridge", {"alpha": [30.0, 100.0]}).fit(Xf, yf, Xv, yv)
    rec = s.selection_["bank.alpha"]
    assert s.bank_.alpha == rec["chosen"] > 100.0 and rec["widened"] == {"alpha": len(rec["grid"]["alpha"]) - 2}
    assert not rec["at_edge"] and rec["edge"] == {} and rec["grid"]["alpha"][-1] > rec["chosen"]
    assert brute_accuracy(rec["chosen"], Xf, yf, Xv, yv) > max(brute_accuracy(a, Xf, yf, Xv, yv) for a in (30.0, 100.0))
    interior = ClassMapSearch("ova-ridge", {"alpha": [10.0, 300.0, 10000.0]}).fit(Xf, yf, Xv, yv)
    rec = interior.selection_["bank.alpha"]
    assert rec["chosen"] == 300.0 and rec["grid"] == {"alpha": [10.0, 300.0, 10000.0]} and not rec["at_edge"]
    # far too small a grid: widened by its own ratio (x10) as often as allowed, and the record says it is still short
    short = ClassMapSearch("ova-ridge", {"alpha": [0.1, 1.0]}).fit(Xf, yf, Xv, yv)
    rec = short.selection_["bank.alpha"]
    assert rec["grid"]["alpha"] == [0.1, 1.0, 10.0, 100.0, 1000.0] and rec["chosen"] == 1000.0
    assert rec["at_edge"] and rec["edge"] == {"alpha": "high"} and "MAX_WIDENINGS" in rec["stopped_by"]["alpha"]
    # a plateau (0.001 and 0.01 score the same): the tie rule took the stronger; no walk along it
    flat = ClassMapSearch("ova-ridge", {"alpha": [1e-3, 1e-2]}).fit(Xf, yf, Xv, yv).selection_["bank.alpha"]
    assert flat["grid"] == {"alpha": [1e-3, 1e-2]} and flat["chosen"] == 1e-2 and flat["plateau"]
    assert flat["at_edge"] and "ties its neighbour" in flat["stopped_by"]["alpha"]


CM_P = {"d": 4, "n_triples": 2000, "refine": "v2"}


@pytest.fixture(scope="module")
def p_parts():
    return problem(C=30, n_per=(8, 10, 3, 1), seed=2)


def test_a_p_past_the_grid_is_found_on_validation_without_another_fit(p_parts, monkeypatch):
    """ClassMap (d = 4) needs p of about 20 of 30 classes to come within the margin of brute force on validation:
    a grid of 5 and 10 is widened by its own step (x2) until the choice is interior, from the fits at p = 10."""
    (Xf, yf), (Xv, yv), (Xe, ye), _ = p_parts
    fits = []
    real = ClassMapSearch._fit_refines
    monkeypatch.setattr(ClassMapSearch, "_fit_refines", lambda self, *a, **k: fits.append(a[3]) or real(self, *a, **k))
    s = ClassMapSearch("ova-ridge", {"alpha": 10.0}, {**CM_P, "p": [5, 10]}, curve_seeds=1).fit(Xf, yf, Xv, yv, Xe, ye)
    rec = s.selection_["classmap_point"]
    assert rec["chosen"]["p"] > 10 and rec["grid"]["p"][:2] == [5, 10] and rec["widened"]["p"] >= 1
    assert rec["within_tolerance"] and not rec["at_edge"] and rec["grid"]["p"][-1] > rec["chosen"]["p"]
    assert {q["p"] for q in s.validation_points_} == set(rec["grid"]["p"]) == set(s.candidates_["p"])
    assert fits == [10, 10]                       # one validation fit and the refit, both at the given grid's largest p
    assert s.classmap_.p == rec["chosen"]["p"] and len(s.predict(Xv)) == len(yv)
    interior = ClassMapSearch("ova-ridge", {"alpha": 10.0}, {**CM_P, "p": [5, rec["chosen"]["p"], 29]},
                              curve_seeds=1).fit(Xf, yf, Xv, yv, Xe, ye)
    rec_i = interior.selection_["classmap_point"]
    assert rec_i["chosen"]["p"] == rec["chosen"]["p"] and rec_i["widened"] == {"p": 0} and not rec_i["at_edge"]
    assert rec_i["grid"] == {"p": [5, rec["chosen"]["p"], 29]}


def test_p_stops_at_the_number_of_classes_and_the_record_names_that_edge():
    """Six classes and a 2-reference embedding: only p = 6 (every class, brute force's answer) is within the margin."""
    (Xf, yf), (Xv, yv), (Xe, ye), _ = problem(C=6, n_per=(8, 30, 3, 1), seed=2)
    s = ClassMapSearch("ova-ridge", {"alpha": 10.0}, {**CM_P, "d": 2, "p": [2, 4]}, curve_seeds=1).fit(
        Xf, yf, Xv, yv, Xe, ye)
    rec = s.selection_["classmap_point"]
    assert rec["grid"] == {"p": [2, 4, 6]} and rec["chosen"]["p"] == 6 == s.classmap_.p
    assert rec["at_edge"] and rec["edge"] == {"p": "high"} and rec["stopped_by"] == {"p": "the bound p = 6"}
