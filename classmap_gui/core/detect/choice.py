"""The hand model's scan and reading settings, chosen on validation videos (:func:`choose_scan`).

1. :func:`choose_detection`: window sides, the background and hand-detector weights in a window's score,
   and box voting (:func:`.boxes.vote_box`), by localisation (best box IoU >= 0.5 with the true hand box);
2. the "hand found" threshold on the best window's score, per method, by balanced accuracy between the
   validation videos' frames (a hand in every one) and clutter scenes without a hand (their own seeds);
3. the reader's temperature, history and crops (:mod:`.reading`), by shape accuracy over the key-pose
   frames (a box in the wrong place counting as wrong); the cheaper reading (fewer network re-crops; 0: the
   frame-pass reading of the scan's own windows) wins when it is within the shared operating-point margin of
   the best (:func:`cheapest_reading`);
4. the Run panel's capture box: the border a window network reads it with, when it reads "no hand", and from
   which confidence it is "sure" (:func:`.capture.choose_capture`).

Validation videos: :func:`..data.hand_video.find_hand_frames` of their own seeds (``validation_video_seeds``,
never a test video's), key poses drawn from all 2430 classes (:func:`..data.hand_video.random_key_poses`).
Every candidate is scored by both methods' own responses; one setting serves both, by their mean.
"""
from __future__ import annotations

import cv2
import numpy as np

from ..errors import ConfigError
from ..progress import ProgressFn, StopFn, check_stop, report, sub_progress
from functools import partial

from ..selection.policy import SURE_ACCURACY, TOLERANCE, paired_se, record, sure_from
from ..settings.hand import options
from .capture import choose_capture

#: every choice here is scored on generated validation videos (their own seeds, never a test video's)
selection = partial(record, split="validation videos")


def floats(value, name: str = "option") -> list[float]:
    """The comma-separated numbers of an option (``"10,30,100"``)."""
    try:
        return [float(v) for v in str(value).split(",") if v.strip()]
    except ValueError:
        raise ConfigError(f"{name} expects comma-separated numbers like 10,30,100, got {value!r}") from None


#: the choice's settings (name -> (default, help)), from the one table (:mod:`..settings.hand`); ``bench scan``
#: exposes them as its options
CHOICE_OPTIONS = options("choice")


def validation_video(seed: int, size):
    """The validation (or test) video of ``seed`` at ``size`` (h, w): ``(frame, label, box)`` frames of a hand
    moving through 14 key poses drawn from all 2430 classes."""
    from ..data.hand_video import find_hand_frames, random_key_poses

    return find_hand_frames(size, seed=int(seed), poses=random_key_poses(int(seed)))


def _vote_hits(boxes, score, pair_iou, votes, truth) -> np.ndarray:
    """``(len(votes),) bool``: does the best window's box, voted with each ``(overlap, temperature)``
    (temperature 0: the window itself) by :func:`.boxes.vote_box` as the scanner votes, hit the
    ``truth`` box (x, y, w, h) by IoU >= 0.5? ``pair_iou (n, n)``: the windows' overlaps, computed once."""
    from .boxes import box_ious, vote_box

    j = int(np.argmax(score))
    cand = [boxes[j] if temp == 0 else vote_box(boxes, score, j, ov, temp, ious=pair_iou[j]) for ov, temp in votes]
    return box_ious(np.asarray(cand, np.float64), truth) >= 0.5


def _side_sets(opt: dict) -> list[tuple[float, ...]]:
    """The candidate window-side sets (option ``side_sets``), each a subset of ``sides`` with >= 3 scales."""
    sides = floats(opt["sides"], "sides")
    out = []
    for part in str(opt["side_sets"]).split(";"):
        cand = tuple(floats(part))
        if len(cand) < 3 or any(min(abs(c - v) for v in sides) > 1e-6 for c in cand):
            raise ConfigError(f"bench scan: each side set must hold >= 3 of the sides {opt['sides']}, got {part!r}")
        out.append(cand)
    return out


def _vote_grid(opt: dict) -> list[tuple[float, float]]:
    """The candidate box-voting settings ``(overlap, temperature)``; temperature 0 (no voting) once."""
    temps = floats(opt["vote_temperatures"], "vote_temperatures")
    overlaps = floats(opt["vote_overlaps"], "vote_overlaps")
    if not temps or not overlaps or any(t < 0 for t in temps) or any(not 0 < o <= 1 for o in overlaps):
        raise ConfigError("bench scan: vote_temperatures must be >= 0 and vote_overlaps in (0, 1], "
                          f"got {opt['vote_temperatures']!r} / {opt['vote_overlaps']!r}")
    grid = [(overlaps[0], 0.0)] if 0.0 in temps else []
    return grid + [(o, t) for o in overlaps for t in temps if t > 0]


def choose_detection(rec, opt: dict, should_stop: StopFn = None) -> dict:
    """The window sides (one of ``side_sets``), the background weight (``background_weights``), the hand
    detector's weight (``detector_weights``, when the model has a detector) and box voting
    (``vote_overlaps`` x ``vote_temperatures``) with the best localisation on the validation videos
    (``validation_video_seeds``, every 2nd frame, at the first frame size): their own seeds, never the test
    video. One setting for both methods, by the mean of ClassMap's and brute force's localisation (each
    method's own responses: ClassMap's best-class response is not brute force's). Responses are computed
    once over all ``sides`` and masked per candidate set. Returns :func:`selection` dicts by name."""
    from .boxes import box_ious
    from .scanner import Scanner

    sides = floats(opt["sides"], "sides")
    sets = _side_sets(opt)
    weights = floats(opt["background_weights"], "background_weights")
    has_det = (rec.metadata.get("detection") or {}).get("detector") is not None
    gammas = floats(opt["detector_weights"], "detector_weights") if has_det else [0.0]
    votes = _vote_grid(opt)
    seeds = [int(v) for v in floats(opt["validation_video_seeds"], "validation_video_seeds")]
    w, h = opt["frame_size"]
    methods = ("classmap", "brute_force")
    scanners = {m: Scanner(rec, m, sides=sides) for m in methods}
    boxes = scanners["brute_force"].pyramid.boxes(h, w)
    idx = scanners["brute_force"].pyramid.side_index(h, w)
    which = [np.isin(idx, [min(range(len(sides)), key=lambda j: abs(sides[j] - c)) for c in cand]) for cand in sets]
    # (n, n): the windows' overlaps, for voting (the cascade's windows change per frame: computed there)
    pair_iou = None if scanners["brute_force"].cascade else np.stack([box_ious(boxes, b) for b in boxes])
    grid = [(k, c, g) for k in range(len(sets)) for c in weights for g in gammas]
    hits = {m: np.zeros((len(grid), len(votes))) for m in methods}
    n = 0
    for seed in seeds:
        for i, (frame, _, box) in enumerate(validation_video(seed, (h, w))):
            if i % 2:
                continue
            check_stop(should_stop)
            truth = (box[0], box[1], box[2], box[2])
            n += 1
            for m in methods:
                hand, bg, det, bx = scanners[m].window_scores(frame, parts="all")
                masks, piou = which, pair_iou
                if scanners[m].cascade:  # this frame's detector-picked windows (a side set masks them after the pick)
                    rows = scanners[m].window_index
                    masks, piou = [wk[rows] for wk in which], np.stack([box_ious(bx, b) for b in bx])
                else:
                    bx = boxes
                for a, (k, c, g) in enumerate(grid):
                    score = hand - c * bg if bg is not None else hand
                    if g:
                        score = score + g * det
                    score = np.where(masks[k], score, -np.inf)
                    hits[m][a] += _vote_hits(bx, score, piou, votes, truth)
    loc = {m: hits[m] / max(n, 1) for m in methods}
    mean = 0.5 * (loc["classmap"] + loc["brute_force"])
    # ties: fewer windows (cheaper), then the smaller weights, then no voting / the lower temperature
    a_best, v_best = max(((a, v) for a in range(len(grid)) for v in range(len(votes))),
                         key=lambda av: (mean[av], -int(which[grid[av[0]][0]].sum()), -grid[av[0]][1], -grid[av[0]][2],
                                         -votes[av[1]][1], -votes[av[1]][0]))
    k_best, c_best, g_best = grid[a_best]
    by = (f"localisation on the validation videos (seeds {', '.join(map(str, seeds))}, every 2nd frame), mean of "
          "ClassMap's and brute force's (each with its own responses)")
    at = {m: float(loc[m][a_best, v_best]) for m in methods}

    def row(cond):
        return [(a, v) for a in range(len(grid)) for v in range(len(votes)) if cond(grid[a], votes[v])]

    def best_of(pairs):
        return float(max(mean[p] for p in pairs))

    fmt = ",".join
    sel = {
        "sides": selection([float(v) for v in sets[k_best]], [list(c) for c in sets],
                           {fmt(f"{v:g}" for v in sets[k]): best_of(row(lambda gr, vo, k=k: gr[0] == k))
                            for k in range(len(sets))},
                           by=by + "; each set at its best other settings", frames=n,
                           windows={fmt(f"{v:g}" for v in sets[k]): int(which[k].sum()) for k in range(len(sets))}),
        "background_weight": selection(c_best, weights, {f"{c:g}": float(mean[grid.index((k_best, c, g_best)), v_best])
                                                         for c in weights},
                                       by=by + " at the other chosen settings", frames=n),
        "detector_weight": selection(g_best, gammas, {f"{g:g}": float(mean[grid.index((k_best, c_best, g)), v_best])
                                                      for g in gammas},
                                     by=by + " at the other chosen settings", frames=n,
                                     grid={f"{c:g}/{g:g}": float(mean[grid.index((k_best, c, g)), v_best])
                                           for c in weights for g in gammas}),
        "vote": selection({"overlap": votes[v_best][0], "temperature": votes[v_best][1]},
                          [{"overlap": o, "temperature": t} for o, t in votes],
                          {f"{o:g}/{t:g}": float(mean[a_best, v]) for v, (o, t) in enumerate(votes)},
                          by=by + " at the other chosen settings (temperature 0: no voting)", frames=n,
                          no_voting_best={m: float(loc[m][:, [v for v, (_, t) in enumerate(votes) if t == 0]].max())
                                          for m in methods} if any(t == 0 for _, t in votes) else None),
        "validation_localisation": {"split": "validation", "frames": n, "seeds": seeds, **at},
    }
    return sel


def _no_hand_scenes(n: int, size, seed: int = 0):
    """``n`` grey clutter scenes without a hand (their own random stream)."""
    from ..data.hand_scene import clutter_scene, finish

    h, w = size
    for i in range(int(n)):
        rng = np.random.default_rng([seed, 1201, i])
        yield cv2.cvtColor(finish(clutter_scene(rng, h, w).astype(np.float32), rng), cv2.COLOR_RGB2GRAY)


def _best(result) -> float:
    """The best box's score of a scan (-inf when no window had a hand candidate)."""
    return float(result.scores[0]) if len(result.scores) else -np.inf


def found_threshold(pos: np.ndarray, neg: np.ndarray) -> tuple[float, float]:
    """The threshold on the best window's score with the best balanced accuracy between frames with a hand
    (``pos``) and without (``neg``); ``(threshold, balanced accuracy)``."""
    cand = np.unique(np.concatenate([pos, neg]))
    best = (-np.inf, 0.5)
    for t in cand:
        bal = 0.5 * (np.mean(pos >= t) + np.mean(neg < t))
        if bal > best[1] + 1e-12:
            best = (float(t), float(bal))
    return best


def choose_scan(rec, opt: dict, progress: ProgressFn = None, should_stop: StopFn = None) -> tuple[dict, dict]:
    """Steps 1-4 of the module docstring: ``(settings for metadata["detection"], selection records)``."""
    opt = {**{k: v[0] for k, v in CHOICE_OPTIONS.items()}, **opt}   # "sides": the build's, which the caller adds
    det = choose_detection(rec, opt, should_stop)
    report(progress, 0.5, "scan settings chosen")
    settings = {"sides": det["sides"]["chosen"], "background_weight": det["background_weight"]["chosen"],
                "detector_weight": det["detector_weight"]["chosen"], "vote_overlap": det["vote"]["chosen"]["overlap"],
                "vote_temperature": det["vote"]["chosen"]["temperature"]}
    more, sel = choose_reading(rec, settings, opt, sub_progress(progress, 0.5, 0.9), should_stop)
    seeds = [int(v) for v in floats(opt["capture_video_seeds"], "capture_video_seeds")]
    capture, capture_sel = choose_capture(rec, seeds, floats(opt["temperatures"], "temperatures"),
                                          floats(opt["capture_contexts"], "capture_contexts"),
                                          sub_progress(progress, 0.9, 1.0), should_stop)
    more["reading"].update(capture)
    sel.update(capture_sel)
    settings.update(more)
    return settings, {"sides": det["sides"], "background_weight": det["background_weight"],
                      "detector_weight": det["detector_weight"], "vote": det["vote"],
                      "validation_localisation": det["validation_localisation"], **sel}


def choose_reading(rec, settings: dict, opt: dict, progress: ProgressFn = None,
                   should_stop: StopFn = None) -> tuple[dict, dict]:
    """Steps 2 and 3 of the module docstring, scanning with the detection ``settings``: ``({"found_threshold",
    "reading"}, their selection records)``."""
    from .reading import HandReader, read_probabilities
    from .boxes import iou
    from .scanner import Scanner

    opt = {**{k: v[0] for k, v in CHOICE_OPTIONS.items()}, **opt}
    settings = {k: settings[k] for k in ("sides", "background_weight", "detector_weight", "vote_overlap",
                                         "vote_temperature")}
    w, h = opt["frame_size"]
    methods = ("classmap", "brute_force")
    scanners = {m: Scanner(rec, m, **settings, found_threshold=None) for m in methods}
    readers = {m: HandReader(rec, m, crops=1) for m in methods}
    crops = [int(v) for v in floats(opt["crops"], "crops")]
    temps = floats(opt["temperatures"], "temperatures")
    hists = [int(v) for v in floats(opt["histories"], "histories")]
    seeds = [int(v) for v in floats(opt["reading_video_seeds"], "reading_video_seeds")]
    # every frame of the reading videos: the best score, whether the box hits, and the re-crops' responses
    frames = {m: [] for m in methods}
    for seed in seeds:
        for frame, label, box in validation_video(seed, (h, w)):
            check_stop(should_stop)
            truth = (box[0], box[1], box[2], box[2])
            for m in methods:
                r = scanners[m].scan(frame)
                hit = r.best_box is not None and iou(r.best_box, truth) >= 0.5
                # the reader's own path (HandReader.parts): the most re-crops (fewer are their first ones) and the
                # scan's windows; None where no window held a hand candidate
                parts = (None if r.best_box is None or max(crops) == 0 else readers[m].parts(frame, r, max(crops))[0])
                windows = None if r.best_box is None or 0 not in crops else readers[m].parts(frame, r, 0)
                frames[m].append({"seed": seed, "label": label, "hit": hit, "score": _best(r),
                                  "box": r.best_box, "parts": parts, "windows": windows})
        report(progress, 0.6 * (seeds.index(seed) + 1) / len(seeds), "reader validation videos")
    neg = {m: np.array([_best(scanners[m].scan(g)) for g in _no_hand_scenes(opt["no_hand_frames"], (h, w))])
           for m in methods}
    thresholds, found_sel = {}, {}
    for m in methods:
        pos = np.array([f["score"] for f in frames[m]])
        thresholds[m], bal = found_threshold(pos, neg[m])
        found_sel[m] = {"threshold": thresholds[m], "balanced_accuracy": bal, "hand_frames": int(len(pos)),
                        "no_hand_frames": int(len(neg[m])), "found_in_hand_frames": float(np.mean(pos >= thresholds[m])),
                        "found_in_no_hand_frames": float(np.mean(neg[m] >= thresholds[m]))}
    out = {"found_threshold": thresholds}
    # the reader: every (temperature, history, crops) replayed over the stored responses
    from ..data.hand_pose import class_name

    grid = [(t, hh, c) for t in temps for hh in hists for c in crops]
    right = {m: {} for m in methods}                       # per setting: each key-pose frame read right or not
    for m in methods:
        rd = readers[m]
        truth = [None if f["label"] is None else class_name(*f["label"]) for f in frames[m]]
        for t, hh, c in grid:
            rd.set_history(hh)
            ok = []
            for f, tn in zip(frames[m], truth):
                found = f["box"] is not None and f["score"] >= thresholds[m]
                prob = rd.integrate(frame_probabilities(rd, f, c, t) if found else None, f["box"])
                if tn is None:
                    continue
                got = None if prob is None or not f["hit"] else read_probabilities(prob, rd.groups, rd.group_names,
                                                                                   rd.orient)
                ok.append(got is not None and got.shape is not None and got.shape == tn.partition(" · ")[0])
            right[m][(t, hh, c)] = np.asarray(ok, bool)
    acc = {m: {g: float(right[m][g].mean()) if len(right[m][g]) else 0.0 for g in grid} for m in methods}
    mean = {g: 0.5 * (acc["classmap"][g] + acc["brute_force"][g]) for g in grid}
    best, cheap = cheapest_reading(grid, mean, {g: np.concatenate([right[m][g] for m in methods]) for g in grid})
    out["reading"] = {"temperature": best[0], "history": best[1], "crops": best[2]}
    sure, calibration = sure_threshold(readers, frames, thresholds, best, methods)
    out["reading"]["unsure_below"] = sure
    by = (f"shape accuracy over the key-pose frames of the validation videos (seeds {', '.join(map(str, seeds))}, "
          "every frame; a box in the wrong place counts as wrong), mean of ClassMap's and brute force's")
    sel = {"found_threshold": selection(thresholds, ["every best-window score"], found_sel,
                                        by="balanced accuracy: validation video frames (hand) against clutter scenes "
                                           "(no hand), per method"),
           "reading": selection(out["reading"], [{"temperature": t, "history": hh, "crops": c} for t, hh, c in grid],
                                {f"{t:g}/{hh}/{c}": {"mean": mean[(t, hh, c)], **{m: acc[m][(t, hh, c)] for m in methods}}
                                 for t, hh, c in grid}, by=by,
                                rule=(f"the fewest network re-crops per frame (0: the frame-pass reading, no network "
                                      f"run) whose best setting is within {100 * TOLERANCE:g} points of the best "
                                      "setting's accuracy (the shared operating-point margin; each gap's paired "
                                      "standard error recorded in by_crops); within one crops value the best; ties: "
                                      "shorter history, fewer crops, lower temperature"), by_crops=cheap, tolerance=TOLERANCE),
           "unsure_below": selection(sure, ["every confidence a reading had"], calibration,
                                     by="the lowest confidence from which the readings of the validation videos' key-pose "
                                        f"frames (both methods, the chosen reading settings) name the shape right >= "
                                        f"{SURE_ACCURACY:.0%} of the time; below it a reading is shown as a guess")}
    report(progress, 1.0, "reading chosen")
    return out, sel


def frame_probabilities(rd, f: dict, crops: int, temperature: float) -> np.ndarray:
    """A stored validation frame ``f`` read by ``rd`` (:meth:`.reading.HandReader.probabilities`) with ``crops``
    re-crops (the first of the stored ones) or, with 0, the scan's windows and their votes."""
    if crops == 0:
        parts, weights = f["windows"]
        return rd.probabilities(parts, temperature, weights)
    return rd.probabilities(f["parts"][:crops], temperature)


def _tie_key(g):
    """Prefer the more accurate, then the shorter history, fewer crops, the lower temperature."""
    return -g[1], -g[2], -g[0]


def cheapest_reading(grid: list, mean: dict, right: dict) -> tuple[tuple, dict]:
    """The reader's setting ``(temperature, history, crops)``: per crops value its best setting by ``mean``
    accuracy; of those, the fewest crops (0, the frame-pass reading, is the cheapest: no network run) whose
    accuracy is within :data:`TOLERANCE` (the shared operating-point margin) of the best setting's overall.
    The paired standard error of each gap (``right``: per setting, each read right or not, the same reads in
    the same order) is recorded, not added: the best setting is the maximum of the whole grid (its accuracy is
    flattered by the choice), and on a few hundred reads one standard error (0.5-1.5 points) would refuse even
    an equally accurate cheaper reading. Returns the setting and per crops value ``{setting, accuracy, gap,
    gap_se, within}``."""
    top = max(grid, key=lambda g: (mean[g], *_tie_key(g)))
    per = {}
    for c in sorted({g[2] for g in grid}):
        g = max((x for x in grid if x[2] == c), key=lambda x: (mean[x], *_tie_key(x)))
        gap = mean[top] - mean[g]
        per[c] = {"setting": f"{g[0]:g}/{g[1]}/{g[2]}", "accuracy": mean[g], "gap": gap,
                  "gap_se": paired_se(right[g], right[top]), "within": bool(gap <= TOLERANCE + 1e-12), "_g": g}
    chosen = per[min(c for c, row in per.items() if row["within"])]["_g"]
    return chosen, {str(k): {x: v for x, v in row.items() if x != "_g"} for k, row in per.items()}


def sure_threshold(readers, frames, thresholds, setting, methods) -> tuple[float, dict]:
    """The confidence from which a reading is "sure" (:func:`..selection.policy.sure_from`) over the key-pose
    readings of both methods at the chosen ``setting`` = (temperature, history, crops), and its calibration table."""
    from ..data.hand_pose import class_name
    from .reading import read_probabilities

    t, hh, c = setting
    conf, right = [], []
    for m in methods:
        rd = readers[m]
        rd.set_history(hh)
        for f in frames[m]:
            found = f["box"] is not None and f["score"] >= thresholds[m]
            prob = rd.integrate(frame_probabilities(rd, f, c, t) if found else None, f["box"])
            if f["label"] is None or prob is None:
                continue
            got = read_probabilities(prob, rd.groups, rd.group_names, rd.orient)
            if got.shape is None:
                continue
            conf.append(got.confidence)
            right.append(bool(f["hit"]) and got.shape == class_name(*f["label"]).partition(" · ")[0])
    return sure_from(conf, right)


__all__ = ["CHOICE_OPTIONS", "SURE_ACCURACY", "cheapest_reading", "frame_probabilities", "sure_threshold", "choose_detection", "choose_reading", "choose_scan", "found_threshold", "validation_video"]


