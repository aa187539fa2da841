"""bench compressive on tiny settings: what each section reports, and that its one data-driven choice is
made on validation."""
from __future__ import annotations

import json

import numpy as np
import pytest

from classmap_gui.bench import compressive as bench


def test_rescaling_uses_the_whole_set_by_default_as_the_papers_protocol():
    assert bench.OPTIONS["scale"][0] == "all"
    Xtr, Xte = np.array([[0.0], [1.0]]), np.array([[3.0]])
    a_tr, a_te = bench._rescale(Xtr, Xte, np.vstack([Xtr, Xte]), "all")
    assert a_te[0, 0] == 1.0 and a_tr[0, 0] == -1.0             # the test point sets the top of the range
    t_tr, t_te = bench._rescale(Xtr, Xte, np.vstack([Xtr, Xte]), "train")
    assert t_tr.max() == 1.0 and t_te[0, 0] == 5.0              # train range only: the test point falls outside


def test_small_sections_report_paper_figures_and_fixed_settings():
    out = bench.run(sections="table1/convergence/variance", reps=2, table1_m="50", conv_m="10/1000", conv_reps=1)
    json.dumps(out)
    row = out["table1"]["iris"]
    assert row["n"] == 150 and row["classes"] == 3
    assert 0 <= row["cc_m50"]["test"]["mean"] <= 100 and row["paper_cc_m50"]["test"]["mean"] == 8.22
    assert out["fixed"]["sigma"]["value"] == 2.0 and out["fixed"]["scale"]["value"] == "all"
    assert out["selection"] == {}                                 # nothing here is chosen from data
    # CC converges to the exact Parzen classifier as m grows
    for name in ("iris", "wine", "breast_cancer"):
        small, large = out["convergence"][name]["by_m"]
        assert large["max_score_diff"] < small["max_score_diff"] / 3      # ~1/sqrt(m): 10x for 100x the m
        assert large["agreement_pct"] >= small["agreement_pct"]


def test_fashion_bandwidth_is_chosen_on_validation():
    from classmap_gui.core.data import load_fashion_mnist

    try:
        load_fashion_mnist()
    except Exception as exc:  # noqa: BLE001  # pragma: no cover - the data set ships with the repo's test data
        pytest.fail(f"Fashion-MNIST not available: {exc}")
    out = bench.run(sections="fashion", fashion_train=600, fashion_test=200, fashion_m="64", kmeans_k=8,
                    fashion_sigma="0.5/2")
    sel = out["selection"]["kmeans_rff_sigma_m64"]
    assert sel["split"] == "validation" and len(sel["candidates"]) == 2
    scores = {float(k): v for k, v in sel["scores"].items()}
    assert scores[sel["chosen"]] == max(scores.values())
    assert out["fashion"]["kmeans"]["64"]["sigma"] == sel["chosen"]
    assert sel["validation_images"] == 120                        # a fifth of the 600 training images


def test_a_poisoned_test_part_changes_no_choice(monkeypatch, poison):
    import classmap_gui.core.data as data
    from classmap_gui.core.data import ImageSet

    kw = dict(sections="fashion", fashion_train=600, fashion_test=200, fashion_m="64", kmeans_k=8,
              fashion_sigma="0.5/2")
    clean = bench.run(**kw)
    split = data.fashion_mnist_split

    def poisoned(ims):
        train, test = split(ims)
        return train, ImageSet(poison.noise_like(test.images), poison.permuted(test.labels), test.class_names)

    monkeypatch.setattr(data, "fashion_mnist_split", poisoned)
    dirty = bench.run(**kw)
    assert poison.without_timings(dirty["selection"]) == poison.without_timings(clean["selection"])
    assert dirty["fashion"]["kmeans"]["64"]["test_accuracy_pct"] < 30 < clean["fashion"]["kmeans"]["64"]["test_accuracy_pct"]


def test_test_seed_must_differ_from_the_seed():
    from classmap_gui.core.errors import ConfigError

    with pytest.raises(ConfigError, match="test part"):
        bench.run(sections="variance", seed=3, test_seed=3)
