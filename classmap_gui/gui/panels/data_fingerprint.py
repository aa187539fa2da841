"""The open image set's fingerprint (:func:`...core.project.runs.data_version`), hashed off the GUI thread: the
Runs table marks runs trained on other data with it. 0.5 s for 150 MB of images at load 10, so it is computed once
per edit on one worker thread (blake2b releases the GIL on large buffers) and the caller is told when it is ready."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from PySide6.QtCore import QTimer


class DataFingerprint:
    """``version(ims, ready)``: the fingerprint of image set ``ims`` if known, else None and ``ready()`` is called on
    the GUI thread once it is (a newer request supersedes an older one); ``known(ims, version)`` records one computed
    elsewhere (a training computes it too)."""

    def __init__(self):
        self._of, self._version = None, None
        self._hashing = None               # (image set, future) being fingerprinted
        self._pool: ThreadPoolExecutor | None = None

    def known(self, ims, version: str) -> None:
        self._of, self._version = ims, version

    def version(self, ims, ready: Callable[[], None]) -> str | None:
        if self._of is ims:
            return self._version
        if self._hashing is not None and self._hashing[0] is ims:
            return None
        from ...core.project.runs import data_version
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="data-version")
        future = self._pool.submit(data_version, ims)
        self._hashing = (ims, future)

        def check() -> None:
            if self._hashing is None or self._hashing[1] is not future:
                return
            if not future.done():
                QTimer.singleShot(50, check)
                return
            self._hashing = None
            if future.exception() is None:
                self.known(ims, future.result())
                ready()
        QTimer.singleShot(50, check)
        return None
