"""The Train panel's speed column: every feature map of the registry with its milliseconds per image and its
live frames/s on this computer (:mod:`..feature_speed`), and a warning when the chosen one cannot keep up
with a camera. Measured in a worker thread (never on the UI thread), cached between runs, and only while the
Train panel is on screen.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGroupBox, QHeaderView, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout

from .. import feature_speed as fs

SLOW = QColor("#9a3412")


class SpeedColumn(QGroupBox):
    """``set_format(image_size, colour)`` the project's images; ``set_choice(name, params)`` the feature map
    shown in the form (its row is measured with those settings, the others with their defaults)."""

    def __init__(self, names, parent=None):
        super().__init__("Speed of each feature map on this computer", parent)
        self.names = list(names)  # the registry's feature maps, in the drop-down's order
        self.table = QTableWidget(len(self.names), 3)
        # one frame's time and the frames/s it makes (1000 / ms): the two columns read the same measurement
        self.table.setHorizontalHeaderLabels(["feature map", "ms / frame", "live frames/s"])
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        for c in (1, 2):
            self.table.horizontalHeader().setSectionResizeMode(c, QHeaderView.ResizeToContents)
        self.table.setEditTriggers(QTableWidget.NoEditTriggers)
        self.table.setSelectionMode(QTableWidget.NoSelection)
        self.table.setFocusPolicy(Qt.NoFocus)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.setFixedHeight(26 + 22 * len(self.names))
        for r, n in enumerate(self.names):
            self.table.setItem(r, 0, QTableWidgetItem(n))
            for c in (1, 2):
                self.table.setItem(r, c, QTableWidgetItem("…"))
        self.note = QLabel(f"Measured here with random images of the project's size; a camera delivers about "
                           f"{fs.CAMERA_FPS:.0f} frames/s.")
        self.note.setWordWrap(True)
        self.note.setStyleSheet("QLabel { color: #5a5f64; }")
        self.warning = QLabel("")
        self.warning.setWordWrap(True)
        self.warning.setStyleSheet("QLabel { background: #fff4d6; color: #5c4400; padding: 4px; }")
        self.warning.hide()
        lay = QVBoxLayout(self)
        lay.addWidget(self.table)
        lay.addWidget(self.warning)
        lay.addWidget(self.note)
        self.image_size, self.colour = None, False
        self.choice, self.params = (self.names[0] if self.names else None), {}
        self.results: dict[str, dict] = {}   # feature name -> the measurement shown in its row
        self._pool: ThreadPoolExecutor | None = None
        self._pending = None                 # (key, name, future)
        self._stopping = False
        self._timer = QTimer(self)
        self._timer.setInterval(60)
        self._timer.timeout.connect(self._poll)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(400)
        self._debounce.timeout.connect(self._next)

    # -- what to measure
    def set_format(self, image_size, colour: bool) -> None:
        """The project's image format (None: no images yet, nothing is measured)."""
        fmt = (tuple(int(v) for v in image_size), bool(colour)) if image_size is not None else (None, False)
        if fmt != (self.image_size, self.colour):
            self.image_size, self.colour = fmt
            self.results.clear()
            self._schedule()

    def set_choice(self, name: str, params: dict) -> None:
        """The feature map chosen in the form and its settings."""
        if (name, params) != (self.choice, self.params):
            self.choice, self.params = name, dict(params or {})
            self.results.pop(name, None)
            self._schedule()

    def _settings(self, name: str) -> dict:
        return self.params if name == self.choice else {}

    def _key(self, name: str) -> str:
        return fs.cache_key(name, self._settings(name), self.image_size, self.colour)

    # -- measuring, off the UI thread
    def showEvent(self, event) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        self._schedule()

    def _schedule(self) -> None:
        self._show_rows()
        if self.image_size is not None and self.isVisible():
            self._debounce.start()

    def _next(self) -> None:
        """Measure the next row without a figure (the chosen one first); cached figures are shown at once."""
        if self._pending is not None or self.image_size is None or not self.isVisible() or self._stopping:
            return
        cache = fs.load_cache()
        for name in [self.choice] + [n for n in self.names if n != self.choice]:
            if name in self.results:
                continue
            key = self._key(name)
            if key in cache:
                self.results[name] = cache[key]
                continue
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="feature-speed")
            future = self._pool.submit(fs.measure, name, self._settings(name), self.image_size, self.colour,
                                       lambda: self._stopping)
            self._pending = (key, name, future)
            self._timer.start()
            break
        self._show_rows()

    def _poll(self) -> None:
        if self._pending is None:
            self._timer.stop()
            return
        key, name, future = self._pending
        if not future.done():
            return
        self._pending = None
        self._timer.stop()
        result = future.result()
        if "error" not in result:
            fs.save_cache(key, result)
        if key == self._key(name):  # still the setting shown (it may have changed while measuring)
            self.results[name] = result
        self._next()

    @property
    def busy(self) -> bool:
        """True while a measurement runs or waits to start."""
        return self._pending is not None or self._debounce.isActive()

    def shutdown(self) -> None:
        """Stop measuring (the window closes); returns at once."""
        self._stopping = True
        self._debounce.stop()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    # -- the view
    def _show_rows(self) -> None:
        for r, name in enumerate(self.names):
            res = self.results.get(name)
            bold = name == self.choice
            for c in range(3):
                item = self.table.item(r, c)
                f = item.font()
                f.setBold(bold)
                item.setFont(f)
            ms, fps = self.table.item(r, 1), self.table.item(r, 2)
            if self.image_size is None:
                ms.setText("–")
                fps.setText("–")
            elif res is None:
                ms.setText("…")
                fps.setText("measuring…" if self._pending is not None and self._pending[1] == name else "…")
            elif "error" in res:
                ms.setText("–")
                fps.setText("cannot run")
                fps.setToolTip(res["error"])
            else:
                ms.setText(f"{res['ms_live']:.1f}" if res["ms_live"] >= 0.1 else "< 0.1")
                ms.setToolTip(f"one frame at a time, as the Run panel reads; in a batch (training): "
                              f"{res['ms_image']:.2f} ms an image")
                fps.setText(f"{res['fps']:.0f}" if res["fps"] < 1000 else "> 1000")
                slow = not fs.keeps_up(res)
                fps.setForeground(SLOW if slow else QColor("#1a7f37"))
                fps.setToolTip(f"one frame: {res['ms_live']:.1f} ms" + (" — slower than a camera" if slow else ""))
        res = self.results.get(self.choice)
        if res is not None and not fs.keeps_up(res):
            size = "x".join(str(v) for v in self.image_size)
            self.warning.setText(f"⚠ {self.choice} with these settings reads about {res['fps']:.1f} frames/s on this "
                                 f"computer ({res['ms_live']:.0f} ms a frame at {size}): live reading on the Run "
                                 f"panel cannot keep up with a {fs.CAMERA_FPS:.0f} frames/s camera. A faster "
                                 "feature map above, or fewer centroids / a larger stride, reads every frame.")
            self.warning.show()
        else:
            self.warning.hide()


__all__ = ["SpeedColumn"]
