"""``bench scan``'s detection settings, chosen on validation videos: window sides, the background and
hand-detector weights in a window's score, and box voting (:func:`..detect.scanner.vote_box`).

Every candidate is scored by localisation (best box IoU >= 0.5 with the true hand box) on videos of their
own seeds (``validation_video_seeds``, never the test video's), by both methods' own window responses.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ConfigError
from ..core.progress import StopFn, check_stop
from ..core.selection import record as selection
from .common import floats


def frame_sizes(s) -> list[tuple[int, int]]:
    """The frame sizes of ``bench scan``'s ``frames`` option ("320x240,640x480")."""
    out = []
    for part in str(s).split(","):
        try:
            w, h = (int(v) for v in part.lower().strip().split("x"))
        except ValueError:
            raise ConfigError(f"bench scan: frames must be WxH sizes like 320x240, got {part!r}") from None
        if w < 96 or h < 96:
            raise ConfigError(f"bench scan: frame {part} is too small to scan")
        out.append((w, h))
    return out


def _vote_hits(boxes, score, pair_iou, votes, truth) -> np.ndarray:
    """``(len(votes),) bool``: does the best window's box, voted with each ``(overlap, temperature)``
    (temperature 0: the window itself) by :func:`..detect.scanner.vote_box` as the scanner votes, hit the
    ``truth`` box (x, y, w, h) by IoU >= 0.5? ``pair_iou (n, n)``: the windows' overlaps, computed once."""
    from ..core.detect.scanner import box_ious, vote_box

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
    from ..core.data.hand_video import find_hand_frames
    from ..core.detect.scanner import Scanner, box_ious

    sides = floats(opt["sides"], "sides")
    sets = _side_sets(opt)
    weights = floats(opt["background_weights"], "background_weights")
    has_det = (rec.metadata.get("detection") or {}).get("detector") is not None
    gammas = floats(opt["detector_weights"], "detector_weights") if has_det else [0.0]
    votes = _vote_grid(opt)
    seeds = [int(v) for v in floats(opt["validation_video_seeds"], "validation_video_seeds")]
    w, h = frame_sizes(opt["frames"])[0]
    methods = ("classmap", "brute_force")
    scanners = {m: Scanner(rec, m, sides=sides) for m in methods}
    boxes = scanners["brute_force"].pyramid.boxes(h, w)
    idx = scanners["brute_force"].pyramid.side_index(h, w)
    which = [np.isin(idx, [min(range(len(sides)), key=lambda j: abs(sides[j] - c)) for c in cand]) for cand in sets]
    pair_iou = np.stack([box_ious(boxes, b) for b in boxes])          # (n, n): the windows' overlaps, for voting
    grid = [(k, c, g) for k in range(len(sets)) for c in weights for g in gammas]
    hits = {m: np.zeros((len(grid), len(votes))) for m in methods}
    n = 0
    for seed in seeds:
        for i, (frame, _, box) in enumerate(find_hand_frames((h, w), seed=seed)):
            if i % 2:
                continue
            check_stop(should_stop)
            truth = (box[0], box[1], box[2], box[2])
            n += 1
            for m in methods:
                hand, bg, det, _ = scanners[m].window_scores(frame, parts="all")
                for a, (k, c, g) in enumerate(grid):
                    score = hand - c * bg if bg is not None else hand
                    if g:
                        score = score + g * det
                    score = np.where(which[k], score, -np.inf)
                    hits[m][a] += _vote_hits(boxes, score, pair_iou, votes, truth)
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


__all__ = ["choose_detection"]
