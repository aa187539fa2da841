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
