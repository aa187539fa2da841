"""The one selection policy: how every hyper-parameter choice is made on a validation part and written down.

Used by the one search (:class:`~.search.ClassMapSearch`: the Train panel, ``classmap train``,
``classmap hand-model`` and ``bench classmap``) and by every other benchmark (``classmap bench scan |
features | scale | compressive``), so the app and the benches decide the same kind of choice by the same
rule, from the same function, never from a copied constant. Every choice is made on a *validation* part carved from training data (the splits:
:mod:`.splits`); the model is then refitted on all training data and tested once.

API
---
``candidates(value, default) -> list``, ``searched(value) -> bool``
    A parameter's candidates (``"auto"``: ``default``; a list; one value) and whether it asks for a search.
``record(chosen, candidates, scores, *, split, by, rule="best", **extra) -> dict``
    One choice as the JSON (and a model's metadata) records it: ``{"chosen", "candidates", "split",
    "by", "rule", "scores", ...}``; ``split`` is what the chooser was handed (a part's name, or
    :func:`part` of its rows: name, row count and a digest of the rows' identities), never a constant.
``part(name, row_ids) -> dict``
    A part as a record names it: ``{"name", "rows", "digest"}`` (``row_ids``: :func:`.splits.row_ids`
    of the rows, or indices into one set), so a test can tell which rows a choice was made on.
``best_penalty(candidates, accuracies, *, parameter, split, **extra) -> dict``
    The bank penalty (ridge ``alpha``, liblinear ``C``, ``alpha_rel``, ...): the best validation
    accuracy; ties go to the *stronger* penalty (larger alpha, smaller C: :func:`is_stronger`).
``penalty_key(bank) -> str | None``
    The parameter that is a bank's penalty (``alpha`` / ``C``), or None.
``stronger_penalty(parameter, value, factor) -> float``
    A penalty ``factor`` times stronger (``alpha * factor``, ``C / factor``): the reference bank of
    ClassMap (``reference_penalty``), in training and in every bench.
``reference_penalty(points, brute_accuracy, *, split, keys=("reference_penalty",)) -> dict``
    ClassMap's references (reference-bank multiplier, and with ``keys`` also which examples embed the
    classes): the candidate whose validation sweep (every refine and p) has the smallest mean gap to
    brute force; ties to the smaller multiplier, then the earlier candidate.
``REFERENCE_PENALTIES``
    The multipliers offered by default (``"1,3,10,30,100"``, the text an option takes).
``paired_se(correct, brute_correct) -> float``
    Standard error of an accuracy difference of two classifiers on the same queries.
``measured_gaps(points, brute_accuracy) -> list[dict]``
    Gap rows from validation points measured at the final model's size: ``gap`` = brute force's
    accuracy minus the point's, ``gap_se`` = its paired standard error (``difference_se``).
``predicted_gaps(runs, n_final) -> (rows, inputs)``
    Gap rows predicted at the final training size from a learning curve of validation fits
    (:mod:`.selection_curve`): for benches whose final model trains on more images than the
    validated one.
``operating_point(rows, keys, *, split, tolerance=TOLERANCE, n_se=N_SE, by, **extra) -> dict``
    THE operating-point rule (ClassMap's p, refine, ...): the fewest mean evaluations whose gap to
    brute force's validation accuracy, raised by ``n_se`` of its standard errors, is within
    ``tolerance``; if none is, the smallest raised gap. ``rows``: dicts with ``gap``, ``gap_se``,
    ``evaluations`` and the ``keys``.
``TOLERANCE``, ``N_SE``
    The stated margin (0.5 points of accuracy) and its uncertainty allowance (one standard error).
``widen(grids, choose, *, bounds, integer=()) -> dict``
    A choice that sits at the edge of its ordered numeric grid is no choice yet: the grid is widened
    past that edge (:func:`past_edge`, at most :data:`MAX_WIDENINGS` times) and ``choose`` runs again
    on the same part, until the choice is interior, a bound stops it, or it only ties its neighbour
    (``"plateau"``: the tie rule, not the part, put it at the edge). The record names the grid
    actually tried and whether the choice is still at an edge (``"at_edge"``, ``"edge"``, ``"stopped_by"``).

Why an uncertainty allowance: the validation gap of the cheapest qualifying point is an estimate;
taking the cheapest point whose *bare* gap clears the tolerance selects points whose gap was
underestimated by noise (bench classmap's first runs landed 0.1-0.2 points beyond it on test).
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..errors import ConfigError
from .curve import paired_se  # defined beside the curve, which scores with it; read here by the search and benches

#: the operating point's margin: ClassMap's validation accuracy within this of brute force's (0.5 points)
TOLERANCE = 0.005
#: standard errors added to a gap before the margin test
N_SE = 1.0
#: a parameter value that asks for the default candidates
AUTO = "auto"
#: reference-bank penalty multipliers offered by default (1: the bank's own classifiers are the references)
REFERENCE_PENALTIES = "1,3,10,30,100"
#: the most times :func:`widen` extends one grid past the edge its choice sits at (the choice then stays at that
#: edge and its record says so)
MAX_WIDENINGS = 3
#: the step past a grid's edge where the grid has no ratio of its own (an end value of 0)
WIDEN_RATIO = 3.0


def candidates(value, default) -> list:
    """A parameter's candidates: ``"auto"`` -> ``default``, a list or tuple -> its items, a value -> ``[value]``."""
    if isinstance(value, str) and value == AUTO:
        return list(default)
    if isinstance(value, (list, tuple)):
        if not value:
            raise ConfigError("a searched parameter needs at least one candidate")
        return list(value)
    return [value]


def searched(value) -> bool:
    """Whether a parameter value asks for a search (``"auto"`` or a list of candidates)."""
    return (isinstance(value, str) and value == AUTO) or isinstance(value, (list, tuple))


def record(chosen: Any, candidates: Sequence, scores: dict | list, *, split: str | dict, by: str,
           rule: str = "best", **extra: Any) -> dict:
    """One hyper-parameter choice as the JSON records it. ``split``: the part the scores were measured
    on, as the chooser was handed it: its name (``"split"``), or a :func:`part` (then ``"split"`` is its
    name and ``"split_rows"`` / ``"split_digest"`` say which rows)."""
    if isinstance(split, dict):
        named = {"split": split["name"], "split_rows": split["rows"], "split_digest": split["digest"]}
    elif isinstance(split, str) and split:
        named = {"split": split}
    else:
        raise ConfigError(f"a selection record needs the part it was chosen on, got {split!r}")
    return {"chosen": chosen, "candidates": list(candidates), **named, "by": by, "rule": rule,
            "scores": scores, **extra}


def part(name: str, row_ids: np.ndarray) -> dict:
    """A part as :func:`record` names it: ``{"name", "rows": count, "digest": 16 hex digits}``; the digest is
    of the sorted row identities (``row_ids (n,)`` integers: :func:`.splits.row_ids` or indices into one set),
    so two parts of the same rows in any order have the same digest."""
    import hashlib

    ids = np.sort(np.asarray(row_ids).astype(np.uint64, copy=False))
    return {"name": str(name), "rows": int(len(ids)), "digest": hashlib.blake2b(ids.tobytes(), digest_size=8).hexdigest()}


def is_stronger(parameter: str) -> bool:
    """Whether a larger value of penalty ``parameter`` regularises more (``alpha``, ``alpha_rel``) or
    less (``C``)."""
    name = parameter.rsplit(".", 1)[-1]
    if name.startswith("alpha") or name == "penalty":
        return True
    if name == "C":
        return False
    raise ConfigError(f"{parameter!r} is not a penalty (alpha or C)")


def penalty_key(bank) -> str | None:
    """The parameter that is ``bank``'s penalty (the class names it once: ``penalty``), or None."""
    key = getattr(bank, "penalty", None)  # the class attribute, also through a wrapper that forwards attributes
    return key if isinstance(key, str) and key in bank.get_params(deep=False) else None


def stronger_penalty(parameter: str, value: float, factor: float) -> float:
    """The penalty ``factor`` times stronger: ``alpha * factor`` or ``C / factor``."""
    return float(value) * factor if is_stronger(parameter) else float(value) / factor


def best_penalty(candidates: Sequence[float], accuracies: Sequence[float], *, parameter: str, split: str | dict,
                 by: str = "validation accuracy", **extra: Any) -> dict:
    """The penalty with the best validation accuracy; ties go to the stronger penalty (the smoother
    bank). ``accuracies[i]`` belongs to ``candidates[i]``. Returns a :func:`record`."""
    if not len(candidates) or len(candidates) != len(accuracies):
        raise ConfigError(f"choosing {parameter}: {len(candidates)} candidates, {len(accuracies)} scores")
    sign = 1.0 if is_stronger(parameter) else -1.0
    i = max(range(len(candidates)), key=lambda j: (accuracies[j], sign * candidates[j]))
    return record(candidates[i], candidates, {f"{c:g}": float(a) for c, a in zip(candidates, accuracies)}, split=split,
                  by=by, rule="best validation accuracy; ties: the stronger penalty", parameter=parameter,
                  plateau=_plateau(candidates[i], dict(zip(candidates, accuracies))), **extra)


def _plateau(chosen, score: dict) -> bool:
    """Whether ``chosen`` sits at an edge of the candidates ``score`` names and scores as its neighbour there: the tie
    rule, not the part, put it at the edge (:func:`widen` does not walk such a plateau)."""
    values = sorted(score)
    side = grid_edge(chosen, values)
    return side is not None and score[chosen] == score[values[1] if side == "low" else values[-2]]


def paired_se_from_rates(lost: float, gained: float, n: int) -> float:
    """:func:`paired_se` from the shares of queries brute force gets right and the other wrong
    (``lost``) and the reverse (``gained``), over ``n`` queries."""
    if n < 2:
        return 0.0
    mean, square = gained - lost, gained + lost  # per-query differences are -1, 0 or +1
    return math.sqrt(max(square - mean * mean, 0.0) / (n - 1))


def reference_penalty(points: list[dict], brute_accuracy: float, *, split: str | dict,
                      keys: Sequence[str] = ("reference_penalty",)) -> dict:
    """The references whose validation curve (``points``: dicts with ``accuracy`` and the ``keys``, every
    refine and p) has the smallest mean gap to brute force: the filter that keeps the right class best over
    the whole sweep. ``keys`` is ``("reference_penalty",)`` (the reference-bank multiplier; ties: the
    smaller) or more (e.g. also ``"embedding_examples"``; ties then to the earlier candidate). Returns a
    :func:`record` whose ``chosen`` is the multiplier, or ``{key: value}`` for several keys."""
    keys = tuple(keys)
    combos = list(dict.fromkeys(tuple(q[k] for k in keys) for q in points))
    if not combos:
        raise ConfigError("no validation points to choose a reference penalty from")
    mean_gap = [float(np.mean([brute_accuracy - q["accuracy"] for q in points if tuple(q[k] for k in keys) == c]))
                for c in combos]
    best = min(range(len(combos)), key=lambda i: (mean_gap[i], combos[i][0], i))
    name = (lambda c: f"{c[0]:g}") if len(keys) == 1 else (lambda c: ",".join(f"{v:g}" if isinstance(v, float)
                                                                              else str(v) for v in c))
    one = len(keys) == 1
    rest = combos[best][1:]                         # the multiplier's neighbours: the same other keys
    return record(combos[best][0] if one else dict(zip(keys, combos[best])),
                  [c[0] for c in combos] if one else [dict(zip(keys, c)) for c in combos],
                  {name(c): g for c, g in zip(combos, mean_gap)}, split=split,
                  plateau=_plateau(combos[best][0], {c[0]: g for c, g in zip(combos, mean_gap) if c[1:] == rest}),
                  by="mean validation gap to brute force over every refine and p (points; lower is better)",
                  rule="smallest mean validation gap to brute force over the whole (refine, p) sweep",
                  brute_force_accuracy=brute_accuracy)


def measured_gaps(points: list[dict], brute_accuracy: float) -> list[dict]:
    """``points`` (``accuracy``, ``evaluations``, optional ``difference_se``) as gap rows for
    :func:`operating_point`: ``gap`` = ``brute_accuracy - accuracy``, ``gap_se`` = ``difference_se``."""
    return [{**q, "gap": brute_accuracy - q["accuracy"], "gap_se": q.get("difference_se", 0.0)} for q in points]


def predicted_gaps(runs: list[dict], n_final: float) -> tuple[list[dict], dict]:
    """Gap rows predicted at ``n_final`` training images per class (:func:`.selection_curve.predict_gaps`)."""
    from .curve import predict_gaps

    return predict_gaps(runs, n_final)


def operating_point(rows: list[dict], keys: Sequence[str], *, split: str | dict, tolerance: float = TOLERANCE,
                    n_se: float = N_SE, by: str, gaps: str = "validation", **extra: Any) -> dict:
    """THE operating-point rule (module docstring). ``rows``: dicts with ``gap``, ``gap_se``,
    ``evaluations`` and ``keys``; ``gaps`` says how the gaps were obtained (for the rule's wording).
    Returns a :func:`record` whose ``chosen`` is ``{key: value}`` of the chosen row and whose scores are
    the rows with their ``bound`` (gap + n_se * gap_se)."""
    if not rows:
        raise ConfigError("no validation points to choose an operating point from")
    rows = [{**r, "bound": r["gap"] + n_se * r["gap_se"]} for r in rows]
    ok = [r for r in rows if r["bound"] <= tolerance + 1e-12]
    best = (min(ok, key=lambda r: (r["evaluations"], r["bound"])) if ok
            else min(rows, key=lambda r: (r["bound"], r["evaluations"])))
    return record({k: best[k] for k in keys}, [{k: r[k] for k in keys} for r in rows], rows, split=split, by=by,
                  rule=(f"fewest evaluations whose {gaps} gap to brute force's accuracy plus {n_se:g} standard "
                        f"error(s) is within {100 * tolerance:g} points; else the smallest such bound"),
                  tolerance=tolerance, n_se=n_se, within_tolerance=bool(ok), **extra)


def grid_edge(chosen: Any, grid: Sequence) -> str | None:
    """``"low"`` or ``"high"`` when ``chosen`` is the smallest or the largest of ``grid`` (two or more distinct
    numbers), else None: interior, or no grid (one candidate is a fixed value)."""
    values = sorted({float(v) for v in grid})
    if len(values) < 2:
        return None
    return "low" if float(chosen) == values[0] else "high" if float(chosen) == values[-1] else None


def past_edge(grid: Sequence, edge: str, *, integer: bool = False,
              bounds: tuple[float, float] = (0.0, math.inf)) -> float | int | None:
    """The next candidate past ``edge`` (``"low"`` / ``"high"``) of ``grid``: its end value over / times the grid's
    own ratio at that end (end over its neighbour: 10/3 past ``..., 3, 10``; :data:`WIDEN_RATIO` where an end is
    0), four significant digits, or for an ``integer`` grid rounded and at least one step; kept within ``bounds``.
    None where the end already is at a bound."""
    values = sorted({float(v) for v in grid})
    end, near = (values[-1], values[-2]) if edge == "high" else (values[0], values[1])
    ratio = max(end, near) / min(end, near) if min(end, near) > 0 else WIDEN_RATIO
    value = end * ratio if edge == "high" else end / ratio
    value = (max(end + 1, round(value)) if edge == "high" else min(end - 1, round(value))) if integer \
        else float(f"{value:.4g}")
    value = min(value, bounds[1]) if edge == "high" else max(value, bounds[0])
    if value == end:
        return None
    return int(value) if integer else float(value)


def widen(grids: dict[str, list], choose, *, bounds: dict[str, tuple[float, float]] | None = None,
          integer: Sequence[str] = (), max_widenings: int = MAX_WIDENINGS) -> dict:
    """Choose until no choice sits at the edge of its grid (module docstring).

    ``grids``: ``{name: candidates}`` of the ordered numeric grids of this choice, extended in place (a new
    candidate is appended; sorted at the end); ``choose()`` scores every candidate not yet scored (a caller keeps
    what it scored) and returns ``(record, {name: chosen value})``. A grid whose choice is at an edge gets
    :func:`past_edge`'s next value, until the choice is interior, it only ties its neighbour (the record's
    ``plateau``, one grid: the tie rule put it at the edge), the value would pass its ``bounds`` (``{name: (low,
    high)}``) or the grid was widened ``max_widenings`` times. Returns the last record with ``grid`` (``{name: sorted values
    tried}``), ``at_edge`` (bool), ``edge`` (``{name: "low" | "high"}`` of a choice still at an edge),
    ``stopped_by`` (``{name: why it was not widened further}``) and ``widened`` (``{name: extensions}``)."""
    bounds = dict(bounds or {})
    widened, why = dict.fromkeys(grids, 0), {}
    while True:
        rec, chosen = choose()
        grew = False
        for name, grid in grids.items():
            side = grid_edge(chosen[name], grid)
            if side is None:
                continue
            if rec.get("plateau") and len(grids) == 1:
                why[name] = "it ties its neighbour (the tie rule chose the edge; nothing to find past a plateau)"
                continue
            low, high = bounds.get(name, (0.0, math.inf))
            value = (None if widened[name] >= max_widenings
                     else past_edge(grid, side, integer=name in integer, bounds=(low, high)))
            if value is None:
                why[name] = (f"{max_widenings} widenings (MAX_WIDENINGS)" if widened[name] >= max_widenings
                             else f"the bound {name} = {low if side == 'low' else high:g}")
                continue
            grid.append(value)
            widened[name] += 1
            grew = True
        if not grew:
            break
    for grid in grids.values():
        grid.sort()
    edge = {name: side for name, grid in grids.items() if (side := grid_edge(chosen[name], grid))}
    rec.update(grid={name: list(grid) for name, grid in grids.items()}, at_edge=bool(edge), edge=edge,
               stopped_by={name: why[name] for name in edge}, widened=widened)
    return rec


#: a reading is shown as "sure" only where the validation readings this confident were right this often
SURE_ACCURACY = 0.95


def sure_from(conf, right, accuracy: float = SURE_ACCURACY) -> tuple[float, dict]:
    """The confidence from which a reading is shown as "sure": the lowest ``t`` such that the validation readings
    (``conf``, whether each was ``right``) with confidence >= ``t`` are right at least ``accuracy`` of the time
    (1.0 when none are: never sure, :func:`is_sure`). Returns it and the calibration table (per threshold: the
    share of readings at or above it and their accuracy)."""
    conf, right = np.asarray(conf, np.float64), np.asarray(right, bool)
    order = np.argsort(-conf, kind="stable")
    cum = np.cumsum(right[order]) / np.arange(1, len(order) + 1) if len(order) else np.zeros(0)
    ok = np.flatnonzero(cum >= accuracy)
    # the lowest threshold whose readings at or above it are right often enough (from the most confident down)
    sure = min(1.0, float(conf[order][ok.max()])) if len(ok) else 1.0
    table = {f"{q:.2f}": {"share": float(np.mean(conf >= q)) if len(conf) else 0.0,
                          "accuracy": float(np.mean(right[conf >= q])) if np.any(conf >= q) else None}
             for q in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)}
    return sure, {"readings": int(len(conf)), "accuracy_all": float(right.mean()) if len(right) else None,
                  "chosen_share": float(np.mean(conf >= sure)) if len(conf) else 0.0, "table": table}


def is_sure(confidence: float, threshold: float) -> bool:
    """Whether a reading of ``confidence`` is shown as sure at ``threshold`` (:func:`sure_from`; 1.0: never)."""
    return threshold < 1.0 and confidence >= threshold


__all__ = ["AUTO", "MAX_WIDENINGS", "N_SE", "REFERENCE_PENALTIES", "SURE_ACCURACY", "TOLERANCE", "WIDEN_RATIO",
           "best_penalty", "candidates", "grid_edge", "is_stronger", "measured_gaps", "operating_point", "paired_se",
           "paired_se_from_rates", "part", "past_edge", "penalty_key", "predicted_gaps", "record", "reference_penalty",
           "searched", "stronger_penalty", "is_sure", "sure_from", "widen"]
