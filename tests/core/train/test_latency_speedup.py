"""The measured speed-up is against the fastest honest brute force: one GEMM over the stacked weights,
not ``decision_function`` (whose input validation per call inflated ClassMap's gain 11-21x on 10 classes)."""
import numpy as np
import pytest

from classmap_gui.core.classify import AllPairsRidge, OneVsAllRBF, OneVsAllRidge
from classmap_gui.core.classify.classmap.bank_view import BruteForce
from classmap_gui.core.data import load_digits
from classmap_gui.core.train.evaluation import measure_latency_speedup
from classmap_gui.core.registry import make_bank
from classmap_gui.core.train.training import TrainConfig, train


@pytest.fixture(scope="module")
def digits_xy():
    ims = load_digits()
    X = ims.images.reshape(len(ims), -1).astype(np.float32) / 16
    return X, ims.labels


@pytest.mark.parametrize("make", [lambda: OneVsAllRidge(), lambda: AllPairsRidge(n_jobs=1),
                                  lambda: OneVsAllRBF(n_jobs=1), lambda: make_bank("compressive", m=64)],
                         ids=["ova-ridge", "all-pairs", "rbf", "compressive"])
def test_brute_force_answers_as_decision_function_does(digits_xy, make):
    X, y = digits_xy
    bank = make().fit(X[:600], y[:600])
    Q = np.ascontiguousarray(X[600:900])
    ref = bank.decision_function(Q)
    brute = BruteForce(bank)
    np.testing.assert_allclose(brute.scores(Q), ref, rtol=1e-4, atol=1e-4)
    assert np.array_equal(brute(Q), ref.argmax(1))
    assert np.array_equal(brute(Q[:1]), ref[:1].argmax(1))        # one query after a batch: its own buffer


def test_speedup_times_brute_force_without_decision_function(monkeypatch):
    ims = load_digits()
    res = train(ims, TrainConfig(features="pixels", bank="ova-ridge", classmap={"d": 4, "p": 3, "n_triples": 2000},
                                 seed=3), )
    rec = res.recogniser
    X = rec.transform(ims.subset(res.split["test"]).images)
    calls = []
    bank = rec.classifier
    real = bank.decision_function
    monkeypatch.setattr(bank, "decision_function", lambda Z: calls.append(len(Z)) or real(Z), raising=False)
    speed = measure_latency_speedup(rec, X, n_single=30, batch=100)
    assert set(speed) == {"single", "batch"} and all(np.isfinite(v) and v > 0 for v in speed.values())
    assert calls == []   # the validated path (548 µs a query, ~90% validation) is not the baseline


def test_a_slower_classmap_is_called_slower():
    from types import SimpleNamespace

    from classmap_gui.core.train.evaluation import cost_line, speed_text

    rep = SimpleNamespace(evaluations_ratio=1.3, latency_speedup={"single": 0.25, "batch": 0.5})
    assert cost_line(rep) == "1.3× fewer evaluations · 4.0× slower per image"
    assert speed_text(1.8) == "1.8× faster"
