"""The task runner: results, progress, cancel and errors reach the UI thread; the app stays usable."""
import time

import pytest

from classmap_gui.core.errors import DataError
from classmap_gui.core.progress import check_stop
from classmap_gui.gui.tasks import TaskRunner


@pytest.fixture
def runner(qtbot):
    r = TaskRunner()
    yield r
    r.cancel()
    r.wait()


def test_result_and_progress_arrive(qtbot, runner):
    seen, results = [], []
    runner.progressed.connect(lambda f, s, eta: seen.append((f, s)))

    def work(progress, should_stop):
        for i in range(5):
            progress(i / 5, f"stage {i}")
        return 42

    with qtbot.waitSignal(runner.finished, timeout=5000):
        assert runner.run("job", work, results.append)
    assert results == [42]
    assert [s for _, s in seen] == [f"stage {i}" for i in range(5)]  # every stage change is shown
    assert not runner.busy


def test_cancel_stops_the_work(qtbot, runner):
    got = []
    runner.cancelled.connect(got.append)

    def work(progress, should_stop):
        while True:
            check_stop(should_stop)
            time.sleep(0.01)

    runner.run("endless", work)
    assert runner.busy
    assert not runner.run("second", work)  # one task at a time
    with qtbot.waitSignal(runner.finished, timeout=5000):
        runner.cancel()
    assert got == ["endless"] and not runner.busy


def test_error_is_reported_and_runner_stays_usable(qtbot, runner):
    errors = []
    runner.failed.connect(lambda t, m: errors.append((t, m)))

    def bad(progress, should_stop):
        raise DataError("class 'x' has one image")

    with qtbot.waitSignal(runner.finished, timeout=5000):
        runner.run("train", bad)
    assert errors == [("train", "class 'x' has one image")]
    res = []
    with qtbot.waitSignal(runner.finished, timeout=5000):
        runner.run("again", lambda p, s: 1, res.append)
    assert res == [1]


def test_unexpected_exception_becomes_a_message(qtbot, runner):
    errors = []
    runner.failed.connect(lambda t, m: errors.append(m))
    with qtbot.waitSignal(runner.finished, timeout=5000):
        runner.run("boom", lambda p, s: 1 / 0)
    # a person reads a sentence (and where the details are), never the raw exception text
    assert errors and errors[0].startswith("Something went wrong inside ClassMap Studio")
    assert "division by zero" not in errors[0]
    assert "Traceback" in runner.last_traceback and "ZeroDivisionError" in runner.last_traceback


def test_each_task_has_its_own_signals(qtbot, runner):
    task = runner.run("first", lambda p, s: (p(0.5, "half"), 7)[1])
    seen = []
    task.progressed.connect(lambda f, s, eta: seen.append(s))
    with qtbot.waitSignal(task.succeeded, timeout=5000) as sig:
        pass
    assert sig.args == [7] and task.result == 7
    full = []

    def disk_full(p, s):
        raise OSError(28, "No space left on device", "/tmp/x.cmproj")
    t2 = runner.run("save", disk_full)
    t2.failed.connect(full.append)
    with qtbot.waitSignal(t2.finished, timeout=5000):
        pass
    assert full == [t2.error] and "disk is full" in t2.error and "/tmp/x.cmproj" in t2.error
