"""Waiting on the Qt event loop from scripts (self-test, screenshots) without a test framework."""
from __future__ import annotations

import time


def wait_until(app, cond, timeout: float = 600.0) -> bool:
    """Process events until ``cond()`` is true (True) or ``timeout`` seconds pass (False)."""
    from PySide6.QtCore import QEventLoop

    t0 = time.monotonic()
    while not cond():
        if time.monotonic() - t0 > timeout:
            return False
        app.processEvents(QEventLoop.AllEvents, 50)
        time.sleep(0.01)
    return True


def settle(app, seconds: float = 0.3) -> None:
    """Let the window draw for ``seconds``."""
    wait_until(app, lambda: False, timeout=seconds)
