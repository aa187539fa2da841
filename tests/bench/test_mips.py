"""The faiss MIPS peer: exhaustive settings are exact, the sweep chooses on validation and reports test."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("faiss")

from classmap_gui.bench.mips import MipsIndex, augmented_rows, mips_sweep
from classmap_gui.core.errors import ConfigError


class Bank:
    def __init__(self, W, b):
        self.coef_, self.intercept_ = W.astype(np.float32), b.astype(np.float32)
        self.classes_ = np.arange(len(W)) + 100          # labels differ from column indices


def tiny(C=40, D=12, n=300, seed=0):
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=(C, D)).astype(np.float32)
    W = mu + 0.1 * rng.normal(size=(C, D)).astype(np.float32)
    b = (-0.5 * np.sum(W ** 2, 1)).astype(np.float32)     # biases matter: w.x alone would rank differently
    y = rng.integers(0, C, size=n)
    X = (mu[y] + 0.6 * rng.normal(size=(n, D))).astype(np.float32)
    return Bank(W, b), X, y + 100


def test_augmented_rows_give_the_class_scores():
    bank, X, _ = tiny()
    A = augmented_rows(bank.coef_, bank.intercept_)
    Xa = np.hstack([X, np.ones((len(X), 1), np.float32)])
    np.testing.assert_allclose(Xa @ A.T, X @ bank.coef_.T + bank.intercept_, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("kind,value", [("ivf", 4), ("hnsw", 200)])
def test_exhaustive_search_is_brute_force(kind, value):
    bank, X, _ = tiny()
    index = MipsIndex(kind, bank.coef_, bank.intercept_, nlist=4, m=8)
    index.set_search(value)                               # all 4 lists / a beam wider than the 40 classes
    cls, score, ev = index.search(X, 5)
    S = X @ bank.coef_.T + bank.intercept_
    np.testing.assert_array_equal(cls[:, 0], S.argmax(1))
    np.testing.assert_allclose(score[:, 0], S.max(1), rtol=1e-5, atol=1e-4)
    assert np.all(np.diff(score, axis=1) <= 0)
    if kind == "ivf":                                     # quantizer (4) + every class (40) + rescoring (5)
        np.testing.assert_allclose(ev, 4 + 40 + 5)


def test_one_probe_scores_fewer_classes():
    bank, X, _ = tiny(C=200, D=12, seed=1)
    index = MipsIndex("ivf", bank.coef_, bank.intercept_, nlist=16)
    index.set_search(1)
    _, _, ev = index.search(X, 5)
    assert ev.mean() < 16 + 200 / 2 + 5


def test_sweep_chooses_on_validation_and_reports_every_p():
    bank, X, y = tiny(C=60, n=400, seed=2)
    res = mips_sweep(bank, X[:200], y[:200], X[200:], y[200:], [3, 8], nlists=(4, 8), hnsw_m=8,
                     batch=50, n_single=10)
    bf = res["brute_force"]
    assert bf["evaluations"] == 60 and 0.5 < bf["accuracy"] <= 1
    assert res["selection"]["split"] == "validation"
    for kind in ("ivf", "hnsw"):
        assert [r["p"] for r in res[kind]] == [3, 8]
        for r in res[kind]:
            # the chosen setting is the cheapest that reached the validation target among those tried
            ok = [t for t in r["tried"] if t["validation_accuracy"] >= res["selection"]["target_validation_accuracy"]]
            assert ok and r["validation_accuracy"] >= res["selection"]["target_validation_accuracy"]
            assert r["evaluations"] <= 60 + r["p"] + (r["nlist"] or 0)
            assert r["latency_single_ms"] > 0 and r["latency_batch_ms"] > 0
            assert r["evaluations_index"] > 0               # faiss reported its distance computations
            assert abs(r["accuracy"] - bf["accuracy"]) < 0.1


def test_refuses_a_bank_without_linear_weights():
    class Rbf:
        classes_ = np.arange(3)
    with pytest.raises(ConfigError):
        mips_sweep(Rbf(), np.zeros((2, 2)), [0, 1], np.zeros((2, 2)), [0, 1], [1])


@pytest.mark.parametrize("kind,settings", [("ivf", (1, 3, 16)), ("hnsw", (10, 20, 40))])
def test_one_search_per_setting_gives_every_p_what_its_own_search_gives(kind, settings):
    from classmap_gui.bench.mips import _accuracy, _Searches

    bank, X, y = tiny(C=200, D=12, seed=2)
    index = MipsIndex(kind, bank.coef_, bank.intercept_, nlist=16, m=8)
    shared = _Searches(X, k_max=10)
    for v in settings:
        index.set_search(v)
        for p in (1, 5, 10):
            cls, _, ev = index.search(X, p)                       # a search of its own for this p
            acc, ev_shared = _accuracy(index, shared, y, p, bank.classes_)
            assert acc == np.mean(bank.classes_[cls[:, 0]] == y)
            assert ev_shared == pytest.approx(ev.mean())
    assert len(shared._got) == len(settings)                      # searched once per setting
