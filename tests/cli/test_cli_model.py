"""`classmap train | eval | predict` as a user types them: a round trip on digits, and one clear
line on stderr with a non-zero exit for every invalid input."""
import json

import cv2
import numpy as np
import pytest

from classmap_gui.cli import main
from classmap_gui.core.data import load_digits

SMALL = ["--set", "n_centroids=40,n_patches=4000", "--set", "kmeans_max_iter=5"]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "digits-model"
    assert main(["train", "--data", "digits", "--features", "kmeans", *SMALL, "--bank", "ova-liblinear",
                 "--out", str(out)]) == 0
    return out


def test_train_prints_accuracy_and_where_the_model_went(tmp_path, capsys):
    out = tmp_path / "m"
    code = main(["train", "--data", "digits", "--features", "kmeans", *SMALL, "--set", "bank.alpha=0.5",
                 "--bank", "ova-ridge", "--out", str(out), "--json"])
    assert code == 0
    res = json.loads(capsys.readouterr().out)
    assert res["test_accuracy"] > 0.8
    assert res["model"] == str(out) and (out / "model.json").exists()
    doc = json.loads((out / "model.json").read_text())
    assert doc["features"]["params"]["n_centroids"] == 40
    assert doc["features"]["state"]["patch_size_"] == 3  # "auto" adapted to 8x8 digits


def test_round_trip_train_eval_predict(model_dir, tmp_path, capsys):
    capsys.readouterr()
    assert main(["eval", str(model_dir), "--data", "digits", "--json"]) == 0
    out = capsys.readouterr()
    rep = json.loads(out.out)
    # the set it was trained on: only the images training held out are scored, as train reported
    meta = json.loads((model_dir / "model.json").read_text())["metadata"]
    assert rep["n"] == meta["sizes"]["test"] < 1797
    assert rep["accuracy"] == pytest.approx(meta["test_accuracy"])
    assert "scoring the" in out.err and "held out" in out.err
    assert len(rep["confusion"]) == 10 and rep["evaluations_per_query"] == 10
    assert main(["eval", str(model_dir), "--data", "digits", "--all", "--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["n"] == 1797 and "includes its training images" in out.err

    assert main(["eval", str(model_dir), "--data", "digits"]) == 0
    assert "accuracy" in capsys.readouterr().out

    d = load_digits()
    paths = []
    for i in (0, 1, 2):  # saved larger than the model's 8x8: predict resizes
        p = tmp_path / f"digit{i}.png"
        cv2.imwrite(str(p), cv2.resize(d.images[i], (32, 32), interpolation=cv2.INTER_NEAREST))
        paths.append(str(p))
    assert main(["predict", str(model_dir), *paths, "--top", "3", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    got = [r["label"] for r in res["predictions"]]
    assert sum(g == str(d.labels[i]) for i, g in zip((0, 1, 2), got)) >= 2
    assert all(len(r["top"]) == 3 for r in res["predictions"])
    assert main(["predict", str(model_dir), paths[0], "--top", "2"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(paths[0]) and line.count(",") == 1


@pytest.mark.parametrize("argv, message", [
    (["train", "--data", "digits", "--features", "pixels", "--set", "wrong=1", "--out", "{tmp}/x"], "wrong"),
    (["train", "--data", "digits", "--features", "pixels", "--set", "bank.nope=1", "--out", "{tmp}/x"], "nope"),
    (["train", "--data", "no-such-set", "--features", "pixels", "--out", "{tmp}/x"], "no-such-set"),
    (["train", "--data", "digits", "--features", "pixels", "--test-fraction", "1.5", "--out", "{tmp}/x"], "fraction"),
    (["eval", "{tmp}/missing-model", "--data", "digits"], "missing-model"),
    (["predict", "{model}", "{tmp}/not-an-image.png", "--top", "0"], "--top"),
])
def test_invalid_input_is_one_line_and_nonzero(argv, message, model_dir, tmp_path, capsys):
    (tmp_path / "not-an-image.png").write_bytes(b"hello")
    argv = [a.replace("{tmp}", str(tmp_path)).replace("{model}", str(model_dir)) for a in argv]
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and message in err and err.startswith("classmap: error:")


def test_predict_classifies_every_readable_image_and_lists_each_unreadable_one(model_dir, tmp_path, capsys):
    d = load_digits()
    good = tmp_path / "good.png"
    cv2.imwrite(str(good), d.images[3])
    (tmp_path / "broken.png").write_bytes(b"hello")
    argv = ["predict", str(model_dir), str(tmp_path / "nothing.png"), str(good), str(tmp_path / "broken.png"),
            "--top", "1"]
    capsys.readouterr()
    assert main(argv) == 1  # some were unreadable
    cap = capsys.readouterr()
    lines = cap.out.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{good}: ")  # the readable one still got its result
    err = cap.err.strip().splitlines()
    assert err == [f"{tmp_path / 'nothing.png'}: cannot read image: No such file or directory",
                   f"{tmp_path / 'broken.png'}: cannot read image: not a PNG, JPEG, BMP, TIFF or WebP image, "
                   f"or its header is damaged"]
    assert main(["predict", str(model_dir), str(good)]) == 0


def test_pickled_model_is_refused_by_the_cli(model_dir, tmp_path, capsys):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "model.json").write_text((model_dir / "model.json").read_text())
    with np.load(model_dir / "arrays.npz") as z:
        members = {k: z[k] for k in z.files}
    members[next(iter(members))] = np.array([{"x": 1}], dtype=object)
    np.savez(bad / "arrays.npz", **members)
    assert main(["eval", str(bad), "--data", "digits"]) == 2
    assert "pickle" in capsys.readouterr().err


def test_bank_choices_come_from_the_registry(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = capsys.readouterr().out
    for name in ("ova-liblinear", "ova-ridge", "ova-rbf", "all-pairs"):
        assert name in out


def test_folder_of_colour_images_round_trip(tmp_path, capsys):
    """A user's own folder: colour images of mixed sizes, kept in colour at a chosen size."""
    rng = np.random.default_rng(0)
    colours = {"red": (230, 20, 20), "green": (20, 200, 30), "blue": (20, 30, 220)}
    for name, rgb in colours.items():
        (tmp_path / "data" / name).mkdir(parents=True)
        for i in range(8):
            size = (20 + i, 24)
            img = np.clip(np.array(rgb)[None, None, :] + rng.integers(-20, 20, (*size, 3)), 0, 255).astype(np.uint8)
            cv2.imwrite(str(tmp_path / "data" / name / f"{i}.png"), img[:, :, ::-1])  # OpenCV writes BGR
    out = tmp_path / "model"
    assert main(["train", "--data", str(tmp_path / "data"), "--features", "pixels", "--bank", "ova-ridge",
                 "--colour", "--size", "12x12", "--test-fraction", "0.25", "--out", str(out), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["test_accuracy"] == 1.0 and res["classes"] == 3
    doc = json.loads((out / "model.json").read_text())
    assert doc["grey"] is False and doc["image_size"] == [12, 12]
    assert main(["predict", str(out), str(tmp_path / "data" / "green" / "3.png"), "--top", "1"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.split(": ", 1)[1].startswith("green ")
