"""ClassMap as a scikit-learn meta-estimator: the estimator checks, a Pipeline in GridSearchCV on digits,
a prefit bank the scikit-learn way, and the labels of ``y`` (strings too) coming back from predict."""
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

from classmap_gui import ClassMap
from classmap_gui.core.classify import OneVsAllRidge

def _estimators():
    """ClassMap over scikit-learn's linear classifiers (binary ones have a single ``coef_`` row), a kernel
    SVM (no ``coef_``, no subset scoring: ``decision_function`` columns) and each of the product's banks."""
    from sklearn.linear_model import LogisticRegression, RidgeClassifier
    from sklearn.svm import SVC, LinearSVC

    from classmap_gui.core.classify import AllPairsRidge, AllPairsSVM, OneVsAllRBF, OneVsAllSVM

    yield "RidgeClassifier", RidgeClassifier(), {}
    yield "LogisticRegression", LogisticRegression(), {}
    yield "LinearSVC", LinearSVC(), {}
    yield "SVC", SVC(), {}
    for bank in (OneVsAllRidge(n_jobs=1), OneVsAllSVM(n_jobs=1), OneVsAllRBF(n_jobs=1)):
        yield type(bank).__name__, bank, {}
    for bank in (AllPairsSVM(n_jobs=1), AllPairsRidge(n_jobs=1)):
        yield type(bank).__name__, bank, {"refine": "all-pairs-vote"}


# No expected failures: random labels (several checks) leave boosting nothing better than chance, and fit
# then falls back to random references with a warning instead of refusing.
@pytest.mark.parametrize("name, estimator, extra", list(_estimators()), ids=[n for n, _, _ in _estimators()])
def test_classmap_over_any_classifier_passes_scikit_learns_estimator_checks(name, estimator, extra):
    check_estimator(ClassMap(estimator, d=3, p=2, n_triples=2000, **extra))


def test_a_binary_linear_classifier_is_read_as_two_one_vs_all_rows():
    """``coef_ (1, D)`` scores ``classes_[1]``; ClassMap reads it as rows ``-w, w`` and predicts as it does."""
    from sklearn.linear_model import LogisticRegression

    from classmap_gui.core.classify.classmap.bank_view import classifier_outputs, linear_weights

    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 5)).astype(np.float32)
    y = np.where(X[:, 0] + 0.3 * X[:, 1] > 0, "yes", "no")
    clf = LogisticRegression().fit(X, y)
    W, b = linear_weights(clf)
    assert W.shape == (2, 5) and np.allclose(W[1], clf.coef_[0]) and np.allclose(W[0], -clf.coef_[0])
    assert np.array_equal(np.asarray(clf.classes_)[classifier_outputs(clf, X).argmax(1)], clf.predict(X))
    cm = ClassMap(FrozenEstimator(clf), d=2, p=2, n_triples=500).fit(X, y)
    assert np.array_equal(cm.predict(X), clf.predict(X))


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return train_test_split(X.astype(np.float32), y, test_size=0.3, random_state=0, stratify=y)


def test_classmap_in_a_pipeline_tuned_by_grid_search_on_digits(digits):
    Xtr, Xte, ytr, yte = digits
    pipe = make_pipeline(StandardScaler(), ClassMap(OneVsAllRidge(n_jobs=1), d=6, p=3,
                                                    n_triples=3000))
    search = GridSearchCV(pipe, {"classmap__p": [1, 4], "classmap__estimator__alpha": [1.0, 30.0]}, cv=3)
    search.fit(Xtr, ytr)
    assert set(search.cv_results_["params"][0]) == {"classmap__p", "classmap__estimator__alpha"}
    assert search.best_params_["classmap__p"] == 4            # more candidates: the refine can correct the filter
    cm = search.best_estimator_[-1]
    assert cm.estimator_ is not cm.estimator                  # fit cloned the bank; the parameter is untouched
    assert not hasattr(cm.estimator, "coef_")
    assert search.score(Xte, yte) > 0.9
    top = search.best_estimator_.predict(Xte[:5])
    assert top.dtype == yte.dtype and set(top) <= set(range(10))


def test_a_prefit_bank_is_used_as_it_is_and_only_the_embedding_is_fitted(digits):
    Xtr, Xte, ytr, yte = digits
    bank = OneVsAllRidge(alpha=10.0, n_jobs=1).fit(Xtr[:800], ytr[:800])
    coef = bank.coef_.copy()
    cm = ClassMap(FrozenEstimator(bank), d=8, p=4, n_triples=3000).fit(Xtr[800:], ytr[800:])
    assert cm.estimator_ is bank and np.array_equal(bank.coef_, coef)
    # the rich result: top-p lists, what each query cost, stage timings
    res = cm.predict_result(Xte)
    assert np.array_equal(res.labels, cm.predict(Xte))
    assert res.top_classes.shape == (len(Xte), 4) and res.evaluations.max() <= 8 + 4
    assert np.mean(cm.predict(Xte) == yte) > 0.85
    assert clone(cm).estimator.estimator is bank             # clone keeps the frozen bank


def test_labels_of_y_come_back_and_scores_agree_with_predict(digits):
    Xtr, Xte, ytr, _ = digits
    names = np.array(["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"])
    cm = ClassMap(d=6, p=3, n_triples=3000).fit(Xtr, names[ytr])
    assert list(cm.classes_) == sorted(names)
    pred = cm.predict(Xte)
    assert set(pred) <= set(names)
    S = cm.decision_function(Xte)
    assert S.shape == (len(Xte), 10)
    assert np.array_equal(cm.classes_[S.argmax(1)], pred)
    assert (np.isfinite(S).sum(1) == 3).all()                # only the p candidates were scored
    top = cm.predict_topk(Xte, 2)
    assert top.shape == (len(Xte), 2) and np.array_equal(top[:, 0], pred)


def test_the_readmes_library_example_runs(capsys):
    from pathlib import Path

    readme = (Path(__file__).parents[3] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Use it as a library", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    accuracy = float(out.split("test accuracy", 1)[1].split()[0])
    assert accuracy > 0.9
    evals = float(out.split("classifier evaluations per image", 1)[1].split()[0])
    assert evals <= 6 + 4                                    # d + p, not one per class


def test_reference_penalty_trains_a_smoother_reference_bank(digits):
    Xtr, Xte, ytr, yte = digits
    cm = ClassMap(OneVsAllRidge(alpha=1.0, n_jobs=1), d=6, p=4, n_triples=3000,
                  reference_penalty=30.0).fit(Xtr, ytr)
    assert cm.reference_coef_.shape == (len(cm.reference_), Xtr.shape[1])     # the references are not the bank's
    assert cm.estimator.alpha == 1.0 and cm.estimator_.alpha == 1.0           # the refine keeps the sharper bank
    assert np.mean(cm.predict(Xte) == yte) > 0.85


def test_a_boosted_embedding_with_a_reference_bank_holds_one_matrix_of_classifier_outputs():
    """The hand model's build fits boosted embeddings over 2431 classes on ~75 000 examples: the outputs of every
    classifier (n x C) are held once beside the class medians' column blocks (two copies) — no copy for the confusers,
    their index matrix, the triples, the two folds' medians or the threshold's refining outputs (held 5.0 times the
    outputs before; the build's peak memory was 6.2 GB with them)."""
    import tracemalloc

    rng = np.random.default_rng(0)
    C, n, D = 300, 12000, 16
    centres = rng.normal(size=(C, D)).astype(np.float32)
    y = np.repeat(np.arange(C), n // C)
    X = centres[y] + 0.5 * rng.normal(size=(n, D)).astype(np.float32)
    bank = OneVsAllRidge(alpha=1.0).fit(X, y)
    ref = OneVsAllRidge(alpha=30.0).fit(X, y)
    tracemalloc.start()
    try:
        cm = ClassMap(d=20, p=10, refine="v3", embedding_examples="embedding+training", n_triples=2000,
                      random_state=0).fit_embedding(
            bank, X[::2], y[::2], X_train=X[1::2], y_train=y[1::2], reference_bank=ref)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    outputs, triples = n * C * 4, 2000 * C * 4           # AdaBoost's weak outputs: one (C, n_triples) matrix
    assert peak < 3.5 * outputs + triples, f"the embedding held {(peak - triples) / outputs:.2f} times its outputs"
    assert (cm.predict_result(X[::7], bank=bank).labels == y[::7]).mean() > 0.9


def test_the_classifier_outputs_are_not_held_while_adaboost_runs_or_the_threshold_is_learnt():
    """The hand model's classifier outputs (75 000 x 2431: 0.73 GB) and AdaBoost's weak outputs (2431 x 60 000:
    0.58 GB) are never both held: the outputs are read again block by block, recomputed bit for bit, to build
    the weak outputs and to learn the threshold (the build's peak memory had both, and |H| beside H)."""
    import tracemalloc

    rng = np.random.default_rng(0)
    C, n, D, T = 300, 30000, 16, 20000
    centres = rng.normal(size=(C, D)).astype(np.float32)
    y = np.repeat(np.arange(C), n // C)
    X = centres[y] + 0.5 * rng.normal(size=(n, D)).astype(np.float32)
    bank = OneVsAllRidge(alpha=1.0).fit(X, y)
    held: dict[str, int] = {}

    def progress(fraction, stage=""):
        if stage in ("embedding: boosting", "embedding: threshold"):
            held[stage] = max(held.get(stage, 0), tracemalloc.get_traced_memory()[0])
    tracemalloc.start()
    try:
        cm = ClassMap(d=20, p=10, refine="v3", n_triples=T, random_state=0).fit_embedding(bank, X, y, progress=progress)
    finally:
        tracemalloc.stop()
    outputs, weak = n * C * 4, T * C * 4
    assert set(held) == {"embedding: boosting", "embedding: threshold"}
    assert held["embedding: boosting"] < weak + outputs / 2, "the outputs were held beside AdaBoost's weak outputs"
    assert held["embedding: threshold"] < outputs / 2, "the outputs were held while the threshold was learnt"
    assert (cm.predict_result(X[::7], bank=bank).labels == y[::7]).mean() > 0.8
