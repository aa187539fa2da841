"""bench classmap: the fast CM-RRC scoring equals predict(), and the operation-count limit formula."""
import numpy as np

from classmap_gui.core.bench.classmap import _Bank, filter_sweep, op_limit
from classmap_gui.core.classify.classmap import ClassMap


def structured_problem(C, D, n_per, seed=0):
    """Gaussian classes and a ridge one-vs-all bank (as in tests/core/classify/test_classmap.py)."""
    rng = np.random.default_rng(seed)
    mu = (rng.normal(size=(C, 4)) @ rng.normal(size=(4, D)) / 2 + 0.5 * rng.normal(size=(C, D))).astype(np.float32)

    def sample():
        y = np.repeat(np.arange(C), n_per)
        return (mu[y] + 1.5 * rng.normal(size=(len(y), D))).astype(np.float32), y

    (Xtr, ytr), (Xe, ye), (Xt, yt) = sample(), sample(), sample()
    Xa = np.hstack([Xtr, np.ones((len(Xtr), 1), np.float32)])
    T = -np.ones((len(Xtr), C), np.float32)
    T[np.arange(len(ytr)), ytr] = 1
    Wb = np.linalg.solve(Xa.T @ Xa + np.eye(D + 1), Xa.T @ T).T.astype(np.float32)
    return _Bank(Wb[:, :D], Wb[:, D]), (Xe, ye), (Xt, yt)


def test_filter_sweep_equals_predict_at_every_p():
    bank, (Xe, ye), (Xt, yt) = structured_problem(C=60, D=24, n_per=6)
    S = bank.decision_function(Xt)
    cm = ClassMap(d=8, p=20, embedding="random", random_state=3).fit(bank, Xe, ye)
    fast = filter_sweep(cm, bank, Xt, yt, S, [3, 7, 20])
    for p, (acc, ev) in fast.items():
        cm.p = p
        res = cm.predict(bank, Xt)
        assert abs(acc - np.mean(res.labels == yt)) <= 2 / len(yt)     # float32 near-ties at most
        assert ev == np.mean(res.evaluations)


def test_op_limit_matches_the_paper_setting():
    # 2430 classes, HOG 1764, d=45, p=40: about 16x fewer operations
    assert 16 < op_limit(2430, 1764, 45, 40) < 17
    assert op_limit(10, 10, 45, 40) < 1
