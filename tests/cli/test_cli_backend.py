"""`--backend` / `--scheduler` on train and eval: same model wherever the work runs; clear errors."""
from __future__ import annotations

import json
import socket

import numpy as np

from classmap_gui.cli import main
from classmap_gui.core.recogniser import Recogniser


def _train(tmp_path, name, *extra):
    out = tmp_path / name
    assert main(["train", "--data", "digits", "--features", "pixels", "--bank", "ova-liblinear",
                 "--set", "bank.random_state=0", "--out", str(out), "--json", *extra]) == 0
    return out


def test_train_with_the_threading_backend_gives_the_same_model(tmp_path, capsys):
    a = Recogniser.load(_train(tmp_path, "default"))
    b = Recogniser.load(_train(tmp_path, "threads", "--backend", "threading"))
    capsys.readouterr()
    np.testing.assert_allclose(a.classifier.coef_, b.classifier.coef_, rtol=1e-5, atol=1e-6)
    assert main(["eval", str(tmp_path / "threads"), "--data", "digits", "--backend", "loky", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] > 0.8


def test_an_unreachable_scheduler_is_a_one_line_error(tmp_path, capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rc = main(["train", "--data", "digits", "--features", "pixels", "--bank", "ova-ridge",
               "--out", str(tmp_path / "m"), "--scheduler", f"tcp://127.0.0.1:{port}"])
    err = capsys.readouterr().err
    assert rc == 2 and "cannot reach the Dask scheduler" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "m").exists()
