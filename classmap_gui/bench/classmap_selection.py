"""How ``bench classmap`` chooses its ClassMap point on validation data: a learning-curve prediction of
the gap to brute force at the final training size, with every source of error it can measure.

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

and the chosen point is the cheapest whose predicted gap plus ``n_se`` prediction standard errors is
within ``tolerance``; if none is, the one with the smallest predicted gap plus margin.
"""
from __future__ import annotations

import math

import numpy as np

from ..core.errors import ConfigError
from .common import selection

KEYS = ("reference_penalty", "refine", "p")


def _se(v: np.ndarray) -> float:
    v = np.asarray(v, np.float64)
    return float(v.std(ddof=1) / math.sqrt(len(v))) if len(v) > 1 else 0.0


def paired_se(correct: np.ndarray, brute_correct: np.ndarray) -> float:
    """Standard error of the accuracy difference of two classifiers on the same queries: the standard
    deviation of the per-query differences (each -1, 0 or 1) over the square root of their number."""
    diff = np.asarray(correct, np.float64) - np.asarray(brute_correct, np.float64)
    return float(diff.std(ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else 0.0


def choose_point(points: list[dict], brute_accuracy: float, tolerance: float, n_se: float = 1.0) -> dict:
    """The cheapest point (fewest mean evaluations) whose validation accuracy, lowered by ``n_se`` standard
    errors of its paired difference to brute force (``difference_se``, 0 where absent), is within
    ``tolerance`` of ``brute_accuracy``; if none is, the most accurate. The margin is there because the
    validation gap of the cheapest qualifying point is itself an estimate: picking the cheapest point
    whose bare gap clears the tolerance selects points whose gap was underestimated by noise (the first
    full runs landed 0.1-0.2 points beyond it on test). Returns a :func:`selection` whose ``chosen`` is
    ``{"reference_penalty", "refine", "p"}``."""
    ok = [q for q in points
          if q["accuracy"] - n_se * q.get("difference_se", 0.0) >= brute_accuracy - tolerance - 1e-12]
    best = (min(ok, key=lambda q: (q["evaluations"], -q["accuracy"])) if ok
            else max(points, key=lambda q: (q["accuracy"], -q["evaluations"])))
    keys = ("reference_penalty", "refine", "p")
    return selection({k: best[k] for k in keys}, [{k: q[k] for k in keys} for q in points], points,
                     by="validation accuracy, its paired standard error against brute force, and mean evaluations",
                     rule=(f"fewest evaluations whose validation accuracy minus {n_se:g} standard error(s) of the "
                           f"per-query paired difference to brute force is within {100 * tolerance:g} points "
                           "of brute force's validation accuracy"),
                     brute_force_accuracy=brute_accuracy, n_se=n_se, within_tolerance=bool(ok))


def choose_reference(points: list[dict], brute_accuracy: float) -> dict:
    """The reference penalty whose validation curve (every refine and p, fit size ``n``) has the smallest
    mean gap to brute force: the filter that keeps the right class best over the whole sweep; ties go
    to the smaller multiplier. Returns a :func:`selection` whose ``chosen`` is the multiplier."""
    factors = sorted({q["reference_penalty"] for q in points})
    if not factors:
        raise ConfigError("bench classmap: no validation points to choose a reference penalty from")
    mean_gap = {f: float(np.mean([brute_accuracy - q["accuracy"] for q in points if q["reference_penalty"] == f]))
                for f in factors}
    best = min(factors, key=lambda f: (mean_gap[f], f))
    return selection(best, factors, {f"{f:g}": g for f, g in mean_gap.items()},
                     by="mean validation gap to brute force over every refine and p (points; lower is better)",
                     rule="smallest mean validation gap to brute force over the whole (refine, p) sweep")


def extrapolation_factor(n: float, n_half: float, n_final: float) -> float:
    """``k`` of the module docstring: how far past ``n`` the line through ``(ln n_half, ln n)`` is read."""
    if not 0 < n_half < n <= n_final:
        raise ConfigError(f"bench classmap: learning-curve sizes must satisfy 0 < {n_half} < {n} <= {n_final}")
    return math.log(n_final / n) / math.log(n / n_half)


def predict_gaps(runs: list[dict], n_final: float) -> tuple[list[dict], dict]:
    """The predicted final-size gap of every candidate (module docstring).

    ``runs``: dicts ``{"n": images per class, "seed", "brute": (q,) bool hits, "hits": {key: (q,)
    bool}, "evaluations": {key: float}}``, two or more at the same (largest) ``n`` with different seeds
    and one at a smaller ``n``; ``key`` a tuple (refine, p). Returns ``(rows, inputs)``: one row per
    key with ``gap_at_n`` (seed mean), ``gap_at_n_half``, ``gap_by_seed``, ``predicted_gap``,
    ``prediction_se``, ``query_se``, ``evaluations``; ``inputs`` the sizes, ``k`` and ``r``."""
    sizes = sorted({int(r["n"]) for r in runs})
    if len(sizes) != 2:
        raise ConfigError(f"bench classmap: need two fit sizes, got {sizes}")
    n_half, n = sizes
    full = [r for r in runs if r["n"] == n]
    half = [r for r in runs if r["n"] == n_half]
    m = len(full)
    if m < 2 or len(half) != 1:
        raise ConfigError("bench classmap: need two or more seeds at the larger fit size and one at the smaller")
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
    inputs = {"n": n, "n_half": n_half, "n_final": n_final, "k": k, "model_spread_r": math.sqrt(r2),
              "seeds_at_n": [r["seed"] for r in full], "seed_at_n_half": half[0]["seed"]}
    return rows, inputs


def choose_point_predicted(runs: list[dict], n_final: float, tolerance: float, reference_penalty: float,
                           n_se: float = 1.0, **extra) -> dict:
    """The cheapest candidate whose predicted final-size gap plus ``n_se`` prediction standard errors is
    within ``tolerance`` (else the smallest such bound). Returns a :func:`selection` whose ``chosen`` is
    ``{"reference_penalty", "refine", "p"}`` and whose ``scores`` are the rows of :func:`predict_gaps`
    (gaps as fractions, positive = ClassMap less accurate)."""
    rows, inputs = predict_gaps(runs, n_final)
    for row in rows:
        row["bound"] = row["predicted_gap"] + n_se * row["prediction_se"]
    ok = [r for r in rows if r["bound"] <= tolerance + 1e-12]
    best = (min(ok, key=lambda r: (r["evaluations"], r["bound"])) if ok
            else min(rows, key=lambda r: (r["bound"], r["evaluations"])))
    scores = [{"reference_penalty": reference_penalty, "refine": r["key"][0], "p": r["key"][1],
               **{k: v for k, v in r.items() if k != "key"}} for r in rows]
    return selection({"reference_penalty": reference_penalty, "refine": best["key"][0], "p": best["key"][1]},
                     [{"reference_penalty": reference_penalty, "refine": r["key"][0], "p": r["key"][1]} for r in rows],
                     scores, by="predicted gap to brute force at the final training size and its standard error",
                     rule=(f"fewest evaluations whose gap to brute force predicted at {inputs['n_final']:g} training "
                           f"images per class (linear in ln n through validation fits at {inputs['n_half']} and "
                           f"{inputs['n']}, the latter averaged over {len(inputs['seeds_at_n'])} seeds) plus {n_se:g} prediction standard "
                           f"error(s) (query noise, model draws, the test part's noise) is within "
                           f"{100 * tolerance:g} points"),
                     extrapolation=inputs, n_se=n_se, tolerance=tolerance, within_tolerance=bool(ok), **extra)
