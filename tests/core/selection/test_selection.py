"""The one selection policy (core/selection/policy.py, core/selection/curve.py): the operating-point rule on
measured and on learning-curve-predicted gaps, the penalty and the reference-penalty choices."""
import math

import numpy as np
import pytest

from classmap_gui.core.selection import policy as S
from classmap_gui.core.errors import ConfigError
from classmap_gui.core.selection.curve import extrapolation_factor, predict_gaps

Q = 4000  # validation queries


def _hits(misses: int, offset: int = 0) -> np.ndarray:
    """Q per-query hits with ``misses`` misses starting at ``offset`` (brute force hits everything)."""
    h = np.ones(Q, bool)
    h[offset:offset + misses] = False
    return h


def _run(n, seed, misses: dict, evaluations: dict, offsets: dict | None = None) -> dict:
    return {"n": n, "seed": seed, "brute": np.ones(Q, bool),
            "hits": {k: _hits(m, (offsets or {}).get(k, 0)) for k, m in misses.items()}, "evaluations": evaluations}


EV = {("v2", 10): 55.0, ("v2", 30): 75.0}
KEYS = ("refine", "p")


def _predicted(runs, n_final, tolerance, n_se=1.0):
    """The operating point of bench classmap: the rule on learning-curve-predicted gaps."""
    rows, inputs = S.predicted_gaps(runs, n_final)
    rows = [{"refine": r["key"][0], "p": r["key"][1], **r} for r in rows]
    return S.operating_point(rows, KEYS, split="validation", tolerance=tolerance, n_se=n_se, by="predicted gap", extrapolation=inputs)


def test_extrapolation_factor_reads_the_log_line_past_the_fit_size():
    assert extrapolation_factor(30, 15, 40) == pytest.approx(math.log(40 / 30) / math.log(2))
    assert extrapolation_factor(30, 15, 30) == 0.0
    with pytest.raises(ConfigError):
        extrapolation_factor(15, 30, 40)


def test_a_gap_that_grows_with_training_size_is_predicted_larger_and_the_point_rejected():
    # p=10: 0.40 points at fit 30 (every seed) but 0.10 at fit 15: the line reaches ~0.52 at 40 -> out;
    # p=30: 0.10 points at both sizes -> in. The bare fit-30 gap would have taken p=10 (0.40 < 0.5).
    runs = [_run(30, s, {("v2", 10): 16, ("v2", 30): 4}, EV) for s in (0, 1, 2)]
    runs.append(_run(15, 0, {("v2", 10): 4, ("v2", 30): 4}, EV))
    sel = _predicted(runs, 40, 0.005, n_se=0.0)
    rows = {(q["refine"], q["p"]): q for q in sel["scores"]}
    k = math.log(40 / 30) / math.log(2)
    assert rows[("v2", 10)]["predicted_gap"] == pytest.approx(0.004 + k * 0.003)
    assert rows[("v2", 30)]["predicted_gap"] == pytest.approx(0.001)
    assert sel["chosen"] == {"refine": "v2", "p": 30}
    assert sel["split"] == "validation" and sel["within_tolerance"]
    assert sel["extrapolation"]["n_final"] == 40 and sel["extrapolation"]["seeds_at_n"] == [0, 1, 2]


def test_seeds_that_disagree_widen_the_margin():
    # the same mean gap at fit 30 (0.30 points) and no growth; seeds agree in one world, spread in the other
    agree = [_run(30, s, {("v2", 10): 12, ("v2", 30): 2}, EV) for s in (0, 1, 2)]
    spread = [_run(30, s, {("v2", 10): m, ("v2", 30): 2}, EV) for s, m in ((0, 0), (1, 12), (2, 24))]
    half = _run(15, 0, {("v2", 10): 12, ("v2", 30): 2}, EV)
    a = _predicted(agree + [half], 40, 0.005)
    b = _predicted(spread + [half], 40, 0.005)
    ra = {(q["refine"], q["p"]): q for q in a["scores"]}
    rb = {(q["refine"], q["p"]): q for q in b["scores"]}
    assert ra[("v2", 10)]["gap_at_n"] == pytest.approx(rb[("v2", 10)]["gap_at_n"]) == pytest.approx(0.003)
    assert a["extrapolation"]["model_spread_r"] == pytest.approx(0, abs=1e-9)
    assert b["extrapolation"]["model_spread_r"] > 1
    assert rb[("v2", 10)]["prediction_se"] > ra[("v2", 10)]["prediction_se"]
    assert a["chosen"]["p"] == 10                      # 0.30 + its noise: within 0.5 points
    assert b["chosen"]["p"] == 30                      # the same mean, but the draws spread: not trusted


def test_nothing_within_tolerance_takes_the_smallest_bound():
    runs = [_run(30, s, {("v2", 10): 80, ("v2", 30): 40}, EV) for s in (0, 1)]
    runs.append(_run(15, 0, {("v2", 10): 40, ("v2", 30): 40}, EV))
    sel = _predicted(runs, 40, 0.005)
    assert not sel["within_tolerance"] and sel["chosen"]["p"] == 30


def test_the_rule_needs_two_sizes_and_two_seeds():
    one_seed = [_run(30, 0, {("v2", 10): 1}, EV), _run(15, 0, {("v2", 10): 1}, EV)]
    with pytest.raises(ConfigError):
        predict_gaps(one_seed, 40)
    one_size = [_run(30, s, {("v2", 10): 1}, EV) for s in (0, 1, 2)]
    with pytest.raises(ConfigError):
        predict_gaps(one_size, 40)


def test_reference_penalty_with_the_smallest_mean_gap_over_the_sweep():
    pts = [{"reference_penalty": f, "refine": "v2", "p": p, "accuracy": a}
           for f, accs in ((10.0, (0.85, 0.89)), (30.0, (0.87, 0.88)), (100.0, (0.80, 0.90)))
           for p, a in zip((10, 30), accs)]
    sel = S.reference_penalty(pts, 0.90, split="validation")
    assert sel["chosen"] == 30.0                       # mean gap 2.5 points against 3.0 and 5.0
    assert sel["scores"]["30"] == pytest.approx(0.025) and sel["split"] == "validation"


def test_measured_gaps_take_the_cheapest_point_whose_gap_plus_its_se_is_within_the_margin():
    pts = [{"refine": "v2", "p": p, "evaluations": 50 + p, "accuracy": a, "difference_se": se}
           for p, a, se in ((10, 0.897, 0.003), (20, 0.898, 0.001), (40, 0.90, 0.0))]
    sel = S.operating_point(S.measured_gaps(pts, 0.90), KEYS, split="validation", by="validation gap")
    assert sel["chosen"] == {"refine": "v2", "p": 20}  # p=10: 0.3 + 0.3 points > 0.5; p=20: 0.2 + 0.1 within
    assert sel["tolerance"] == S.TOLERANCE and sel["n_se"] == S.N_SE and sel["split"] == "validation"
    bare = S.operating_point(S.measured_gaps(pts, 0.90), KEYS, split="validation", n_se=0.0, by="validation gap")
    assert bare["chosen"]["p"] == 10                   # without the uncertainty allowance the noisier point wins


def test_paired_se_from_rates_matches_the_per_query_standard_error():
    rng = np.random.default_rng(0)
    brute, other = rng.random(500) < 0.8, rng.random(500) < 0.75
    lost, gained = np.mean(brute & ~other), np.mean(other & ~brute)
    assert S.paired_se_from_rates(lost, gained, 500) == pytest.approx(S.paired_se(other, brute))


def test_penalty_ties_go_to_the_stronger_penalty_and_reference_banks_are_stronger():
    assert S.best_penalty([1.0, 10.0, 100.0], [0.8, 0.9, 0.9], parameter="bank.alpha", split="validation")["chosen"] == 100.0
    assert S.best_penalty([0.1, 1.0, 10.0], [0.9, 0.9, 0.8], parameter="bank.C", split="validation")["chosen"] == 0.1
    assert S.stronger_penalty("alpha", 30.0, 10) == 300.0 and S.stronger_penalty("C", 1.0, 10) == 0.1
    with pytest.raises(ConfigError):
        S.best_penalty([1.0], [0.5], parameter="sigma", split="validation")


def test_nothing_within_the_margin_takes_the_most_accurate_point():
    pts = [{"refine": "v2", "p": p, "accuracy": a, "evaluations": 10 + p} for p, a in ((5, 0.80), (10, 0.896), (40, 0.90))]
    assert S.operating_point(S.measured_gaps(pts, 0.90), KEYS, split="validation", by="gap")["chosen"]["p"] == 10
    sel = S.operating_point(S.measured_gaps(pts, 0.95), KEYS, split="validation", by="gap")
    assert not sel["within_tolerance"] and sel["chosen"]["p"] == 40


def test_paired_se_is_the_standard_error_of_per_query_differences():
    a = np.array([1, 1, 0, 1, 0, 1, 1, 1], bool)
    b = np.array([1, 0, 0, 1, 1, 1, 1, 1], bool)
    diff = a.astype(float) - b
    assert S.paired_se(a, b) == pytest.approx(diff.std(ddof=1) / np.sqrt(8))
    assert S.paired_se(a, a) == 0.0                             # the same answers: no uncertainty



def _peak_chooser(grids, peak, name="p"):
    """A choice whose score peaks at ``peak`` (the best candidate tried, ties to the smaller), counting the
    candidates scored."""
    scored = []

    def choose():
        scored.extend(v for v in grids[name] if v not in scored)
        best = min(grids[name], key=lambda v: (abs(math.log(v / peak)), v))
        return S.record(best, grids[name], {}, split="validation", by="x"), {name: best}
    return choose, scored


def test_a_choice_past_the_grid_is_found_and_the_record_names_the_grid_tried():
    grids = {"p": [5, 10, 15, 20]}
    choose, scored = _peak_chooser(grids, 40)
    rec = S.widen(grids, choose, bounds={"p": (1, 100)}, integer=("p",))
    # the grid's own step: 20 * 20/15 = 27, 27 * 27/20 = 36, 36 * 36/27 = 48 (past the best: 36 is interior)
    assert rec["chosen"] == 36 and rec["grid"] == {"p": [5, 10, 15, 20, 27, 36, 48]} and scored == grids["p"]
    assert not rec["at_edge"] and rec["widened"] == {"p": 3}
    grids = {"p": [5, 10, 15, 20]}
    rec = S.widen(grids, _peak_chooser(grids, 55)[0], bounds={"p": (1, 100)}, integer=("p",))
    assert rec["chosen"] == 48 and rec["at_edge"] and rec["edge"] == {"p": "high"}       # no more widenings
    assert rec["stopped_by"] == {"p": f"{S.MAX_WIDENINGS} widenings (MAX_WIDENINGS)"}


def test_widening_stops_where_the_choice_is_interior_and_an_interior_choice_widens_nothing():
    grids = {"reference_penalty": [1.0, 3.0, 10.0]}
    choose, _ = _peak_chooser(grids, 40.0, "reference_penalty")
    rec = S.widen(grids, choose)
    assert rec["grid"] == {"reference_penalty": [1.0, 3.0, 10.0, 33.33, 111.1]}    # the grid's own ratio, 10/3
    assert rec["chosen"] == 33.33 and not rec["at_edge"] and rec["edge"] == {} and rec["stopped_by"] == {}
    grids = {"p": [5, 10, 20]}
    rec = S.widen(grids, _peak_chooser(grids, 11)[0], integer=("p",))
    assert rec["grid"] == {"p": [5, 10, 20]} and rec["widened"] == {"p": 0} and not rec["at_edge"]


def test_a_bound_stops_the_widening_and_the_choice_is_named_at_its_edge():
    grids = {"p": [2, 4]}
    rec = S.widen(grids, _peak_chooser(grids, 50)[0], bounds={"p": (1, 6)}, integer=("p",))
    assert rec["grid"] == {"p": [2, 4, 6]} and rec["chosen"] == 6
    assert rec["at_edge"] and rec["edge"] == {"p": "high"} and rec["stopped_by"] == {"p": "the bound p = 6"}
    grids = {"p": [2, 4]}
    rec = S.widen(grids, _peak_chooser(grids, 1)[0], bounds={"p": (1, 6)}, integer=("p",))
    assert rec["grid"] == {"p": [1, 2, 4]} and rec["edge"] == {"p": "low"} and "bound p = 1" in rec["stopped_by"]["p"]
    grids = {"alpha": [1e-3, 1e-2]}
    rec = S.widen(grids, _peak_chooser(grids, 1e6, "alpha")[0])
    assert rec["grid"]["alpha"] == [1e-3, 1e-2, 0.1, 1.0, 10.0] and rec["edge"] == {"alpha": "high"}
    assert rec["stopped_by"] == {"alpha": f"{S.MAX_WIDENINGS} widenings (MAX_WIDENINGS)"}


def test_past_edge_continues_the_grids_own_step():
    assert S.past_edge([10, 15, 20, 30, 40, 60], "high", integer=True, bounds=(1, 2431)) == 90
    assert S.past_edge([10, 15, 20, 30, 40, 60], "low", integer=True, bounds=(1, 2431)) == 7
    assert S.past_edge([1.0, 3.0, 10.0, 30.0, 100.0], "low") == 0.3333
    assert S.past_edge([2, 3], "high", integer=True, bounds=(1, 100)) == 4              # at least one step
    assert S.past_edge([5, 6], "high", integer=True, bounds=(1, 6)) is None
    assert S.grid_edge(40, [40]) is None and S.grid_edge(3.0, [1.0, 3.0, 10.0]) is None


def test_a_choice_the_tie_rule_put_at_the_edge_is_not_widened():
    """Penalties that score the same: the tie rule picks the stronger (an edge), which is no sign the grid is short;
    widening would walk the plateau to ever stronger penalties."""
    grid = {"alpha": [1.0, 10.0]}
    rec = S.widen(grid, lambda: ((r := S.best_penalty(grid["alpha"], [0.5] * len(grid["alpha"]), parameter="alpha",
                                                      split="validation")), {"alpha": r["chosen"]}))
    assert rec["chosen"] == 10.0 and rec["grid"] == {"alpha": [1.0, 10.0]} and rec["plateau"] and rec["at_edge"]
    gaps = [{"reference_penalty": f, "accuracy": a} for f, a in ((1.0, 0.8), (3.0, 0.8), (10.0, 0.7))]
    assert S.reference_penalty(gaps, 0.9, split="validation")["plateau"]                # 1 and 3 tie: smaller kept
    assert not S.reference_penalty(gaps[1:], 0.9, split="validation")["plateau"]


def test_sure_starts_where_the_validation_readings_from_there_up_are_right_often_enough():
    conf = [0.99, 0.97, 0.95, 0.9, 0.8, 0.7, 0.6]
    right = [True, True, True, True, False, True, False]
    sure, table = S.sure_from(conf, right, accuracy=0.8)        # from 0.7 up: 5 of 6 right; from 0.6: 5 of 7
    assert sure == 0.7 and table["chosen_share"] == 6 / 7 and table["table"]["0.90"]["accuracy"] == 1.0
    never = S.sure_from([1.0, 0.8], [False, False])[0]            # never right enough: nothing is shown as sure,
    assert never == 1.0 and not S.is_sure(1.0, never)              # not even a saturated softmax's 100 %
    assert S.is_sure(0.7, sure) and not S.is_sure(0.69, sure)
