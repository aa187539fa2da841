"""The scan classifies every frame's windows as one ClassMap batch: one filter call and one grouped
refine over all the windows (the kernels ``ClassMap.predict_result`` runs for a batch), not per window."""
from __future__ import annotations

from classmap_gui.core.classify.kernels import batch as batch_kernels
from classmap_gui.core.classify.classmap import predict as classmap_predict
from classmap_gui.core.classify.filters.base import FilterIndex
from classmap_gui.core.data.hand_video import find_hand_frames
from classmap_gui.core.detect.scanner import Scanner


def test_every_frames_windows_are_one_batch_through_the_grouped_refine(hand_detector, detector_poses, monkeypatch):
    frame = next(iter(find_hand_frames(poses=detector_poses, hold=0.4, move=0.2, seed=5)))[0]
    calls = {"filter": [], "refine": []}
    search = FilterIndex.search
    refine = batch_kernels.refine_ova_batch

    def spy_filter(self, F, *args, **kw):
        calls["filter"].append(len(F))
        return search(self, F, *args, **kw)

    def spy_refine(X, *args):
        calls["refine"].append(len(X))
        return refine(X, *args)

    monkeypatch.setattr(FilterIndex, "search", spy_filter)
    monkeypatch.setattr(classmap_predict.BK, "refine_ova_batch", spy_refine)
    sc = Scanner(hand_detector, "classmap")
    calls["filter"].clear()
    calls["refine"].clear()
    r = sc.scan(frame)
    assert r.windows > 500
    assert calls == {"filter": [r.windows], "refine": [r.windows]}
