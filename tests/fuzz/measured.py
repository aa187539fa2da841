"""Running a command in a child process and measuring what a user would see: exit status, stderr
lines, and the child's own peak resident memory (``wait4``'s rusage: that child only, not the test)."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

#: What a hostile file may cost above the same command's peak on a harmless input (issue 26).
EXTRA_BYTES = 300 * 1024 * 1024
REPO = Path(__file__).resolve().parents[2]


@dataclass
class Run:
    code: int  # exit status; -N when killed by signal N
    out: str
    err: str
    peak: int  # peak resident memory of the child, bytes

    @property
    def err_lines(self) -> list[str]:
        return [ln for ln in self.err.splitlines() if ln.strip()]


#: Starts the command from a fresh, small interpreter and writes its peak memory to the file argv[1]:
#: Linux carries the forking process's high-water mark into the child, so forking from the test
#: process (hundreds of MB) would hide the command's own peak.
_LAUNCHER = """
import os, subprocess, sys
proc = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(proc.pid, 0)
with open(sys.argv[1], "w") as fh:
    fh.write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


def run(argv: list[str], *, timeout: float = 120, env: dict | None = None, cwd: str | None = None) -> Run:
    """Run ``argv`` (``python`` first means this interpreter) with this checkout first on the path."""
    if argv[0] == "python":
        argv = [sys.executable, *argv[1:]]
    full = dict(os.environ if env is None else env)
    full["PYTHONPATH"] = os.pathsep.join([str(REPO), full.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r") as peak:
        proc = subprocess.Popen([sys.executable, "-I", "-c", _LAUNCHER, peak.name, *argv], stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL, env=full, cwd=cwd, start_new_session=True)
        timer = threading.Timer(timeout, lambda: os.killpg(proc.pid, 9))
        timer.start()
        try:
            proc.wait()
        finally:
            timer.cancel()
        code = proc.returncode
        if code > 128:  # the launcher's way of saying the command died of a signal
            code = 128 - code
        out.seek(0)
        err.seek(0)
        text = peak.read().strip()
        return Run(code, out.read().decode(errors="replace"), err.read().decode(errors="replace"),
                   int(text or 0) * 1024)


def classmap(*args: str, **kw) -> Run:
    """``classmap ARGS`` in a child process."""
    return run(["python", "-m", "classmap_gui.cli", *args], **kw)


def assert_bounded(hostile: Run, baseline: Run) -> None:
    """The hostile run's peak memory is within :data:`EXTRA_BYTES` of the harmless run's."""
    assert hostile.peak <= baseline.peak + EXTRA_BYTES, \
        f"peak {hostile.peak / 2 ** 20:.0f} MB against a baseline of {baseline.peak / 2 ** 20:.0f} MB"


def assert_one_error(r: Run, *needles: str, code: int = 2, prefix: str = "classmap: error:") -> str:
    """Exactly one stderr line, starting with ``prefix``, holding every needle; exit status ``code``."""
    assert r.code == code, (r.code, r.err[-2000:])
    lines = r.err_lines
    assert len(lines) == 1 and lines[0].startswith(prefix), r.err[-2000:]
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def train_and_export(root: Path) -> dict:
    """A folder of 3 classes x 6 tiny PNGs under ``root``, a model trained on it with `classmap train` and
    its `classmap export`: ``{"data", "model", "export", "image"}``."""
    import cv2
    import numpy as np

    rng = np.random.default_rng(0)
    data = root / "data"
    for c in range(3):
        (data / f"c{c}").mkdir(parents=True)
        for i in range(6):
            img = rng.integers(0, 60, (8, 8)).astype(np.uint8)
            img[c * 2:c * 2 + 3] += 150
            cv2.imwrite(str(data / f"c{c}" / f"{i}.png"), img)
    model, export = root / "model", root / "export"
    assert classmap("train", "--data", str(data), "--features", "pixels", "--bank", "ova-ridge", "--size", "8x8",
                    "--out", str(model)).code == 0
    assert classmap("export", str(model), "--out", str(export)).code == 0
    return {"data": data, "model": model, "export": export, "image": data / "c0" / "0.png"}
