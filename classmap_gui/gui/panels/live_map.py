"""The live map: the Run panel's current frame seen through filter-and-refine, on the Explore map.

While the Run panel streams, each frame it shows is published on the project's headless live stream
(:class:`~classmap_gui.core.explore.live_stream.LiveStream`, ``project.live``) and offered here; a worker thread hands the newest one
to :class:`~classmap_gui.core.explore.live_map.LiveAnalyser` (all computation in core) and this box only draws
the :class:`~classmap_gui.core.explore.live_map.LiveFrame`: the query's marker, its p filter candidates ringed,
the refined winner and the true class marked, a trail of recent frames on the Explore map; beside it
the frame, the k-means patches that drive its feature, the filter's list with L1 distances and refined
scores, and the running histogram of the true class's rank (:mod:`.live_overlay` draws on the map).
Frames that arrive while one is being analysed or drawn replace each other: the stream never waits.
"""
from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (QCheckBox, QGraphicsItem, QGroupBox, QHBoxLayout, QHeaderView, QLabel,
                               QTableWidget, QTableWidgetItem, QVBoxLayout)

from ...core.explore.live_map import LiveAnalyser
from ...core.explore.live_truth import DEMO_VIDEO_NAME, source_truth
from ..imageutil import to_pixmap
from .live_overlay import LiveOverlay

#: live updates per second at most: the demo video's own rate; more would only take time from the window
MAX_RATE = 15.0
#: what the rank line says before any frame came
NO_FRAMES = "No frames yet: press Start on the Run panel."
START = "Start a source on the Run panel to see its frames here."

HELP = ("<b>Live: the Run panel's frames on this map.</b> Start a source on the Run panel; while this tab is "
        "open every frame it shows lands here as a yellow marker (a trail of the last frames behind it). Orange rings: the p "
        "classes the cheap filter kept (nearest in the embedding's L1); green star ring: the class the "
        "refine chose among them; blue square: the true class, when the source is labelled (the demo "
        "video, or image folders named like classes). The list gives the p candidates in filter order with "
        "their L1 distance and refined score; the histogram counts where the true class stood in the "
        "filter's full ordering (bars past p: the filter dropped it, no refine can recover it).<br>"
        "<i>Where the marker goes:</i> a t-SNE map has no place for new points, so a frame sits on the star of "
        "its nearest class in the embedding (of the rules tried, the most faithful). On a t-SNE map of "
        "hand-pose about a third of the classes nearest the marker on the map are among the frame's nearest "
        "in the embedding (on PCA an eighth; docs/explore-map.md): the other candidates are scattered over "
        "the map, so read the rings, not the marker's surroundings.")


class _Worker(QObject):
    """Analyses the newest offered frame on a daemon thread; ``ready(crop, LiveFrame)`` on the UI thread."""

    ready = Signal(object, object)

    def __init__(self, analyser: LiveAnalyser):
        super().__init__()
        self.analyser = analyser
        self._job = None
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._free = threading.Event()  # the last result has been drawn
        self._free.set()
        self._stop = threading.Event()
        self.failed: str | None = None
        self.thread = threading.Thread(target=self._loop, name="live-map", daemon=True)
        self.thread.start()

    def offer(self, crop: np.ndarray, truth: int, features: np.ndarray | None = None) -> None:
        """Analyse ``crop`` next (replacing a frame still waiting); ``features``: its features when known."""
        with self._lock:
            self._job = (crop, truth, features)
        self._wake.set()

    def drawn(self) -> None:
        """The UI has drawn the last result: the next frame may be analysed."""
        self._free.set()

    def stop(self) -> None:
        """End the thread after the frame in hand (never waited for)."""
        self._stop.set()
        self._wake.set()
        self._free.set()

    def _loop(self) -> None:
        last = 0.0
        while not self._stop.is_set():
            self._wake.wait()
            self._free.wait()
            self._stop.wait(max(0.0, last + 1.0 / MAX_RATE - time.perf_counter()))
            last = time.perf_counter()
            with self._lock:
                job, self._job = self._job, None
                self._wake.clear()
            if job is None or self._stop.is_set():
                continue
            try:
                frame = self.analyser.analyse(*job)
            except Exception as exc:  # noqa: BLE001 - a failing model must not end the app; say it once
                self.failed = str(exc)
                return
            self._free.clear()
            self.ready.emit(job[0], frame)


class LiveMapBox(QGroupBox):
    """The Explore panel's live box over ``map`` (a :class:`~.explore_map.MapPlot`), subscribed to the frames
    published on ``project.live`` (the Run panel publishes them; the two panels never see each other)."""

    def __init__(self, project, map_plot, parent=None):
        super().__init__("Live: the Run panel's current frame", parent)
        self.project, self.map = project, map_plot
        self.overlay = LiveOverlay(map_plot.plot)
        # when only the live marks move, the thousands of stars and dots are drawn from a cached picture
        # (2430 classes + 2430 dots, loaded machine: a repaint 8 ms instead of 35 ms, median)
        for item in (map_plot.stars, map_plot.dots):
            item.setCacheMode(QGraphicsItem.DeviceCoordinateCache)
        self.worker: _Worker | None = None
        self.truth = None
        self._session = 0   # the live stream session the worker was set up for
        self.updates = 0
        self.last = None

        self.on = QCheckBox("Show frames")
        self.on.setChecked(True)
        self.on.setToolTip("Place each frame the Run panel shows on the map (off: the stream runs alone)")
        self.on.toggled.connect(lambda v: (self.overlay.clear(), self._halt()) if not v else None)
        self.follow = QCheckBox("Follow")
        self.follow.setChecked(True)
        self.follow.setToolTip("Keep the frame's marker in view (off: the view stays where you put it)")
        self.help = QLabel("?")
        self.help.setToolTip(HELP)
        self.help.setStyleSheet("QLabel { font-weight: bold; color: #2060a0; padding: 0 6px; }")
        self.frame_view = QLabel()
        self.frame_view.setFixedSize(84, 84)
        self.frame_view.setAlignment(Qt.AlignCenter)
        self.frame_view.setStyleSheet("QLabel { background: #202428; }")
        self.patches = QLabel()
        self.patches.setAlignment(Qt.AlignLeft | Qt.AlignVCenter)
        self.patches.setWordWrap(True)
        self.status = QLabel(START)
        self.status.setWordWrap(True)
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["#", "candidate", "L1", "refined (place)"])
        self.table.setToolTip("The p classes the filter kept, nearest first (L1 distance in the embedding), with "
                              "each one's classifier score after refine and its place in the refine's order")
        # fixed widths from the widest text: resizing to contents on every frame costs 0.3 ms a cell
        fm = self.table.fontMetrics()
        for col, widest in ((0, "000"), (2, "000.00"), (3, "refined (place)")):
            self.table.horizontalHeader().setSectionResizeMode(col, QHeaderView.Fixed)
            self.table.setColumnWidth(col, fm.horizontalAdvance(widest) + 14)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.Stretch)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.NoEditTriggers)
        self.table.setTextElideMode(Qt.ElideRight)  # class names read shape first: drop the end (full name: tooltip)
        self.rank_label = QLabel("")
        self.rank_label.setWordWrap(True)
        self.rank_label.setMinimumHeight(3 * self.rank_label.fontMetrics().lineSpacing() + 4)
        self.hist = pg.PlotWidget(background="w")
        self.hist.setMenuEnabled(False)
        self.hist.hideButtons()
        self.hist.setMouseEnabled(False, False)
        self.hist.setLabel("bottom", "rank of the true class in the filter's ordering")
        self.hist.setLabel("left", "frames")
        self.hist.setMinimumHeight(120)
        self.kept_bars = pg.BarGraphItem(x=[], height=[], width=0.8, brush=(31, 119, 180))
        self.lost_bars = pg.BarGraphItem(x=[], height=[], width=0.8, brush=(200, 30, 30))
        self.hist.addItem(self.kept_bars)
        self.hist.addItem(self.lost_bars)
        self.hist.hide()  # drawn once there is a labelled frame: empty axes read as a histogram of nothing
        self.rank_label.setText(NO_FRAMES)

        top = QHBoxLayout()
        top.addWidget(self.on)
        top.addWidget(self.follow)
        top.addStretch(1)
        top.addWidget(self.help)
        beside = QVBoxLayout()
        beside.addWidget(self.status)
        beside.addWidget(self.patches)
        beside.addStretch(1)
        pics = QHBoxLayout()
        pics.addWidget(self.frame_view, 0, Qt.AlignTop)
        pics.addLayout(beside, 1)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addLayout(pics)
        lay.addWidget(self.table, 3)
        lay.addWidget(self.rank_label)
        lay.addWidget(self.hist, 2)
        project.modelChanged.connect(self._model_changed)
        project.live.frame.connect(self.offer)

    # ------------------------------------------------------------------ input
    def offer(self, crop, result, name: str, frames_read: int) -> None:
        """One frame published on the live stream: analysed in the background when the previous one is drawn,
        while this box is on screen (on another tab it would only take time from the stream). The features the
        stream computed for it are re-used (the analyser's recogniser's own)."""
        if not self.on.isChecked() or crop is None or not self.isVisible():
            return
        session = self.project.live.session
        if self.worker is None or session != self._session:
            if not self._new_stream(session):
                return
        an = self.worker.analyser
        C = len(an.classes)
        an.class_xy = self.map.Y[:C] if self.map.Y is not None and self.map.n_classes == C else None
        X = getattr(result, "features", None) if getattr(result, "recogniser", None) is an.recogniser else None
        self.worker.offer(crop, self.truth(frames_read, name) if self.truth is not None else -1, X)

    def _new_stream(self, session: int) -> bool:
        rec = self.project.recogniser
        if rec is None or getattr(rec, "classmap", None) is None:
            self.status.setText("The live map needs a recogniser trained with ClassMap.")
            return False
        if self.worker is None:
            self.worker = _Worker(LiveAnalyser(rec))
            self.worker.ready.connect(self._draw)
            self.destroyed.connect(self.worker.stop)  # a box deleted without its window closing
        self.worker.analyser.reset()
        self._session = session
        source = self.project.live.source
        self.truth = source_truth(source, rec.class_names)
        self._demo_source = isinstance(source, (str, Path)) and Path(str(source)).name == DEMO_VIDEO_NAME
        self.overlay.clear()
        self.updates = 0
        return True

    def shutdown(self) -> None:
        """The window closes: end the worker's thread (it would otherwise wait for frames forever)."""
        self._halt()

    def _halt(self) -> None:
        if self.worker is not None:
            self.worker.stop()
        self.worker, self._session = None, 0

    def _model_changed(self) -> None:
        self._halt()
        self.overlay.clear()
        self.table.setRowCount(0)
        self.kept_bars.setOpts(x=[], height=[])
        self.lost_bars.setOpts(x=[], height=[])
        self.hist.hide()
        self.rank_label.setText(NO_FRAMES)
        self.patches.clear()
        self.frame_view.clear()
        self.status.setText(START)  # no "Recognised as …" of the last model's frame

    # ------------------------------------------------------------------ drawing
    def _draw(self, crop, fr) -> None:
        worker = self.worker
        if worker is None or self.sender() is not worker:
            return
        names = self.project.class_names
        name = (lambda c: names[c] if 0 <= c < len(names) else str(c))  # noqa: E731 - a one-line lookup beside its uses
        try:
            self.last = fr
            if fr.position is None:
                self.status.setText("Press Compute views above to see the frames on the map.")
            else:
                C = self.map.n_classes
                Y = self.map.Y[:C]
                self.overlay.show(fr.position, Y[fr.candidates], Y[fr.winner],
                                  Y[fr.truth] if fr.truth >= 0 else None)
                if self.follow.isChecked():
                    self.overlay.follow(fr.position)
                self.status.setText(f"Recognised as <b>{name(fr.winner)}</b> (analysed in {1000 * fr.seconds:.0f} ms)")
            self.frame_view.setPixmap(to_pixmap(crop, 80))
        except BaseException:
            worker.drawn()
            raise
        # the list, the histogram and the patches on the next turn of the event loop: the map's marker is painted
        # first and the window gets a turn between the two paints (one piece held the UI thread ~100 ms)
        QTimer.singleShot(0, lambda: self._draw_rest(worker, fr, name))

    def _draw_rest(self, worker, fr, name) -> None:
        try:
            if worker is not self.worker:
                return
            self._draw_list(fr, name)
            self._draw_rank(fr, name)
            if fr.patch_image is not None:
                pm = to_pixmap(fr.patch_image)
                self.patches.setPixmap(pm)
                self.patches.setToolTip("The k-means centroids whose responses make up most of this frame's "
                                        "feature, strongest first: " + ", ".join(
                                            f"#{int(i)} {100 * s:.0f}%" for i, s in zip(fr.patches, fr.patch_share)))
            self.updates += 1  # a frame counts once all of it is drawn
        finally:
            worker.drawn()

    def _draw_list(self, fr, name) -> None:
        t = self.table
        if t.rowCount() != len(fr.candidates):
            t.setRowCount(len(fr.candidates))
        bold = QFont()
        bold.setBold(True)
        plain = QFont()
        win_bg, none_bg = QBrush(QColor(200, 235, 205)), QBrush()
        rows = zip(fr.candidates.tolist(), fr.distances.tolist(), fr.scores.tolist(), fr.refine_rank.tolist())
        for r, (c, d, s, k) in enumerate(rows):
            texts = (str(r + 1), name(c) + ("  ✓ true" if c == fr.truth else ""), f"{d:.2f}",
                     "–" if not np.isfinite(s) else f"{s:.3f} ({k})")
            win = c == fr.winner
            for col, text in enumerate(texts):
                item = t.item(r, col)
                if item is None:
                    item = QTableWidgetItem()
                    t.setItem(r, col, item)
                item.setText(text)
                if col == 1:
                    item.setToolTip(text)
                item.setFont(bold if win else plain)
                item.setBackground(win_bg if win else none_bg)

    def _draw_rank(self, fr, name) -> None:
        counts = fr.tally
        p = len(counts) - 1
        n = int(counts.sum())
        self.kept_bars.setOpts(x=np.arange(1, p + 1), height=counts[:p])
        self.lost_bars.setOpts(x=[p + 1.5], height=[counts[p]])
        if fr.rank > 0:
            where = (f"<b>rank {fr.rank}</b> of {len(self.worker.analyser.classes)}" +
                     (" (kept)" if fr.rank <= p else " — <b>the filter dropped it</b>"))
            now = f"True class: {where}."
        elif self.truth is None and getattr(self, "_demo_source", False):
            now = "The demo video's poses are not classes of this model, so there is no true class to rank."
        elif self.truth is None:
            now = "This source has no labels (the demo video and folders named like classes have), so no rank."
        else:
            now = "This frame has no known class (the hand is between poses)."
        recall = f" Over {n} labelled frames: {100 * counts[:p].sum() / n:.0f}% within the first {p} " \
                 f"(recall at p), {100 * counts[0] / n:.0f}% first." if n else ""
        self.hist.setVisible(n > 0)
        self.rank_label.setText(now + recall)
