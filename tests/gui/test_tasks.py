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
    with qtbot.waitSignal(runner.finished, timeout=5000):
        runner.cancel()
    assert got == ["endless"] and not runner.busy


def test_tasks_overlap_and_a_colliding_one_is_refused_with_a_sentence(qtbot, runner):
    """Two different jobs run at once (a map computed while training); the same job twice, or anything
    beside one that replaces the project, is refused and the refusal says why."""
    refused, results = [], []
    runner.refused.connect(lambda title, why: refused.append((title, why)))
    gate = []

    def slow(progress, should_stop):
        while not gate:
            check_stop(should_stop)
            time.sleep(0.01)
        return "slow"

    assert runner.run("Training", slow, results.append)
    assert runner.run("Computing views", lambda p, s: "views", results.append)  # overlaps
    qtbot.waitUntil(lambda: results == ["views"], timeout=5000)
    assert runner.busy and runner.task.title == "Training"
    assert runner.run("Training", slow) is None
    assert refused[-1] == ("Training", "Training is already running; wait for it to finish or cancel it.")
    assert runner.run("Opening p.cmproj", lambda p, s: 1, exclusive=True) is None
    assert "Opening p.cmproj has to wait: Training is still running" in refused[-1][1]
    with qtbot.waitSignal(runner.finished, timeout=5000):
        gate.append(1)
    assert results == ["views", "slow"] and not runner.busy
    assert runner.run("Opening p.cmproj", lambda p, s: (time.sleep(0.2), 1)[1], exclusive=True)
    assert runner.run("Computing views", lambda p, s: 2) is None          # nothing beside an exclusive one
    assert "Opening p.cmproj is still running" in refused[-1][1]
    with qtbot.waitSignal(runner.finished, timeout=5000):
        pass


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


EXIT_WHILE_STUCK = """
import os, sys, threading
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from classmap_gui.gui.tasks import TaskRunner
from classmap_gui.gui.threads import exit_code

app = QApplication([])
runner = TaskRunner()
forever = threading.Event()
runner.run("Opening model m", lambda progress, should_stop: forever.wait(), abandonable=True)
QTimer.singleShot(200, runner.cancel)
QTimer.singleShot(400, app.quit)
code = app.exec()
print("busy after cancel:", runner.busy, flush=True)
sys.exit(exit_code(code, timeout_ms=500))
"""


def test_closing_while_an_abandoned_task_is_stuck_exits_0_without_a_qthread_abort(tmp_path):
    """Issue 49 item 5: closing the app while a model load hung aborted it ("QThread: Destroyed while
    thread is still running", exit 134). An abandoned task's thread no longer holds the exit."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root), "XDG_CONFIG_HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", EXIT_WHILE_STUCK], capture_output=True, text=True, timeout=120,
                         env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "busy after cancel: False" in out.stdout
    assert "QThread" not in out.stderr and "Traceback" not in out.stderr, out.stderr
