"""`classmap bench scale` on small class counts: choices made on validation queries, the fastest exact
scan as the denominator, and figures that agree with each other."""
from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from classmap_gui.cli import main
from classmap_gui.bench import scale

HAVE_FAISS = importlib.util.find_spec("faiss") is not None


@pytest.fixture(scope="module")
def captured():
    """One small run, with the query sets handed to selection and to the timed baselines recorded."""
    seen = {}
    select, baselines = scale.select_ivf, scale._baselines

    def spy_select(E, alpha, Fv, *a, **kw):
        seen["validation"] = Fv.copy()
        return select(E, alpha, Fv, *a, **kw)

    def spy_baselines(E, alpha, F, *a, **kw):
        seen["measured"] = F.copy()
        return baselines(E, alpha, F, *a, **kw)

    mp = pytest.MonkeyPatch()
    mp.setattr(scale, "select_ivf", spy_select)
    mp.setattr(scale, "_baselines", spy_baselines)
    try:
        out = scale.run(classes="3000", queries=30, val_queries=150, p=10, rounds=2, sweep="1,40")
    finally:
        mp.undo()
    return out, seen


def test_nlist_and_nprobe_are_chosen_on_validation_queries_apart_from_the_measured_ones(captured):
    out, seen = captured
    r, sel = out["results"][0], out["selection"]
    assert sel["split"] == "validation" and len(sel["by_classes"]) == 1
    s = sel["by_classes"][0]
    assert s["classes"] == 3000 and s["queries"] == len(seen["validation"]) == 150
    assert len(seen["measured"]) == r["queries"] == 30
    # no measured query is among the validation queries: they come from their own seed, which must differ
    with pytest.raises(Exception, match="test part"):
        scale.run(classes="3000", queries=30, val_queries=150, p=10, rounds=2, seed=4, test_seed=4)
    assert not (seen["measured"][:, None, :] == seen["validation"][None, :, :]).all(axis=2).any()
    # candidates: nlist 3.2 sqrt(C) x 0.5, 1, 2, each with re-rank pools 1.25p, 1.5p, 2p;
    # the measured index is the chosen one
    assert [(c["nlist"], c["rerank"]) for c in s["candidates"]] == [(n, f) for n in (88, 175, 351)
                                                                     for f in (1.25, 1.5, 2.0)]
    pick = s["chosen"]
    assert (r["nlist"], r["rerank"], r["nprobe"]) == (pick["nlist"], pick["rerank"], pick["nprobe"])
    for c in s["candidates"]:
        curve = c["nprobe_curve"]
        assert c["reaches_target"] and c["recall_bound"] >= s["target_recall"] == 0.99
        # the pick is the first (smallest) nprobe of the rising grid that reaches the target (its mean less two
        # standard errors)
        assert c["nprobe"] == curve[-1]["nprobe"] and not any(x["reaches_target"] for x in curve[:-1])
        assert c["recall_bound"] < c["recall_mean"] or c["recall_mean"] == 1
        assert [x["nprobe"] for x in curve] == sorted(x["nprobe"] for x in curve)
    chosen = next(c for c in s["candidates"] if (c["nlist"], c["rerank"]) == (pick["nlist"], pick["rerank"]))
    fastest = min(c["index_ms"] for c in s["candidates"])
    assert chosen["index_ms"] <= (1 + scale.TIE) * fastest
    close = [c for c in s["candidates"] if c["index_ms"] <= (1 + scale.TIE) * fastest]
    assert chosen["build_s"] == min(c["build_s"] for c in close)


def test_the_speedup_is_against_the_fastest_exact_scan_given_the_same_tricks(captured):
    out, _ = captured
    r = out["results"][0]
    names = set(r["exact_ms"])
    assert {"filter_one", "numpy"} <= names and "exact_batch_filter" in r["exact_batch_ms_per_query"]
    assert out["faiss"] == HAVE_FAISS
    if HAVE_FAISS:
        assert "faiss_flat_l1_1thread" in names and "exact_batch_faiss_flat_l1" in r["exact_batch_ms_per_query"]
    fastest = min(r["exact_ms"], key=r["exact_ms"].get)
    assert r["exact_fastest"] == {"name": fastest, "ms": r["exact_ms"][fastest]}
    for key in ("speedup_single", "speedup_batch"):   # per-round ratios of interleaved timings
        sp = r[key]
        assert sp["rounds"] == 2 and sp["min"] <= sp["median"] <= sp["max"] and len(sp["load_after"]) == 3
    assert r["speedup_single"]["denominator"] == "index" and fastest in r["speedup_single"]["numerator"]


def test_recall_is_measured_against_the_exact_filter(captured):
    out, _ = captured
    r = out["results"][0]
    # validation asked for 0.99; fresh queries land near it
    assert 0.97 <= r["recall_at_p"]["mean"] <= 1.0 and r["recall_at_p"]["min"] <= r["recall_at_p"]["mean"]
    assert [x["nprobe"] for x in r["sweep"]] == [1, 40]
    one, forty = r["sweep"]
    assert one["recall_at_p"] < 0.8 < forty["recall_at_p"]  # one list of 88 misses most candidates


def test_latency_is_the_mean_of_each_querys_fastest_round():
    rounds = [np.array([1.0, 9.0, 3.0]), np.array([2.0, 2.0, 8.0]), np.array([7.0, 4.0, 3.0])]
    assert scale.latency_ms(rounds) == pytest.approx((1 + 2 + 3) / 3 * 1e3)


def test_recall_at_p_counts_the_shared_candidates():
    exact = np.array([[1, 2, 3, 4], [5, 6, 7, 8]])
    got = np.array([[4, 3, 2, 1], [5, 0, 9, 7]])
    np.testing.assert_allclose(scale.recall_at_p(got, exact), [1.0, 0.5])


def test_scale_bench_from_the_command_line(capsys, tmp_path):
    rc = main(["bench", "scale", "--classes", "800", "--queries", "5", "--val-queries", "20", "--rounds", "1",
               "--p", "5", "--nlist", "30", "--nprobe", "2,30", "--out", str(tmp_path / "s.json")])
    assert rc == 0
    printed = json.loads(capsys.readouterr().out)
    r = printed["results"][0]
    assert r["classes"] == 800 and r["nlist"] == 30
    assert [c["nlist"] for c in printed["selection"]["by_classes"][0]["candidates"]] == [30, 30, 30]
    assert json.loads((tmp_path / "s.json").read_text())["results"][0]["p"] == 5


def test_bad_options_are_one_line_errors(capsys):
    assert main(["bench", "scale", "--classes", "many"]) == 2
    assert "--classes" in capsys.readouterr().err
    assert main(["bench", "scale", "--classes", "500", "--target-recall", "1.5"]) == 2
    assert "--target-recall" in capsys.readouterr().err
    assert main(["bench", "scale", "--classes", "500", "--rerank", "0.5"]) == 2
    assert "--rerank" in capsys.readouterr().err


def test_a_poisoned_test_part_changes_no_choice(monkeypatch, poison):
    # one (nlist, rerank) candidate: the choice is the smallest nprobe reaching the recall target on
    # validation, which timing noise cannot move
    kw = dict(classes="3000", queries=30, val_queries=150, p=10, rounds=1, nlist="88", rerank="1.5")
    clean = scale.run(**kw)
    measured = scale.test_queries

    def poisoned(E, n, noise, test_seed):
        F, y = measured(E, n, noise, test_seed)
        return poison.noise_like(F), poison.permuted(y)

    monkeypatch.setattr(scale, "test_queries", poisoned)
    dirty = scale.run(**kw)
    assert poison.without_timings(dirty["selection"]) == poison.without_timings(clean["selection"])
    assert dirty["results"][0]["recall_at_p"] != clean["results"][0]["recall_at_p"]  # the poison reached the test
