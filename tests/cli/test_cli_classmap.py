"""`classmap train --classmap ...`, `eval` and `predict --top` with a ClassMap model, as a user types them."""
import json

import cv2
import pytest

from classmap_gui.cli import main
from classmap_gui.core.data import load_dataset
from classmap_gui.core.recogniser import Recogniser
from classmap_gui.core.train.training import evaluate


@pytest.fixture(scope="module")
def classmap_model(tmp_path_factory):
    out = tmp_path_factory.mktemp("cm") / "glyph-cm"
    assert main(["train", "--data", "glyph-pose-small", "--features", "hog", "--bank", "ova-ridge",
                 "--set", "bank.alpha=1000", "--set", "classmap.n_triples=5000",
                 "--classmap", "d=20,p=20,embedding=boosted,refine=v2", "--out", str(out)]) == 0
    return out


def test_eval_reports_evaluations_and_speedup(classmap_model, capsys):
    capsys.readouterr()
    # --all: every image, so the brute-force comparison below is on the same images
    assert main(["eval", str(classmap_model), "--data", "glyph-pose-small", "--all", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["brute_force_evaluations"] == 250
    assert 20 <= rep["evaluations_per_query"] <= 40          # d references + at most p candidates
    assert rep["evaluations_ratio"] == pytest.approx(250 / rep["evaluations_per_query"])
    assert set(rep["latency_speedup"]) == {"single", "batch"}  # measured; its size depends on the machine
    # the same bank scoring all 250 classes: ClassMap keeps its accuracy within 2 points
    rec = Recogniser.load(classmap_model)
    rec.classmap = None
    brute = evaluate(rec, load_dataset("glyph-pose-small"))
    assert brute.accuracy > 0.95
    assert rep["accuracy"] >= brute.accuracy - 0.02


def test_eval_text_names_what_each_ratio_measures(classmap_model, capsys):
    capsys.readouterr()
    assert main(["eval", str(classmap_model), "--data", "glyph-pose-small"]) == 0
    out = capsys.readouterr().out
    assert "fewer evaluations" in out and "speed-up" not in out
    assert "faster per image" in out or "slower per image" in out  # measured against one GEMM: either way


def test_predict_top_lists_candidates_with_scores(classmap_model, tmp_path, capsys):
    ims = load_dataset("glyph-pose-small")
    paths = []
    for i in (0, 1234):
        paths.append(tmp_path / f"q{i}.png")
        cv2.imwrite(str(paths[-1]), ims.images[i])
    capsys.readouterr()
    assert main(["predict", str(classmap_model), *map(str, paths), "--top", "4", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    for row in res["predictions"]:
        assert len(row["top"]) == 4 and row["label"] == row["top"][0]["class"]
        scores = [t["score"] for t in row["top"]]
        assert scores == sorted(scores, reverse=True)
        assert 20 <= row["evaluations"] <= 40
    assert {"embedding+filter", "refine"} <= set(res["timings"])


def test_bad_classmap_option_is_one_line_error(tmp_path, capsys):
    code = main(["train", "--data", "glyph-pose-small", "--features", "hog", "--bank", "ova-ridge",
                 "--classmap", "d=5,p=5,refine=v9", "--out", str(tmp_path / "x")])
    err = capsys.readouterr().err
    assert code == 2 and "refine" in err and "\n" not in err.strip()
