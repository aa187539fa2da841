"""A heartbeat on the UI thread: how long the window stops answering while work runs beside it.

A 10 ms timer on the UI thread records the gaps between its beats. In a gap the UI thread runs (the app's
work on it), waits for a CPU (the machine's load), or is blocked: on the GIL another thread holds, or idle
until the next beat. Linux schedstat gives each thread's time on a CPU and waiting for one; the app caused
the UI thread's running and, of its blocked time, at most as much as its other threads ran (a GIL holder
that is itself waiting for a CPU, or a process where nothing runs, is the load, not the app).

Used by ``classmap bench responsiveness`` (the strict bound, 100 ms, in rounds with the load recorded) and by
the GUI tests (a loose bound a real freeze still fails). Qt is imported here: only the GUI's measurements
import this module.
"""
from __future__ import annotations

import ctypes
import gc
import os
import platform
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager

import numpy as np
from PySide6.QtCore import QTimer

from ..gui.app import settle_heap

#: seconds: the longest pause of the window a person does not notice
BOUND = 0.1


# libc through ctypes.PyDLL: calls that keep the GIL. Reading a thread's schedstat takes microseconds; through
# Python's os/open (each call releases and retakes the GIL) a beat would queue for the GIL some 30 times behind a
# busy worker (the switch interval, 5 ms, each time): the heartbeat itself would make the gaps it measures.
_libc = ctypes.PyDLL(None, use_errno=True)
_libc.open.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.read.restype = ctypes.c_ssize_t
_libc.read.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
_libc.syscall.restype = ctypes.c_long
_SYS_GETDENTS64 = {"x86_64": 217, "aarch64": 61}.get(platform.machine())
_BUF = ctypes.create_string_buffer(1 << 16)  # the UI thread's own: only the beat reads through it


def _read(path: bytes) -> bytes:
    fd = _libc.open(path, os.O_RDONLY)
    if fd < 0:
        return b""
    try:
        n = _libc.read(fd, _BUF, len(_BUF))
        return ctypes.string_at(_BUF, max(n, 0))
    finally:
        _libc.close(fd)


def _threads() -> list[int]:
    """The ids of this process's threads (getdents64 on /proc/self/task, the GIL kept)."""
    if _SYS_GETDENTS64 is None:  # another machine: listed through Python (the GIL let go once a beat)
        return [int(t) for t in os.listdir("/proc/self/task")] if os.path.isdir("/proc/self/task") else []
    fd = _libc.open(b"/proc/self/task", os.O_RDONLY | os.O_DIRECTORY)
    if fd < 0:
        return []
    try:
        n = _libc.syscall(_SYS_GETDENTS64, fd, _BUF, len(_BUF))
        raw, out, off = ctypes.string_at(_BUF, max(n, 0)), [], 0
        while off < len(raw):
            reclen = int.from_bytes(raw[off + 16:off + 18], "little")
            name = raw[off + 19:off + reclen].split(b"\0", 1)[0]
            if name.isdigit():
                out.append(int(name))
            off += reclen
        return out
    finally:
        _libc.close(fd)


def _schedstats(tids=None) -> dict[int, tuple[int, int]]:
    """``{thread id: (ns on a CPU, ns runnable but waiting for one)}`` (Linux schedstat; empty elsewhere)."""
    out = {}
    for tid in (_threads() if tids is None else tids):
        fields = _read(b"/proc/self/task/%d/schedstat" % tid).split()
        if len(fields) >= 2:
            out[tid] = (int(fields[0]), int(fields[1]))
    return out


def _where(frame) -> list[tuple[str, int, str]]:
    """A thread's stack as (file, line, function), outermost first: no source lines read (the watcher holds
    the GIL while it walks, so it must be quick)."""
    out = []
    while frame is not None:
        out.append((frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name))
        frame = frame.f_back
    return out[::-1]


class Heartbeat:
    """Ticks every 10 ms on the UI thread and records the gaps between ticks (seconds), each thread's time
    on a CPU and waiting for one (Linux schedstat, read without letting go of the GIL) and, when a beat is
    late, every thread's stack (taken by a watcher thread), so a failure says what froze the window.

    The watcher samples with the GIL (``sys._current_frames``): a thread that holds the GIL in one long call
    shows just past it. faulthandler's GIL-free watchdog is not used: re-armed at every beat, each beat waits
    for the previous watchdog thread to get a CPU and end (the heartbeat made gaps of its own, up to 150 ms
    measured under load); left repeating, it reads thread states as threads come and go and crashed the test.
    """

    def __init__(self, bound: float = BOUND):
        self.bound = bound                     # a beat later than 0.6 x this has every thread's stack taken
        self.times: list[float] = []
        self.waits: list[dict[int, int]] = []  # every thread's time waiting for a CPU at each beat, ns
        self.ran: list[int] = []               # the UI thread's time on a CPU at each beat, ns
        self.runs: list[dict[int, int]] = []   # every thread's time on a CPU at each beat, ns
        self.stacks: dict[int, dict] = {}      # gap i (after beat i) -> every thread's stack 60 ms into it
        self._ui = threading.get_native_id()
        self._done = threading.Event()
        self._watcher = threading.Thread(target=self._watch, name="heartbeat-watcher", daemon=True)
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._beat)

    def _beat(self) -> None:
        self.times.append(time.perf_counter())
        stats = _schedstats()
        self.waits.append({tid: wait for tid, (_run, wait) in stats.items()})
        self.runs.append({tid: run for tid, (run, _wait) in stats.items()})
        self.ran.append(stats.get(self._ui, (0, 0))[0])

    def _watch(self) -> None:
        while not self._done.wait(0.02):
            i = len(self.times) - 1
            if i >= 0 and i not in self.stacks and time.perf_counter() - self.times[i] > 0.6 * self.bound:
                self.stacks[i] = {tid: _where(frame) for tid, frame in sys._current_frames().items()}

    def __enter__(self):
        # as the app at start-up (app.settle_heap): what is alive now is frozen out of the cyclic collector. This
        # process also holds the objects of the tests before (some 340 000 objects, a full collection over them
        # 200 ms), which the app never has; released on exit
        settle_heap()
        self.timer.start()
        self._watcher.start()
        return self

    def __exit__(self, *exc):
        self.timer.stop()
        self._done.set()
        self._watcher.join()
        gc.unfreeze()

    def _per_thread(self, stat: list[dict[int, int]], i: int) -> dict:
        """``{thread: ms}`` of a schedstat figure in gap ``i`` (threads that ran or waited), largest first."""
        w0, w1 = stat[i], stat[i + 1]
        names = {t: _read(b"/proc/self/task/%d/comm" % t).strip().decode() or "?" for t in w1}
        return {("UI" if t == self._ui else f"{names[t]}:{t}"): round(1e-6 * (w1[t] - w0[t]))
                for t in sorted(w1.keys() & w0.keys(), key=lambda t: w0[t] - w1[t]) if w1[t] - w0[t] > 5e5}

    def gaps(self) -> np.ndarray:
        return np.diff(self.times)

    def summary(self) -> dict:
        """What the beats saw: ``beats``, ``longest_gap_ms``, ``p99_gap_ms``, ``app_held_ms`` (the longest the app
        itself held the UI thread up: ran on it, or blocked it while another of its threads ran), the split of
        that worst gap (``ui_ran_ms``, ``ui_waited_for_cpu_ms``, ``ui_blocked_ms``, ``others_ran_ms``), the
        1-minute load, and the app's code on every thread's stack 60 % of ``bound`` into the worst gap."""
        g = self.gaps()
        if len(g) == 0:
            return {"beats": len(self.times)}
        # what the app did in each gap: the UI thread ran (its own work), or it was blocked while another of the
        # app's threads ran (holding the GIL, at most as long as they ran together). The UI thread's own wait for
        # a CPU, and its blocked time while no other thread of the app ran (the GIL holder itself waiting for a
        # CPU, or nobody running at all) are the machine's load, not the app's doing.
        ran_ui = np.array([1e-9 * (r1 - r0) for r0, r1 in zip(self.ran, self.ran[1:])])
        wait_ui = np.array([1e-9 * (w1.get(self._ui, 0) - w0.get(self._ui, 0))
                            for w0, w1 in zip(self.waits, self.waits[1:])])
        others = np.array([1e-9 * sum(r1[t] - r0[t] for t in r1.keys() & r0.keys() if t != self._ui)
                           for r0, r1 in zip(self.runs, self.runs[1:])])
        blocked = np.maximum(0.0, g - ran_ui - wait_ui)
        held = np.minimum(g, ran_ui + np.minimum(blocked, others))
        i = int(held.argmax())
        where = "\n".join(f"Thread {tid}:" + "".join(f"\n  {f}:{n} in {fn}" for f, n, fn in stack if "classmap_gui" in f)
                          for tid, stack in self.stacks.get(i, {}).items()) or "(no stack taken)"
        ms = lambda v: round(1000 * float(v), 1)  # noqa: E731
        return {"beats": len(self.times), "longest_gap_ms": ms(g.max()), "p99_gap_ms": ms(np.percentile(g, 99)),
                "app_held_ms": ms(held[i]), "worst_gap_ms": ms(g[i]), "ui_ran_ms": ms(ran_ui[i]),
                "ui_waited_for_cpu_ms": ms(wait_ui[i]), "ui_blocked_ms": ms(blocked[i]), "others_ran_ms": ms(others[i]),
                "load_1min": round(os.getloadavg()[0], 2), "thread_waits_ms": self._per_thread(self.waits, i),
                "thread_runs_ms": self._per_thread(self.runs, i), "stacks": where}

    def check(self, name: str, bound: float | None = None) -> dict:
        """The timer kept firing while the work ran, and the app never held the window up longer than ``bound``
        seconds (default: this heartbeat's); prints and returns :meth:`summary`."""
        bound = self.bound if bound is None else bound
        s = self.summary()
        assert s["beats"] > 20, f"{name}: the UI timer beat only {s['beats']} times"
        print(f"{name}: {s['beats']} beats, longest gap {s['longest_gap_ms']:.0f} ms, 99th percentile "
              f"{s['p99_gap_ms']:.0f} ms, load {s['load_1min']:.1f}; the longest the app caused {s['app_held_ms']:.0f} ms "
              f"(of {s['worst_gap_ms']:.0f} ms: the UI thread ran {s['ui_ran_ms']:.0f} ms, waited "
              f"{s['ui_waited_for_cpu_ms']:.0f} ms for a CPU, was blocked {s['ui_blocked_ms']:.0f} ms while the others "
              f"ran {s['others_ran_ms']:.0f} ms; each thread's wait, ms: {s['thread_waits_ms']}, time on a CPU: "
              f"{s['thread_runs_ms']})\n{s['stacks']}")
        assert s["app_held_ms"] <= 1000 * bound, \
            f"{name}: the window froze for {s['worst_gap_ms']:.0f} ms; every thread 60 ms into it:\n{s['stacks']}"
        return s


@contextmanager
def busy_cpu():
    """A process spinning on every core (it forks one spinner per core) while the block runs: its own process
    group (to end it and its spinners), this process's session (scheduled against the app's threads)."""
    spin = "import os\nfor _ in range(os.cpu_count() - 1):\n    if os.fork() == 0: break\nwhile True: pass\n"
    proc = subprocess.Popen([sys.executable, "-c", spin], process_group=0)
    time.sleep(0.3)  # the spinners are running before the work starts
    try:
        yield proc
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the spinners are the group this started
        proc.wait()
