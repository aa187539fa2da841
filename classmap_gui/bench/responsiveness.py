"""``classmap bench responsiveness``: how long the window stops answering while the app works, in rounds.

The app's own window (offscreen unless a display is set) runs each scenario with a heartbeat on its UI
thread (:mod:`.heartbeat`): ``training`` (the Train button on a generated hand-pose subset, k-means
features sized for about a second of work), ``streaming`` (a generated video recognised at full speed) and
``views`` (the Explore panel's predictions, PCA and accuracy curve). With ``load`` a process spins on every
core beside the app while each scenario runs, as a busy machine does. Each round runs every scenario once;
the JSON holds every round's figures (the longest gap, the longest the app itself held the UI thread up,
where that gap went), the median and range per scenario, how many rounds stayed within ``bound_ms`` and
how many froze the window (the app held it up longer than ``freeze_ms``), and the load average during the
rounds (:class:`.common.LoadDuring`). A person notices a pause of 100 ms: that is the bound; a pause of a
second is taken for a frozen window. Both are timings, measured here: the test suite asserts only that the
window answers while the app works, since a timed bound on a shared machine is not a test.
"""
from __future__ import annotations

import os
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

import numpy as np

from ..core.progress import check_stop, report
from .common import LoadDuring

OPTIONS = {
    "rounds": (3, "rounds; each runs every scenario once"),
    "load": (True, "a process spinning on every core beside the app while each scenario runs"),
    "bound_ms": (100.0, "the longest pause of the window a person does not notice"),
    "freeze_ms": (1000.0, "a pause taken for a frozen window"),
    "scenarios": ("training/streaming/views", "'/'-separated, of training, streaming, views"),
    "seed": (0, "seed of the generated images and video"),
}

#: the Train panel's settings for the training scenario: k-means sized for about a second of work
TRAIN_SETTINGS = {"features": "kmeans", "features_params": {"n_centroids": 400, "patch_size": 5, "n_patches": 40000,
                                                            "stride": 1},
                  "bank": "ova-ridge", "bank_params": {"alpha": 10.0},
                  "classmap": {"d": 8, "p": 6, "embedding": "boosted", "refine": "v2"},
                  "test_fraction": 0.4, "seed": 0}
SCENARIOS = ("training", "streaming", "views")
#: ms: the app held the window up this long: a person takes it for frozen
FREEZE_MS = 1000.0


def froze(summary: dict, freeze_ms: float = FREEZE_MS) -> bool:
    """Whether a heartbeat's :meth:`~.heartbeat.Heartbeat.summary` saw the app hold the window up longer than
    ``freeze_ms``."""
    return float(summary.get("app_held_ms", 0.0)) > float(freeze_ms)


def _wait_until(app, done, timeout: float, what: str) -> None:
    """Run the event loop until ``done()`` (the heartbeat's timer beats meanwhile); TimeoutError after ``timeout`` s."""
    from PySide6.QtCore import QEventLoop

    end = time.perf_counter() + timeout
    while not done():
        if time.perf_counter() > end:
            raise TimeoutError(f"bench responsiveness: {what} did not finish within {timeout:.0f} s")
        app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)


def _task(app, win, start, what: str) -> None:
    """Start a background task with ``start()`` and run the event loop until the runner reports it finished."""
    finished = []
    win.runner.finished.connect(lambda *_: finished.append(True))
    start()
    _wait_until(app, lambda: bool(finished), 600, what)
    if getattr(win.runner, "last_error", None):
        raise RuntimeError(f"bench responsiveness: {what} failed: {win.runner.last_error}")


def _write_video(path: Path, images: np.ndarray, frames: int = 90) -> Path:
    """An MJPG video of ``frames`` of the given grey images (enlarged to 96x96): the fake camera."""
    import cv2

    vw = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 30.0, (96, 96))
    for i in range(frames):
        img = cv2.resize(images[i % len(images)], (96, 96), interpolation=cv2.INTER_NEAREST)
        vw.write(cv2.cvtColor(img, cv2.COLOR_GRAY2BGR) if img.ndim == 2 else cv2.cvtColor(img, cv2.COLOR_RGB2BGR))
    vw.release()
    return path


def _scenario(name: str, app, win, ims, video: Path, hb) -> None:
    """Run scenario ``name`` in ``win`` while the heartbeat ``hb`` beats."""
    if name == "training":
        win.project.reset(ims)
        win.train.apply_settings(TRAIN_SETTINGS)
        _task(app, win, win.train.start_training, "training")
    elif name == "streaming":
        win.run.add_source("video", str(video))
        win.run.full_speed.setChecked(True)
        win.run.start()
        _wait_until(app, lambda: win.run.stream is None, 300, "streaming")
    else:
        win.show_panel("explore")
        _task(app, win, win.explore.compute_btn.click, "the Explore views")
        # the views are painted on the next turns of the event loop: beat on for a second, as a person watches
        _wait_until(app, lambda: len(hb.times) > 100, 60, "the Explore views")


def _spread(values: list[float]) -> dict:
    return {"median": float(np.median(values)), "min": float(min(values)), "max": float(max(values))}


def run(*, progress=None, should_stop=None, rounds: int = 3, load: bool = True, bound_ms: float = 100.0,
        freeze_ms: float = FREEZE_MS, scenarios: str = "training/streaming/views", seed: int = 0) -> dict:
    """Every scenario once per round with a heartbeat (see the module doc); returns the JSON dict."""
    names = [s for s in str(scenarios).split("/") if s]
    bad = sorted(set(names) - set(SCENARIOS))
    if bad or not names or int(rounds) < 1:
        raise ValueError(f"bench responsiveness: scenarios from {', '.join(SCENARIOS)} ('/'-separated) and "
                         f"rounds >= 1, got scenarios={scenarios!r} rounds={rounds!r}")
    if "training" not in names and ("streaming" in names or "views" in names):
        names.insert(0, "training")              # streaming and the views need the model training makes
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from ..core.data.hand_pose import generate_hand_pose
    from ..gui.mainwindow import MainWindow
    from .heartbeat import Heartbeat, busy_cpu

    app = QApplication.instance() or QApplication([])
    ims = generate_hand_pose(shapes="V,A,L,B,Y", orientations=6, images_per_class=10, size=(32, 32),
                             name="hand-pose-responsiveness", seed=int(seed))
    rows, load_before = [], [round(v, 2) for v in os.getloadavg()]
    saved_env = {k: os.environ.get(k) for k in ("XDG_DATA_HOME", "XDG_CONFIG_HOME")}
    with tempfile.TemporaryDirectory(prefix="classmap-responsiveness-") as tmp:
        # autosaves, captures and the recent-projects list go to the bench's folder, never the user's
        os.environ.update(XDG_DATA_HOME=str(Path(tmp) / "data"), XDG_CONFIG_HOME=str(Path(tmp) / "config"))
        video = _write_video(Path(tmp) / "camera.avi", ims.images)
        win = MainWindow()
        win.setProperty("no_confirm", True)
        win.show()
        try:
            with LoadDuring() as load_during:  # the burner (``load``) counts: such rounds are never quiet
                for r in range(int(rounds)):
                    for k, name in enumerate(names):
                        check_stop(should_stop)
                        report(progress, (r * len(names) + k) / (int(rounds) * len(names)), f"round {r + 1}: {name}")
                        with busy_cpu() if load else nullcontext():
                            with Heartbeat(bound=float(bound_ms) / 1000) as hb:
                                _scenario(name, app, win, ims, video, hb)
                            load_during.sample()
                        s = hb.summary()
                        s.pop("stacks", None)
                        rows.append({"round": r + 1, "scenario": name, **s,
                                     "within_bound": bool(s.get("app_held_ms", 0.0) <= float(bound_ms)),
                                     "froze": froze(s, freeze_ms)})
        finally:
            win.runner.cancel()
            win.runner.wait(10000)
            win.run.stop()
            win.close()
            for k, v in saved_env.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    report(progress, 1.0, "done")
    per = {}
    for name in names:
        mine = [row for row in rows if row["scenario"] == name and "app_held_ms" in row]
        if mine:
            per[name] = {"app_held_ms": _spread([row["app_held_ms"] for row in mine]),
                         "longest_gap_ms": _spread([row["longest_gap_ms"] for row in mine]),
                         "within_bound": f"{sum(row['within_bound'] for row in mine)}/{len(mine)}",
                         "froze": f"{sum(row['froze'] for row in mine)}/{len(mine)}"}
    return {"bench": "responsiveness", "options": {"rounds": int(rounds), "load": bool(load), "bound_ms": float(bound_ms),
                                                   "freeze_ms": float(freeze_ms),
                                                   "scenarios": "/".join(names), "seed": int(seed)},
            "cores": os.cpu_count(), "load_before": load_before, "load_during": load_during.record(), "scenarios": per,
            "rounds": rows}
