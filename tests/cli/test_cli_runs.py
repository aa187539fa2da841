"""`classmap train --json` prints the run record a project keeps (same fields, same values)."""
from __future__ import annotations

import json

from classmap_gui.cli import main
from classmap_gui.core.data import load_digits
from classmap_gui.core.project.runs import _FIELDS, data_version
from classmap_gui.core.recogniser import Recogniser


def test_train_json_prints_the_run_record(tmp_path, capsys):
    out = tmp_path / "m"
    assert main(["train", "--data", "digits", "--features", "pixels", "--bank", "ova-ridge", "--seed", "3",
                 "--classmap", "d=4,p=3,n_triples=500", "--out", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    run = doc["run"]
    assert set(run) == set(_FIELDS)                                    # the fields a project's Runs table shows
    assert run["accuracy"] == doc["test_accuracy"] and run["report_on"] == "test"
    assert run["settings"] == Recogniser.load(out).metadata["config"] and run["settings"]["seed"] == 3
    assert run["data"]["version"] == data_version(load_digits()) and run["data"]["bursts"] is None
    assert run["split"]["by"] == "image" and run["sizes"] == doc["images"]
    assert run["evaluations_per_query"] < 10 and set(run["latency_speedup"]) == {"single", "batch"}
    assert run["train_seconds"] >= sum(run["stage_seconds"].values()) * 0.99


def test_train_text_says_how_the_data_was_split(tmp_path, capsys):
    assert main(["train", "--data", "digits", "--features", "pixels", "--bank", "ova-ridge",
                 "--out", str(tmp_path / "m")]) == 0
    assert "split by image (no capture bursts)" in capsys.readouterr().out
