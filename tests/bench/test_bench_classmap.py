"""bench classmap: its helpers on tiny data, the validation rule, and one small end-to-end run."""
import json

import numpy as np
import pytest

from classmap_gui.bench import classmap as bench
from classmap_gui.bench.classmap_data import split_counts
from classmap_gui.bench.latency import (brute_vs_classmap, latency_sweep, linear_bank, speedups,
                                             op_limit)
from classmap_gui.core.classify import ClassMap
from classmap_gui.core.registry import make_bank


def structured_problem(C, D, n_per, seed=0):
    """Gaussian classes and a ridge one-vs-all bank from make_bank."""
    rng = np.random.default_rng(seed)
    mu = (rng.normal(size=(C, 4)) @ rng.normal(size=(4, D)) / 2 + 0.5 * rng.normal(size=(C, D))).astype(np.float32)

    def sample():
        y = np.repeat(np.arange(C), n_per)
        return (mu[y] + 1.5 * rng.normal(size=(len(y), D))).astype(np.float32), y

    (Xtr, ytr), (Xe, ye), (Xt, yt) = sample(), sample(), sample()
    return make_bank("ova-ridge", alpha=1.0).fit(Xtr, ytr), (Xtr, ytr), (Xe, ye), (Xt, yt)


def test_op_limit_matches_the_paper_setting():
    # 2430 classes, HOG 1764, d=45, p=40: about 16x fewer operations
    assert 16 < op_limit(2430, 1764, 45, 40) < 17
    assert op_limit(10, 10, 45, 40) < 1


def test_latency_helpers_time_the_objects_a_recogniser_calls_in_alternating_rounds():
    bank, _, (Xe, ye), (Xt, yt) = structured_problem(C=40, D=16, n_per=4)
    cm = ClassMap(d=6, p=5, embedding="random", random_state=0).fit_embedding(bank, Xe, ye)
    before = {k: np.copy(v) if isinstance(v, np.ndarray) else v for k, v in vars(cm).items() if k.endswith("_")}
    t = brute_vs_classmap(bank, cm, Xt, n_single=10, batch=50, rounds=3)
    for mode in ("single", "batch"):
        assert set(t[mode]["ms"]) == {"brute", "kernel", "classmap"} and t[mode]["rounds"] == 3
        assert all(len(v) == 3 and min(v) > 0 for v in t[mode]["ms"].values())
    sp = speedups(t)["single"]
    per_round = [min(b, k) / c for b, k, c in zip(*(t["single"]["ms"][n] for n in ("brute", "kernel", "classmap")))]
    assert sp["median"] == pytest.approx(np.median(per_round)) and sp["min"] == pytest.approx(min(per_round))
    assert len(sp["load_before"]) == 3 and len(sp["load_after"]) == 3
    for k, v in before.items():                                     # timing does not change the model
        assert np.array_equal(getattr(cm, k), v) if isinstance(v, np.ndarray) else getattr(cm, k) == v


def test_linear_bank_scores_with_the_given_weights():
    rng = np.random.default_rng(0)
    W, b = rng.normal(size=(30, 8)).astype(np.float32), rng.normal(size=30).astype(np.float32)
    bank = linear_bank(W, b)
    X = rng.normal(size=(5, 8)).astype(np.float32)
    assert np.allclose(bank.decision_function(X), X @ W.T + b, atol=1e-5)
    assert np.array_equal(bank.classes_, np.arange(30))


def test_latency_sweep_rows():
    rows = latency_sweep(d=5, p=4, n_single=10, seed=0, grid=((50, 20), (80, 10)))
    assert [(r["C"], r["D"]) for r in rows] == [(50, 20), (80, 10)]
    for r in rows:
        sp = r["latency_speedup"]
        assert sp["rounds"] >= 3 and sp["min"] <= sp["median"] <= sp["max"]
        assert r["op_limit"] == pytest.approx(op_limit(r["C"], r["D"], 5, 4))


def test_reference_bank_references_cost_d_plus_p_and_refine_with_the_bank():
    bank, (Xtr, ytr), (Xe, ye), (Xt, yt) = structured_problem(C=30, D=12, n_per=6)
    smooth = make_bank("ova-ridge", alpha=100.0).fit(Xtr, ytr)
    cm = ClassMap(d=5, p=30, random_state=0).fit_embedding(bank, Xe, ye, reference_bank=smooth)
    res = cm.predict_result(Xt, bank=bank)
    assert np.all(res.evaluations == 5 + 30)                        # no reference is one of the bank's rows
    assert np.array_equal(res.labels, bank.predict(Xt))             # p = C: the refine is brute force
    one = np.array([cm.predict_result(x[None], bank=bank).labels[0] for x in Xt[:20]])
    assert np.array_equal(one, res.labels[:20])                     # the single-query path agrees


def test_split_counts_carve_validation_from_the_training_part():
    assert split_counts("glyph-pose", 60) == (30, 10, 10, 10)       # BENCH_SPLIT 40/10/10: test part unchanged
    assert split_counts("glyph-pose-small", 20) == (11, 3, 3, 3)    # small sets: the same shares


SMALL = dict(data="glyph-pose-small", d=16, p_sweep="auto", penalties="auto", reference_penalties="auto",
                      embedding_examples="auto", refine="auto", n_triples=3000, n_random=1, latency_queries=20, sweep=False, mips=True,
             cache_dir=None)


@pytest.fixture(scope="module")
def small_run():
    return bench.run(**SMALL)


def test_small_run_chooses_on_validation_and_tests_once(small_run):
    out = small_run
    json.dumps(out)
    # the test part is generated afresh by default, and the JSON says so
    assert out["options"]["test_seed"] == 20261201
    assert out["test_part"] == "generated afresh with seed 20261201"
    sel, parts = out["selection"], out["parts"]
    assert set(sel) == {"bank.alpha", "references", "classmap_point"}
    # every choice names the rows it was made on: the validation part's, never the test part's
    assert all(s["split"] == "validation" and s["split_digest"] == parts["validation"]["digest"] for s in sel.values())
    assert parts["validation"]["rows"] == out["validation_queries"] and parts["test"]["rows"] == out["test_queries"]
    assert len({parts[k]["digest"] for k in ("fit", "validation", "embedding", "test")}) == 4
    # 5 penalties x 2 example sets, and more where the search widened past an edge (the record says which)
    assert len(sel["bank.alpha"]["candidates"]) >= 4 and len(sel["references"]["candidates"]) >= 10
    assert "at_edge" in sel["references"] and "grid" in sel["references"]
    assert out["brute_force"]["bank_params"]["alpha"] == sel["bank.alpha"]["chosen"]
    chosen = sel["classmap_point"]["chosen"]
    # the references on the whole validation curve, then the learning-curve rule for them
    assert {k: chosen[k] for k in ("reference_penalty", "embedding_examples")} == sel["references"]["chosen"]
    assert all("difference_se" in q for q in sel["references"]["points"])
    ex = sel["classmap_point"]["extrapolation"]
    assert (ex["n_half"], ex["n"], ex["n_final"]) == (5, 11, 14) and len(ex["seeds_at_n"]) == 3
    rows = sel["classmap_point"]["scores"]
    assert {(q["refine"], q["p"]) for q in rows} == {(r, p) for r in ("v2", "v3") for p in (5, 10, 15, 20, 30, 40, 60, 80)}
    assert all(q["bound"] == pytest.approx(q["predicted_gap"] + q["prediction_se"]) for q in rows)
    picked = out["selected"]
    assert (picked["refine"], picked["p"], picked["reference_penalty"]) == (chosen["refine"], chosen["p"],
                                                                           chosen["reference_penalty"])
    curve = [q for q in out["classmap"] if q["embedding"] == "boosted"]
    assert any(q["refine"] == picked["refine"] and q["p"] == picked["p"] and q["accuracy"] == picked["accuracy"]
               for q in curve)
    assert picked["evaluations"] <= picked["d"] + picked["p"]
    s = out["summary"]
    assert s["evaluations_ratio"] == pytest.approx(out["classes"] / picked["evaluations"])
    # the headline form: evaluations beside operations (the filter included) and measured latency rounds
    C, D = out["classes"], out["features"]
    assert s["operations_ratio"] == pytest.approx(C * D / (picked["evaluations"] * D + C * picked["d"]))
    assert s["operations_ratio"] < s["evaluations_ratio"]
    assert set(s["latency_speedup"]) == {"single", "batch"} and s["latency_speedup"]["single"]["rounds"] >= 3
    assert out["test_seed"] == 20261201
    assert s["accuracy_gap_points"] == pytest.approx(100 * (picked["accuracy"] - out["brute_force"]["accuracy"]))
    assert out["parts_per_class"] == {"fit": 11, "validation": 3, "embedding": 3, "test": 3}
    assert out["test_queries"] == 3 * out["classes"]
    # the MIPS peer runs on the same bank and test queries, over the same p sweep
    mips = out["mips"]
    assert mips["brute_force"]["accuracy"] == pytest.approx(out["brute_force"]["accuracy"])
    assert mips["selection"]["split"] == "validation"
    for kind in ("ivf", "hnsw"):
        assert [r["p"] for r in mips[kind]] == [5, 10, 15, 20, 30, 40, 60, 80]
        assert all(r["evaluations"] >= r["p"] and 0 <= r["accuracy"] <= 1 for r in mips[kind])


def test_features_are_cached_in_the_folder_passed_in_keyed_on_version_and_settings(tmp_path, monkeypatch):
    from classmap_gui.bench import classmap_data, common

    first = classmap_data.prepare("glyph-pose-small", 0, tmp_path)
    files = list(tmp_path.glob("*.npz"))
    assert len(files) == 1
    monkeypatch.setattr("classmap_gui.core.data.load_dataset",
                        lambda *a, **k: (_ for _ in ()).throw(AssertionError("regenerated")))
    again = classmap_data.prepare("glyph-pose-small", 0, tmp_path)   # read back, not recomputed
    assert all(np.array_equal(first[k], again[k]) for k in first)
    # another package version or other settings: another key, so stale features are never read
    key = common.cache_key("classmap-data", {"seed": 0})
    assert common.cache_key("classmap-data", {"seed": 1}) != key
    monkeypatch.setattr(common, "package_version", lambda: "9.9.9")
    assert common.cache_key("classmap-data", {"seed": 0}) != key


def test_bench_parts_are_disjoint_and_keep_the_test_part_of_bench_split():
    from classmap_gui.bench.classmap_data import split_parts
    from classmap_gui.core.data import ImageSet
    from classmap_gui.core.data.glyph_pose import split_per_class

    n_cls, per = 4, 60
    ids = np.arange(n_cls * per)
    images = np.zeros((len(ids), 2, 2), np.uint8)
    images[:, 0, 0], images[:, 0, 1] = ids % 256, ids // 256             # every image tells its index
    ims = ImageSet(images, np.repeat(np.arange(n_cls), per)[np.random.default_rng(0).permutation(len(ids))],
                   [f"c{i}" for i in range(n_cls)], name="glyph-pose")
    parts = split_parts(ims, split_counts("glyph-pose", per))
    seen = [set((p.images[:, 0, 0].astype(int) + 256 * p.images[:, 0, 1].astype(int)).tolist()) for p in parts]
    assert sum(len(s) for s in seen) == len(ids) and len(set().union(*seen)) == len(ids)   # disjoint, complete
    _, _, test = split_per_class(ims)                                   # the paper-style 40 / 10 / 10 split
    assert np.array_equal(parts[3].images, test.images)                  # validation never touches the test part


def test_a_fresh_test_part_is_generated_with_its_own_seed_and_keyed_in_the_cache(tmp_path):
    from classmap_gui.bench import classmap_data
    from classmap_gui.core.errors import ConfigError

    old = classmap_data.prepare("glyph-pose-small", 0, tmp_path)
    fresh = classmap_data.prepare("glyph-pose-small", 0, tmp_path, test_seed=7)
    assert len(list(tmp_path.glob("*.npz"))) == 2                        # the test seed is part of the cache key
    for part in ("fit", "val", "embed"):                                  # every choice still made on the same data
        assert np.array_equal(old[f"X_{part}"], fresh[f"X_{part}"])
    assert np.array_equal(np.sort(old["y_test"]), np.sort(fresh["y_test"]))   # as many test images per class
    assert not np.allclose(old["X_test"], fresh["X_test"])               # but other images
    assert int(fresh["test_seed"]) == 7 and int(old["test_seed"]) == -1
    again = classmap_data.prepare("glyph-pose-small", 0, None, test_seed=7)
    assert np.array_equal(again["X_test"], fresh["X_test"])              # deterministic for the seed
    with pytest.raises(ConfigError, match="test_seed"):
        classmap_data.prepare("glyph-pose-small", 0, None, test_seed=0)  # would repeat the training images
    assert bench.OPTIONS["test_seed"][0] == classmap_data.DEFAULT_TEST_SEED


def _poisoned(monkeypatch, poison):
    prepare = bench.prepare

    def poisoned(*a, **k):
        D = dict(prepare(*a, **k))
        D["X_test"], D["y_test"] = poison.noise_like(D["X_test"]), poison.permuted(D["y_test"])
        return D

    monkeypatch.setattr(bench, "prepare", poisoned)


def test_a_poisoned_test_part_changes_no_choice(small_run, monkeypatch, poison):
    # >= 4 candidates per choice ("auto": 9 penalties, 5 x 2 references, 2 refines x 8 p): a choice read off the
    # test part would move
    _poisoned(monkeypatch, poison)
    dirty = bench.run(**SMALL)
    assert poison.without_timings(dirty["selection"]) == poison.without_timings(small_run["selection"])
    assert dirty["brute_force"]["accuracy"] < 0.5 * small_run["brute_force"]["accuracy"]  # the poison reached the test


def test_handing_the_search_the_test_part_is_refused_before_any_work(monkeypatch):
    from classmap_gui.core.errors import ConfigError
    from classmap_gui.core.train.search import ClassMapSearch

    prepare = bench.prepare

    def leaky(*a, **k):   # the mutation "choose on the test part": its rows handed to the search as validation
        D = dict(prepare(*a, **k))
        D["X_val"], D["y_val"] = D["X_test"], D["y_test"]
        return D

    monkeypatch.setattr(bench, "prepare", leaky)
    monkeypatch.setattr(ClassMapSearch, "_choose_penalty", lambda *a, **k: pytest.fail("the search ran"))
    with pytest.raises(ConfigError, match="validation part shares 750 item.*test part"):
        bench.run(**SMALL)


def test_the_train_panel_path_builds_the_model_the_bench_reports(small_run):
    """core.train.training.train (the Train panel, ``classmap train``) with "auto" settings on the bench's parts of
    glyph-pose-small: the same choices from the same validation scores, the same test figures."""
    from classmap_gui.bench.classmap_data import split_parts
    from classmap_gui.core.data import ImageSet, load_dataset
    from classmap_gui.core.train.training import TrainConfig, train

    out = small_run
    ims = load_dataset("glyph-pose-small", seed=0, n_jobs=-1)
    counts = split_counts("glyph-pose-small", int(ims.counts().min()))
    fit, val, emb, _ = split_parts(ims, counts)
    test = load_dataset("glyph-pose-small", images_per_class=counts[3], seed=out["test_seed"], n_jobs=-1)
    pieces = (fit, val, emb, test)
    whole = ImageSet(np.concatenate([q.images for q in pieces]), np.concatenate([q.labels for q in pieces]),
                     list(ims.class_names), name=ims.name)
    edges = np.cumsum([0] + [len(q) for q in pieces])
    rows = [np.arange(lo, hi) for lo, hi in zip(edges[:-1], edges[1:])]
    auto = {k: "auto" for k in ("p", "refine", "reference_penalty", "embedding_examples")}
    cfg = TrainConfig(features="hog", bank="ova-ridge", classmap={"d": 16, "n_triples": 3000, **auto}, seed=0)
    res = train(whole, cfg, parts={"train": np.concatenate(rows[:2]), "validation": rows[1], "embedding": rows[2],
                                   "test": rows[3]})
    assert set(res.selection) == set(out["selection"])
    for name, theirs in out["selection"].items():
        mine = res.selection[name]
        assert mine["chosen"] == theirs["chosen"] and mine["candidates"] == theirs["candidates"], name
        assert mine["scores"] == theirs["scores"], name                       # the same validation scores
        assert mine["split"] == "validation" and mine["split_rows"] == theirs["split_rows"], name
    rec, chosen = res.recogniser, out["selection"]["classmap_point"]["chosen"]
    assert (rec.classmap.p, rec.classmap.refine, rec.classmap.reference_penalty, rec.classmap.embedding_examples) == \
        (chosen["p"], chosen["refine"], chosen["reference_penalty"], chosen["embedding_examples"])
    assert rec.classifier.alpha == out["brute_force"]["bank_params"]["alpha"]
    picked = out["selected"]                                                  # the bench's test figures
    assert res.report.accuracy == pytest.approx(picked["accuracy"])
    assert float(np.mean(res.test_predictions.evaluations)) == pytest.approx(picked["evaluations"])
