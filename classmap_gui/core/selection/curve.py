"""The learning-curve gap estimate of the operating-point rule (:func:`.selection.operating_point`): the gap to
brute force predicted at the final training size, with every source of error it can measure.

Why (measured on hand-pose's validation part, bank ridge alpha 300, 10x reference penalty, d = 45;
``docs/classmap.md``): the point is chosen with banks trained on the *fit* part (30 images per class)
and then refitted on fit + validation (40) and tested once. The earlier rule (the cheapest point whose
validation gap, plus one paired standard error, was within 0.5 points) landed 0.4-0.5 points further
from brute force on test at every small p. Three effects it ignored, each seen on validation alone:

* **training size**: the gap grows with the training part (fit 15 -> 30 per class, p = 10: 0.21 ->
  0.34 points; p = 15: 0.05 -> 0.13; p = 20: -0.10 -> 0.02), while brute force gains 4 points;
* **the model draw**: AdaBoost's triples are random; three seeds of the same fit gave gaps 0.34 / 0.40
  / 0.53 at p = 10 and 0.13 / 0.14 / 0.32 at p = 15, a spread about as large as the query noise (the
  paired standard error), and the final model is one more draw;
* **the test part's own noise**: the test gap is measured on as many queries as the validation gap.

The rule, per candidate (refine, p) of the chosen reference bank, from ``m + 1`` validation fits (fit size
``n`` with seeds ``s, s + 1, ..., s + m - 1``, ``m`` = 3 by default; fit size ``n_half`` = half of it with
seed ``s``), all on the same validation queries, a query's gap ``d = brute hit - ClassMap hit``:

    predicted gap  g = (1 + k) * mean(d_n) - k * d_half,   k = ln(n_final / n) / ln(n / n_half)
                   (the gap taken as linear in ln(training images per class), extrapolated to n_final;
                   mean(d_n) averages the m seeds)
    model spread   r^2 = mean over candidates of var_seeds(g_n) / se_n^2   (the model variance in units
                   of the query standard error: on hand-pose 1-2 at every p, larger at small p)
    prediction se  sqrt(se_q^2 + r^2 se_n^2 ((1 + k)^2 / m + k^2 + 1) + se_n^2)
                   se_q: the paired standard error of g's per-query combination; the r^2 term: the
                   draws inside g and the final model's own draw; the last: the test part's noise

Each row's ``gap`` / ``gap_se`` (the predicted gap and its prediction standard error) then go through the
one operating-point rule, :func:`.selection.operating_point`.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import ConfigError
from ..progress import StopFn, check_stop


def _se(v: np.ndarray) -> float:
    v = np.asarray(v, np.float64)
    return float(v.std(ddof=1) / math.sqrt(len(v))) if len(v) > 1 else 0.0


def extrapolation_factor(n: float, n_half: float, n_final: float) -> float:
    """``k`` of the module docstring: how far past ``n`` the line through ``(ln n_half, ln n)`` is read."""
    if not 0 < n_half < n <= n_final:
        raise ConfigError(f"learning-curve sizes must satisfy 0 < {n_half} < {n} <= {n_final}")
    return math.log(n_final / n) / math.log(n / n_half)


def predict_gaps(runs: list[dict], n_final: float) -> tuple[list[dict], dict]:
    """The predicted final-size gap of every candidate (module docstring).

    ``runs``: dicts ``{"n": images per class, "seed", "brute": (q,) bool hits, "hits": {key: (q,)
    bool}, "evaluations": {key: float}}``, two or more at the same (largest) ``n`` with different seeds
    and one at a smaller ``n``; ``key`` a tuple (refine, p). Returns ``(rows, inputs)``: one row per
    key with ``gap_at_n`` (seed mean), ``gap_at_n_half``, ``gap_by_seed``, ``predicted_gap``,
    ``prediction_se`` (also as ``gap`` / ``gap_se``), ``query_se``, ``evaluations``; ``inputs`` the sizes, ``k`` and ``r``."""
    sizes = sorted({int(r["n"]) for r in runs})
    if len(sizes) != 2:
        raise ConfigError(f"need two fit sizes, got {sizes}")
    n_half, n = sizes
    full = [r for r in runs if r["n"] == n]
    half = [r for r in runs if r["n"] == n_half]
    m = len(full)
    if m < 2 or len(half) != 1:
        raise ConfigError("need two or more seeds at the larger fit size and one at the smaller")
    k = extrapolation_factor(n, n_half, n_final)
    keys = list(full[0]["hits"])
    rows, ratios = [], []
    for key in keys:
        d = [r["brute"].astype(np.float64) - r["hits"][key].astype(np.float64) for r in full]
        dh = half[0]["brute"].astype(np.float64) - half[0]["hits"][key].astype(np.float64)
        dn = np.mean(d, axis=0)
        se_n = float(np.mean([_se(x) for x in d]))
        g_seed = [float(x.mean()) for x in d]
        if se_n > 0:
            ratios.append(float(np.var(g_seed, ddof=1)) / se_n ** 2)
        rows.append({"key": key, "gap_by_seed": g_seed, "gap_at_n": float(dn.mean()), "gap_at_n_half": float(dh.mean()),
                     "predicted_gap": float((1 + k) * dn.mean() - k * dh.mean()),
                     "query_se": _se((1 + k) * dn - k * dh), "se_at_n": se_n,
                     "evaluations": float(np.mean([r["evaluations"][key] for r in full]))})
    r2 = float(np.mean(ratios)) if ratios else 0.0
    draws = (1 + k) ** 2 / m + k ** 2 + 1
    for row in rows:
        row["prediction_se"] = math.sqrt(row["query_se"] ** 2 + r2 * draws * row["se_at_n"] ** 2 + row["se_at_n"] ** 2)
        row["gap"], row["gap_se"] = row["predicted_gap"], row["prediction_se"]
    inputs = {"n": n, "n_half": n_half, "n_final": n_final, "k": k, "model_spread_r": math.sqrt(r2),
              "seeds_at_n": [r["seed"] for r in full], "seed_at_n_half": half[0]["seed"]}
    return rows, inputs


def paired_se(correct: np.ndarray, brute_correct: np.ndarray) -> float:
    """Standard error of the accuracy difference of two classifiers on the same queries: the standard
    deviation of the per-query differences (each -1, 0 or 1) over the square root of their number."""
    diff = np.asarray(correct, np.float64) - np.asarray(brute_correct, np.float64)
    return float(diff.std(ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else 0.0


def score_run(scorer, run: dict, p_grid, X_val, y_val, should_stop: StopFn = None, **tags) -> list[dict]:
    """Score a run's ClassMap models (``run["models"]``: ``{refine: ClassMap}`` fitted at the largest p, which
    serves every p: the filter's order does not depend on it; with ``run["bank"]``) at every p of ``p_grid`` not yet
    scored, with ``scorer`` (:class:`~..train.scoring.Scoring`) on the validation rows, into ``run["hits"]`` /
    ``run["evaluations"]`` (``{(refine, p): ...}``, as :func:`predict_gaps` reads them). Returns the new
    validation points (``tags``, refine, p, accuracy, evaluations, difference_se, threshold)."""
    pts = []
    for refine, cm in run["models"].items():
        for p in [p for p in p_grid if (refine, p) not in run["hits"]]:
            check_stop(should_stop)
            hit, evaluations = scorer.classmap_hits(cm.set_params(p=int(p)), run["bank"], X_val, y_val)
            run["hits"][(refine, p)], run["evaluations"][(refine, p)] = hit, float(np.mean(evaluations))
            pts.append({**tags, "refine": refine, "p": int(p), "accuracy": float(np.mean(hit)),
                        "evaluations": float(np.mean(evaluations)), "difference_se": paired_se(hit, run["brute"]),
                        **({"threshold": cm.threshold_} if cm.threshold_ is not None else {})})
    return pts


__all__ = ["extrapolation_factor", "paired_se", "predict_gaps", "score_run"]
