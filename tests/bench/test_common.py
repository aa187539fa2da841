"""What every bench shares (classmap_gui/bench/common.py): the load average recorded during timed rounds."""
import os

from classmap_gui.bench.common import LoadDuring, quiet_machine


def _loads(monkeypatch, values):
    it = iter(values)
    monkeypatch.setattr(os, "getloadavg", lambda: (next(it), 0.0, 0.0))


def test_the_load_is_read_each_round_and_a_busy_round_is_not_quiet(monkeypatch):
    """scan.json said quiet at load 0.9 before its rounds while they ran at 1.56-1.89: the record is of the
    rounds, and one round above the threshold makes the run not quiet."""
    _loads(monkeypatch, [0.9, 1.56, 1.89, 1.7, 0.95])  # entry, three rounds, exit
    with LoadDuring(threshold=1.0, every_s=3600) as load:
        for _ in range(3):
            load.sample()
    rec = load.record()
    assert rec == {"samples": 5, "min": 0.9, "max": 1.89, "median": 1.56, "threshold": 1.0, "quiet": False}
    assert quiet_machine({"quiet": True, "threshold": 1.0, "load": [0.9, 1, 1]}, rec)["quiet"] is False


def test_quiet_only_when_every_reading_stayed_at_or_below_the_threshold(monkeypatch):
    _loads(monkeypatch, [0.3, 0.5, 1.0, 0.4])
    with LoadDuring(threshold=1.0, every_s=3600) as load:
        load.sample()
        load.sample()
    assert load.record()["quiet"] is True and load.record()["max"] == 1.0
    before = {"quiet": True, "waited_s": 0.0, "threshold": 1.0, "load": [0.3, 0.3, 0.3]}
    assert quiet_machine(before, load.record())["quiet"] is True
    assert quiet_machine({**before, "quiet": False}, load.record())["quiet"] is False  # not quiet before
    assert quiet_machine(before, None)["quiet"] is False          # a bench that recorded no load during its rounds


def test_the_sampler_reads_between_rounds_deep_inside_a_helper():
    """Rounds inside a helper the bench cannot step into are covered by the sampler thread."""
    import time

    with LoadDuring(every_s=0.01) as load:
        end = time.monotonic() + 60  # however slow the machine: the thread reads at least once meanwhile
        while len(load.samples) < 2 and time.monotonic() < end:
            time.sleep(0.01)
    assert load.record()["samples"] >= 3  # entry, the thread's, exit
