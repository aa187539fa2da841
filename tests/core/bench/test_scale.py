"""`classmap bench scale` on a small class count: the figures a user reads are there and sane."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("faiss")

from classmap_gui.cli import main  # noqa: E402
from classmap_gui.core.bench import scale  # noqa: E402


def test_scale_bench_measures_the_ivf_index_by_default():
    out = scale.run(classes="3000", queries=20, p=10, rounds=1, sweep="1,40")
    r = out["results"][0]
    assert r["method"] == "ivf" and r["nlist"] > 1 and 1 <= r["nprobe"] <= r["nlist"]
    assert r["recall_at_p"]["mean"] >= 0.95 and r["index_ms"]["single"] > 0 and r["speedup_single"] > 0
    assert [x["nprobe"] for x in r["sweep"]] == [1, 40]
    assert r["sweep"][1]["recall_at_p"] > r["sweep"][0]["recall_at_p"]  # more lists probed, more found


def test_scale_bench_reports_latency_recall_and_speedup():
    out = scale.run(classes="1500,3000", queries=20, p=10, rounds=1, M=16, ef_construction=40, sweep="10,40",
                    method="hnsw")
    assert [r["classes"] for r in out["results"]] == [1500, 3000]
    for r in out["results"]:
        assert r["method"] == "hnsw" and r["p"] == 10
        assert r["recall_at_p"]["mean"] >= 0.95
        assert r["exact_ms"]["numba"] > 0 and r["exact_ms"]["numpy"] > 0 and r["index_ms"]["single"] > 0
        assert r["speedup_single"] > 0
        assert [x["ef_search"] for x in r["sweep"]] == [10, 40]
        assert r["sweep"][1]["recall_at_p"] >= r["sweep"][0]["recall_at_p"] - 0.02  # a wider beam finds as much
    assert len(out["load_average"]) == 3


def test_scale_bench_from_the_command_line(capsys, tmp_path):
    rc = main(["bench", "scale", "--classes", "800", "--queries", "5", "--rounds", "1", "--p", "5",
               "--out", str(tmp_path / "s.json")])
    assert rc == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["results"][0]["classes"] == 800
    assert json.loads((tmp_path / "s.json").read_text())["results"][0]["p"] == 5


def test_bad_class_counts_are_one_line_errors(capsys):
    assert main(["bench", "scale", "--classes", "many"]) == 2
    assert "--classes" in capsys.readouterr().err
