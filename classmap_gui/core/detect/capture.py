"""The Run panel's capture box, read as one crop a frame (no scan), and when it reads "no hand".

The Run panel (and ``bench demo-reading``) cuts the centred square of each frame (:func:`square_region`: its
slider's fraction of the shorter side), puts a border around it for a window network (its edge repeated:
:func:`capture_context`) and reads the recogniser's ``top`` candidates (:func:`capture_candidates`, then :class:`.reading.CropReading`). A hand that fills the box is
framed larger than the hands in the windows the network learned from, and the network head's background class
can outscore every hand class on it: the shipped demo video read "no hand" in 51 of its posed frames. The
background class therefore wins only when its score beats the best hand candidate's by ``no_hand_margin``
(``metadata["detection"]["reading"]``; 0 in models built before it), chosen by :func:`choose_capture` on
validation videos in the demo's style (:func:`..data.hand_video.demo_frames` of their own seeds, the key poses
drawn from all 2430 classes): the margin with the best balanced accuracy between the frames with a hand in the
box (held or moving) and the empty scenes between takes, over both methods' candidates (their mean; ties: the
middle of the best run of margins). The reader compares softmax probabilities; at the low temperatures the
hand models choose (the head's logits spread over tens) that is the comparison of scores the margin is chosen on.
The same videos choose, first, the border a window network reads the box with (``capture_context``, its edge
repeated: the network learned windows with their surroundings, and a hand that fills the box reads best with a
narrower border than the network's own), and calibrate when the capture box's reading is shown as "sure"
(``capture_unsure_below``): its readings are not the scan's (the Find the hand panel's ``unsure_below``), so they
have their own threshold.
"""
from __future__ import annotations

import numpy as np

from ..progress import ProgressFn, StopFn, check_stop, report

#: the Run panel's defaults the margin is chosen at: the capture box (its slider, a fraction of the shorter side)
#: and the candidates per frame (its top spin box)
REGION, TOP = 1.0, 5
METHODS = ("classmap", "brute_force")


def square_region(shape: tuple[int, ...], fraction: float) -> tuple[int, int, int]:
    """The centred square ``(x, y, side)`` covering ``fraction`` of the frame's shorter side."""
    h, w = shape[:2]
    side = max(8, int(round(min(h, w) * min(1.0, max(0.05, fraction)))))
    return (w - side) // 2, (h - side) // 2, side


def capture_crop(frame: np.ndarray, region: float = REGION) -> np.ndarray:
    """The capture box of ``frame`` (:func:`square_region`), a contiguous copy."""
    x, y, s = square_region(frame.shape, region)
    return np.ascontiguousarray(frame[y:y + s, x:x + s])


def capture_context(rec) -> float:
    """The border put around the capture box before a window network reads it, a fraction of its side: the
    model's ``capture_context`` (chosen by the build, :func:`choose_capture`), else its network's own window
    context (0 for other feature maps)."""
    from ..settings.hand import model_detection

    chosen = (model_detection(rec).get("reading") or {}).get("capture_context")
    network = float(getattr(rec.features, "context_", 0.0))
    return network if chosen is None or not network else float(chosen)


def capture_candidates(rec, crops, top: int = TOP, batch: int = 64, progress: ProgressFn = None,
                       should_stop: StopFn = None, context: float | None = None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``{"classmap": (classes, scores), "brute_force": ..., "brute_force_hands": ...}``, ``(F, top)`` each: the
    candidates of each capture-box crop by the Run panel's steps (prepare, features, predict: the model's
    ClassMap when it has one), by every classifier (where the ClassMap filter loses the right class, the two
    differ), and by every hand class (the background class left out, as the scan's reader reads a hand); each crop
    with the border ``context`` around it (None: the model's, :func:`capture_context`)."""
    from ..classify.banks.base import top_k
    from ..data.imageset import BACKGROUND_CLASS
    from .window_crops import with_context

    context = capture_context(rec) if context is None else float(context)
    out: dict[str, list] = {"classmap": [], "brute_force": [], "brute_force_hands": []}
    hands = np.asarray([n != BACKGROUND_CLASS for n in rec.class_names])
    for s in range(0, len(crops), batch):
        check_stop(should_stop)
        X = rec.transform(rec.prepare([with_context(c, context) for c in crops[s:s + batch]]))
        pred = rec.predict_features(X, top=top)
        out["classmap"].append((np.asarray(pred.top_classes), np.asarray(pred.top_scores, np.float64)))
        S = rec.classifier.decision_function(np.asarray(X, np.float32))
        idx, vals = top_k(S, top)
        out["brute_force"].append((np.asarray(idx), np.asarray(vals, np.float64)))
        idx, vals = top_k(np.where(hands, S, -np.inf), top)
        out["brute_force_hands"].append((np.asarray(idx), np.asarray(vals, np.float64)))
        report(progress, min(1.0, (s + batch) / len(crops)), f"reading frames {min(s + batch, len(crops))}/{len(crops)}")
    return {k: (np.concatenate([c for c, _ in v]), np.concatenate([x for _, x in v])) for k, v in out.items()}


def background_lead(class_names, classes: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """``(F,)``: by how much the background class's score beats the best hand candidate's in each row of
    ``classes`` / ``scores`` (``(F, top)``); -inf where the background is not a candidate, +inf where only it is."""
    from ..data.imageset import BACKGROUND_CLASS

    is_bg = np.asarray([n == BACKGROUND_CLASS for n in class_names])[np.asarray(classes, np.int64)]
    bg = np.where(is_bg, scores, -np.inf).max(axis=1)
    hand = np.where(is_bg, -np.inf, scores).max(axis=1)
    with np.errstate(invalid="ignore"):
        lead = bg - hand
    return np.where(np.isneginf(hand), np.inf, np.where(np.isneginf(bg), -np.inf, lead))


def best_margin(hand: list[np.ndarray], empty: list[np.ndarray]) -> tuple[float, float, list[float]]:
    """``(margin, balanced accuracy, per-method balanced accuracies)``: the margin ``m`` ("no hand" where the
    background leads by more than ``m``) with the best mean balanced accuracy between the frames with a hand
    (``hand[i]``: their leads by method i; right when the lead is at most ``m``) and without (``empty[i]``: right
    when above ``m``); candidates are the midpoints between consecutive finite leads; ties: the middle one."""
    leads = np.unique(np.concatenate([*hand, *empty]))
    leads = leads[np.isfinite(leads)]
    if len(leads) == 0:
        return 0.0, 0.5, [0.5] * len(hand)
    cand = np.concatenate([[leads[0] - 1.0], 0.5 * (leads[1:] + leads[:-1]), [leads[-1] + 1.0]])

    def bal(h, e):
        return 0.5 * ((h[:, None] <= cand).mean(axis=0) + (e[:, None] > cand).mean(axis=0))

    per = np.array([bal(h, e) for h, e in zip(hand, empty)])
    mean = per.mean(axis=0)
    best = np.flatnonzero(mean >= mean.max() - 1e-12)
    i = int(best[len(best) // 2])
    return float(cand[i]), float(mean[i]), [float(v) for v in per[:, i]]


def capture_temperature(rec, videos, margin: float, temperatures) -> tuple[float, dict]:
    """``(temperature, mean log loss per candidate)``: the softmax temperature of the capture box's reading whose
    shape probabilities (:class:`.reading.CropReading` at ``margin``, each held pose's frame alone, both methods)
    give the true shape the lowest mean log loss over ``videos`` (``(candidates by method, poses)`` each):
    temperature scaling, so that a reading's confidence says how often it is right (ties: the lower)."""
    from .reading import CropReading

    loss = {}
    for t in temperatures:
        total, n = 0.0, 0
        for m in METHODS:
            rd = CropReading(rec, history=1, settings={"temperature": t, "no_hand_margin": margin})
            index = {g: i for i, g in enumerate(rd.group_names)}
            hand = rd.groups >= 0
            for found, poses in videos:
                for c, s, pose in zip(*found[m], poses):
                    if pose is None:
                        continue
                    prob = rd.probabilities(c, s)
                    shape_p = np.bincount(rd.groups[hand], weights=prob[hand], minlength=len(rd.group_names))
                    p = shape_p[index[pose[0]]] if pose[0] in index else 0.0
                    total, n = total - np.log(max(float(p), 1e-9)), n + 1
        loss[f"{float(t):g}"] = total / max(1, n)
    best = min(temperatures, key=lambda t: (loss[f"{float(t):g}"], t))
    return float(best), loss


def choose_context(rec, rendered, contexts, should_stop: StopFn = None) -> tuple[float | None, dict, list]:
    """``(context, accuracy per candidate, the chosen context's candidates per video)``: the border around the
    capture box among ``contexts`` whose reading names the held poses' shapes best over ``rendered`` (``(crops,
    timeline)`` per video; each frame's best hand candidate, both methods, their mean; ties: the nearer the
    network's own context). A model whose features take no context: None, nothing tried."""
    network = float(getattr(rec.features, "context_", 0.0))
    if not network or not contexts:
        return None, {}, [capture_candidates(rec, crops, TOP, should_stop=should_stop) for crops, _ in rendered]
    from ..data.imageset import BACKGROUND_CLASS
    from .reading import shape_groups

    groups, names, _ = shape_groups(rec.class_names)
    bg = np.asarray([n == BACKGROUND_CLASS for n in rec.class_names])
    acc, found = {}, {}
    for c in contexts:
        check_stop(should_stop)
        found[c] = [capture_candidates(rec, crops, TOP, context=c, should_stop=should_stop) for crops, _ in rendered]
        right = {m: [] for m in ("classmap", "brute_force_hands")}
        for got, (_crops, timeline) in zip(found[c], rendered):
            held = [(i, p[0]) for i, (_t, p, _v) in enumerate(timeline) if p is not None]
            for m in right:
                classes = got[m][0]
                for i, shape in held:
                    hand = [k for k in classes[i] if not bg[k]]
                    right[m].append(bool(hand) and names[groups[hand[0]]] == shape)
        acc[f"{float(c):g}"] = float(np.mean([np.mean(v) for v in right.values()]))
    best = max(contexts, key=lambda c: (acc[f"{float(c):g}"], -abs(float(c) - network)))
    return float(best), acc, found[best]


def choose_capture(rec, seeds: list[int], temperatures, contexts=(), progress: ProgressFn = None,
                   should_stop: StopFn = None) -> tuple[dict, dict]:
    """``({"capture_context", "no_hand_margin", "capture_temperature", "capture_unsure_below"}, their selection
    records)``, chosen on the demo-style validation videos of ``seeds`` (none: nothing chosen, ``({}, {})``): the
    border around the box among ``contexts`` (:func:`choose_context`); the background's lead of the module
    docstring; the reading's temperature among ``temperatures`` (:func:`capture_temperature`); then, reading each
    held pose's frame alone at these (both methods), the confidence from which the capture box's readings are right
    >= 95 % of the time (:func:`..selection.policy.sure_from`): the Run panel shows a reading as "sure" from there."""
    from ..data.hand_video import demo_frames, demo_timeline, random_key_poses
    from ..selection.policy import SURE_ACCURACY, grid_edge, record, sure_from
    from .reading import CropReading

    if not seeds:
        return {}, {}
    rendered = []
    for k, seed in enumerate(seeds):
        poses = random_key_poses(int(seed))
        rendered.append(([capture_crop(f) for f, _ in demo_frames(seed=int(seed), poses=poses)],
                         demo_timeline(poses=poses)))
        check_stop(should_stop)
        report(progress, 0.5 * (k + 1) / len(seeds), "capture-box validation videos")
    context, context_acc, found_all = choose_context(rec, rendered, [float(c) for c in contexts], should_stop)
    report(progress, 0.9, "capture-box margin chosen")
    leads = {m: ([], []) for m in METHODS}
    videos = []
    for found, (_crops, timeline) in zip(found_all, rendered):
        in_view = np.array([v for _t, _p, v in timeline])
        for m in METHODS:
            lead = background_lead(rec.class_names, *found[m])
            leads[m][0].append(lead[in_view])
            leads[m][1].append(lead[~in_view])
        videos.append((found, [p for _t, p, _v in timeline]))
    hand = [np.concatenate(leads[m][0]) for m in METHODS]
    empty = [np.concatenate(leads[m][1]) for m in METHODS]
    margin, bal, per = best_margin(hand, empty)
    scores = {"hand_frames": int(len(hand[0])), "empty_frames": int(len(empty[0])), "balanced_accuracy": bal,
              **{m: {"balanced_accuracy": per[i], "hand_read_as_hand": float(np.mean(hand[i] <= margin)),
                     "empty_read_as_no_hand": float(np.mean(empty[i] > margin)),
                     "hand_read_as_hand_at_0": float(np.mean(hand[i] <= 0.0)),
                     "empty_read_as_no_hand_at_0": float(np.mean(empty[i] > 0.0))} for i, m in enumerate(METHODS)}}
    temperature, fits = capture_temperature(rec, videos, margin, temperatures)
    conf, right = [], []
    for m in METHODS:
        reader = CropReading(rec, history=1, settings={"temperature": temperature, "no_hand_margin": margin})
        for found, poses in videos:
            for c, s, pose in zip(*found[m], poses):
                got = reader.read(c, s)
                if pose is not None and got.found:
                    conf.append(got.confidence)
                    right.append(got.shape == pose[0])
    sure, calibration = sure_from(conf, right)
    split = f"demo-style validation videos (seeds {', '.join(map(str, seeds))})"
    edge = grid_edge(temperature, list(temperatures))
    chosen = {"no_hand_margin": margin, "capture_temperature": temperature, "capture_unsure_below": sure}
    records = {}
    if context is not None:
        chosen["capture_context"] = context
        records["capture_context"] = record(
            context, [float(c) for c in contexts], context_acc, split=split,
            by="shape accuracy of each held pose's frame read alone (its best hand candidate, both methods' mean)",
            rule="best; ties: the nearer the network's own window context", at_edge=grid_edge(context, list(contexts)))
    return chosen, {**records,
        "capture_temperature": record(temperature, [float(t) for t in temperatures], fits, split=split,
                                      by="mean log loss of the true shape's probability over the held poses' "
                                         "capture-box readings (each frame alone, both methods, at the chosen margin)",
                                      rule="lowest loss; ties: the lower temperature", at_edge=edge),
        "no_hand_margin": record(margin, ["the midpoints between the validation frames' background leads"], scores,
                                 split=split, by="balanced accuracy of 'no hand' on the Run panel's capture box "
                                 "(frames with a hand in it against the empty scenes)",
                                 rule="best, mean of both methods; ties: the middle of the best margins"),
        "capture_unsure_below": record(sure, ["every confidence a reading had"], calibration, split=split,
                                       by="the lowest confidence from which the capture box's readings of the held "
                                          "poses (each frame alone, both methods, the chosen temperature) name the "
                                          f"shape right >= {SURE_ACCURACY:.0%} of the time; below it the Run panel "
                                          "shows a guess")}


__all__ = ["METHODS", "REGION", "TOP", "background_lead", "best_margin", "capture_candidates", "capture_context",
           "capture_crop", "capture_temperature", "choose_capture", "choose_context", "square_region"]
