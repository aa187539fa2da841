"""`classmap bench ... --quiet-machine`: the wait for a quiet machine is bounded and recorded in the JSON, with
the load during the timed rounds."""
import json

from classmap_gui.cli import main


def test_quiet_machine_wait_is_bounded_and_recorded(tmp_path, capsys):
    out = tmp_path / "f.json"
    args = ["bench", "features", "--data", "digits", "--test-seed", "1", "--k", "8", "--n-patches", "500",
            "--patch-size", "3", "--gemm-images", "50", "--out", str(out)]
    assert main(args + ["--quiet-machine", "0"]) == 0
    res = json.loads(out.read_text())
    q = res["quiet_machine"]
    assert q["threshold"] == 1.0 and q["waited_s"] < 5 and q["quiet_before"] == (q["load"][0] < 1.0)
    # quiet only if it stayed quiet while the bench's timed rounds ran (the load during them, not before)
    during = res["load_during"]
    assert q["during"] == during and during["samples"] >= 2 and during["min"] <= during["median"] <= during["max"]
    assert q["quiet"] == (q["quiet_before"] and during["max"] <= during["threshold"])
    assert res["revision"] and res["test_seed"] == 1
    capsys.readouterr()
    assert main(args) == 0
    assert "quiet_machine" not in json.loads(out.read_text())          # only when asked for


def test_bench_scan_uses_the_hand_model_the_app_built_and_says_so(tmp_path, capsys, monkeypatch):
    """`classmap bench scan` after `classmap hand-model` (or the app's build) tests that model instead of
    building its own, names it on stderr and in the JSON, and shows its progress on stderr."""
    import classmap_gui.bench.scan as scan

    seen = []

    def fake_run(*, progress=None, should_stop=None, **options):
        seen.append(options.get("model_dir"))
        progress(0.5, "scanning the test videos at 320x240, ClassMap and brute force")
        return {"seconds": 1.0}

    monkeypatch.setattr(scan, "run", fake_run)
    app_model = tmp_path / "hands"
    monkeypatch.setenv("CLASSMAP_HAND_MODEL", str(app_model))
    out = tmp_path / "scan.json"
    assert main(["bench", "scan", "--out", str(out)]) == 0                     # no model built yet: its own
    err = capsys.readouterr().err
    assert seen[-1] is None and "built by the bench" in err and "classmap hand-model" in err
    app_model.mkdir()
    (app_model / "model.json").write_text("{}")
    assert main(["bench", "scan", "--out", str(out)]) == 0                     # the app's model, said so
    err = capsys.readouterr().err
    assert seen[-1] == str(app_model) and f"hand model: {app_model} (the app's" in err
    assert "scanning the test videos at 320x240, ClassMap and brute force: 50%" in err   # progress, whole stage
    assert json.loads(out.read_text())["hand_model_used"] == {"folder": str(app_model), "source": "the app's"}
    assert main(["bench", "scan", "--model-dir", "none", "--out", str(out)]) == 0   # asked for its own
    assert seen[-1] is None and "--model-dir none" in capsys.readouterr().err
    assert main(["bench", "scan", "--set", "shapes=8", "--out", str(out)]) == 0      # another build asked for
    assert seen[-1] is None and "shapes" in capsys.readouterr().err


def test_progress_bar_estimates_the_whole_run_and_keeps_stage_names_whole(monkeypatch):
    """The time left is the whole run's (not the stage's), and a long stage name is not cut."""
    import io

    from classmap_gui.cli import common

    clock = [100.0]
    monkeypatch.setattr(common.time, "perf_counter", lambda: clock[0])
    term = io.StringIO()
    bar = common.ProgressBar(term, enabled=True, terminal=True)
    clock[0] = 160.0
    bar(0.5, "hand images: generating hand-pose images")                         # 60 s for half the run
    clock[0] = 170.0
    bar(0.6, "hand detector: training on 400 scenes")                           # a new stage, 10 s in
    lines = term.getvalue().split("\r")
    assert "hand images: generating hand-pose images [" in lines[1]
    assert lines[2].startswith("hand detector: training on 400 scenes [") and lines[2].rstrip().endswith("47 s left")


def test_every_bench_prints_its_help(capsys):
    """`classmap bench NAME --help` lists the options (a help text with a per-cent sign once stopped
    demo-reading's with argparse's "unsupported format character")."""
    import pytest

    from classmap_gui.cli.bench import BENCHES

    for name in BENCHES:
        with pytest.raises(SystemExit) as stop:
            main(["bench", name, "--help"])
        assert stop.value.code == 0, name
        assert "--out" in capsys.readouterr().out, name
