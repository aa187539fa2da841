"""``classmap bench responsiveness``: the strict heartbeat bound as a measurement, in rounds, with the load."""
import json

from classmap_gui.bench import responsiveness


def test_the_bench_reports_every_round_and_scenario_with_the_load(qtbot, capsys):
    out = responsiveness.run(rounds=1, load=False, scenarios="streaming")
    # streaming needs a model: training runs first, and both are reported
    assert out["options"]["scenarios"] == "training/streaming" and out["options"]["bound_ms"] == 100.0
    assert [r["scenario"] for r in out["rounds"]] == ["training", "streaming"]
    for row in out["rounds"]:
        assert row["beats"] >= 2 and row["longest_gap_ms"] >= row["app_held_ms"] >= 0   # beats: as many as it ran
        assert row["within_bound"] == (row["app_held_ms"] <= 100.0)
        assert row["froze"] == (row["app_held_ms"] > 1000.0)         # the freeze bound lives here, not in a test
    assert set(out["scenarios"]) == {"training", "streaming"}
    assert out["scenarios"]["training"]["within_bound"] in ("0/1", "1/1")
    assert len(out["load_before"]) == 3
    assert out["options"]["freeze_ms"] == 1000.0 and out["scenarios"]["training"]["froze"] in ("0/1", "1/1")
    assert out["load_during"]["samples"] >= 3                          # entry, each scenario, exit
    json.dumps(out)                                     # plain JSON, as the CLI prints it


def test_bad_options_are_refused_before_any_window_opens():
    import pytest

    with pytest.raises(ValueError, match="scenarios from training, streaming, views"):
        responsiveness.run(scenarios="typing")
    with pytest.raises(ValueError, match="rounds >= 1"):
        responsiveness.run(rounds=0)
