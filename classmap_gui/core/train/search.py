"""``ClassMapSearch``: the one search. Every hyper-parameter of a recogniser's bank and ClassMap is chosen here,
on a validation part, by the rules of :mod:`.selection`.

A meta-estimator in the manner of scikit-learn's ``GridSearchCV`` / ``TunedThresholdClassifierCV``: the
components are parameters (``bank`` and ``bank_params``, ``classmap``: ClassMap's parameters or None), and every
parameter of theirs is fixed (a value), searched (a list of candidates) or ``"auto"`` (the default candidates
below). ``fit`` is handed the parts, makes every choice on the validation part, refits on fit + validation and
keeps what it learned in ``_`` attributes. The Train panel and ``classmap train`` (:func:`.training.train`),
``classmap hand-model`` and ``bench classmap`` call it, so a benchmark's figure is of a model the app builds::

    search = ClassMapSearch("ova-ridge", {"alpha": "auto"}, {"d": 45, "p": "auto", "refine": "auto",
                            "reference_penalty": "auto", "embedding_examples": "auto"}, random_state=0)
    search.fit(X_fit, y_fit, X_val, y_val, X_embed, y_embed)
    search.bank_, search.reference_bank_, search.classmap_, search.selection_, search.best_params_

The choices, in order (each a :func:`.selection.record` in ``selection_``, naming the part it was handed):

1. **bank penalty** (ridge ``alpha``, SVM ``C``; ``bank.<name>``): one bank per candidate on the fit part, the
   best brute-force validation accuracy (:func:`.selection.best_penalty`; ties: the stronger penalty). "auto"
   ridge alphas are :data:`PENALTY_GRID` times n * mean feature variance (n: fit rows), "auto" C as listed.
2. **the references** (``references``: ``reference_penalty``, the reference bank's penalty multiplier, 1 = the
   bank's own classifiers; and ``embedding_examples``, which examples embed the classes): per candidate pair,
   CM-Boosted with the fit part's bank (fitted once at the given grid's largest p, the thresholded refine; the
   others are copies) scored on validation at every refine and p; the pair with the smallest mean gap to brute
   force (:func:`.selection.reference_penalty`).
3. **refine and p** (``classmap_point``): the operating-point rule (:func:`.selection.operating_point`) on the
   gaps predicted at the final training size by the learning curve (:mod:`.selection_curve`: ``curve_seeds``
   AdaBoost seeds at the fit size and one fit at half of it); with ``curve_seeds`` < 2 (or one example a
   class) on the measured validation gaps (``single_size_rule`` keeps that pick either way).
4. **refit**: the bank on fit + validation, its reference bank, and ClassMap embedded from the embedding part
   (with fit + validation for ``"embedding+training"``): every refine candidate from that one fit in
   ``models_``, the chosen one with the chosen p in ``classmap_``.

**No choice at the edge of its grid** (:func:`.selection.widen`): the ordered numeric grids (the bank penalty,
the reference penalty, p) are widened past the edge their choice sits at (penalties by the grid's own ratio at
that end, p by its last step up to the number of classes) and chosen again on the same validation part, until
the choice is interior, a bound stops it (p = 1 or the number of classes) or :data:`.selection.MAX_WIDENINGS`
widenings were made. A new penalty costs a bank (a reference penalty: a reference bank, a ClassMap per embedding
examples); a new p no fit: the fits at the given grid's largest p (the refit's too) are read at it. Each record
names the ``grid`` tried, ``at_edge``, ``edge`` and ``stopped_by``: a bench JSON names a choice still at an edge.
``refine``, ``embedding_examples`` and ``embedding`` are categories, not grids; ``d`` is fixed (a list is refused).

``parts_``: the row identities of the parts it was handed (``{"fit", "validation", "embedding"} -> (n,)
uint64``, :func:`.splits.row_ids` unless ``fit(row_ids=...)`` names them), so a caller checks its test part
against exactly those (:func:`.splits.check_fresh`).
"""
from __future__ import annotations

from itertools import product

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone

from ..classify.classmap.refine_kinds import for_bank as refines_for
from ..errors import ConfigError
from ..progress import ProgressFn, StopFn, check_stop, report, sub_progress
from .scoring import Scoring, check_kind
from .search_space import KEYS, P_SWEEP, PENALTY_GRID, REFERENCE_PENALTIES, SEARCHED
from ..selection.curve import score_run
from ..selection.policy import (N_SE, TOLERANCE, best_penalty, candidates, is_stronger, measured_gaps,
                                operating_point, part, penalty_key, predicted_gaps, record, reference_penalty, searched,
                                widen)


class ClassMapSearch(MetaEstimatorMixin, BaseEstimator):
    """Choose a bank's penalty and ClassMap's references, refine and p on a validation part (module docstring).

    Parameters
    ----------
    bank : a registry bank name (``make_bank``) or an unfitted bank estimator (cloned).
    bank_params : the bank's parameters; a penalty (``alpha`` / ``C``) may be ``"auto"`` or a list of candidates;
        a ridge trainer's ``alpha`` left out is ``"auto"``.
    classmap : ClassMap's parameters (``reference_penalty``, ``embedding_examples``, ``refine`` and ``p`` may be
        ``"auto"`` or lists), or None for brute force (only the penalty is chosen).
    tolerance, n_se : the operating-point rule's margin and its standard-error allowance (:mod:`.selection`).
    curve_seeds : AdaBoost seeds at the fit size for the learning-curve rule (< 2: measured gaps at fit size).
    random_state : seed of the bank (unless ``bank_params`` sets one) and of every ClassMap fit (the learning
        curve's extra fits take the next seeds).
    scoring, background : how a model is scored on validation (:mod:`.scoring`): ``"label"`` (every row, the
        label) or ``"foreground"`` (the rows of the classes other than the label ``background``, the best of
        those a method evaluated, as the hand reader reads). Every choice is made on the scored rows.
    class_names : the labels' names, handed to a bank that knows its classes by name (``network-head``).

    Learned attributes
    ------------------
    bank_ (fitted on fit + validation), reference_bank_ (or None), classmap_ (or None), models_ ``{refine:
    ClassMap}`` of the final fit, best_params_ ``{"bank": {...}, "classmap": {...} | None}``, selection_
    ``{name: record}``, parts_ ``{part: (n,) uint64}``, validation_points_ (every scored validation point),
    candidates_ ``{searched ClassMap parameter: candidates tried}`` (grids as widened, :func:`.selection.widen`).
    """

    def __init__(self, bank="ova-ridge", bank_params=None, classmap=None, *, tolerance: float = TOLERANCE,
                 n_se: float = N_SE, curve_seeds: int = 3, random_state: int | None = 0, scoring: str = "label",
                 background=None, class_names=None):
        self.bank, self.bank_params, self.classmap = bank, bank_params, classmap
        self.tolerance, self.n_se, self.curve_seeds, self.random_state = tolerance, n_se, curve_seeds, random_state
        self.scoring, self.background, self.class_names = scoring, background, class_names

    # ------------------------------------------------------------------ components
    def _bank(self, **params):
        from ..registry import make_bank

        bank = make_bank(self.bank, **params) if isinstance(self.bank, str) else clone(self.bank).set_params(**params)
        if "random_state" in bank.get_params(deep=False) and "random_state" not in params:
            bank.set_params(random_state=self.random_state)
        if self.class_names is not None and "class_names" in bank.get_params(deep=False):
            bank.set_params(class_names=list(self.class_names))   # a bank that knows classes by name (network-head)
        return bank

    def penalty_search(self) -> tuple[dict, list[str]]:
        """``(fixed bank parameters, names of the penalties to choose)``; ConfigError for a bad setting."""
        given = dict(self.bank_params or {})
        # "auto" on another parameter is the bank's own rule (the compressive bank's sigma="auto")
        auto = [k for k, v in given.items() if searched(v) and (k in PENALTY_GRID or not isinstance(v, str))]
        fixed = {k: v for k, v in given.items() if k not in auto}
        bank = self._bank(**fixed)
        params = bank.get_params(deep=False)
        bad = [k for k in auto if k not in PENALTY_GRID]
        if bad:
            raise ConfigError(f"bank {self.bank!r}: only its penalty (alpha or C) can be chosen, not {', '.join(bad)}")
        missing = [k for k in auto if k not in params]
        if missing:
            raise ConfigError(f"bank {self.bank!r} has no parameter {', '.join(missing)} to choose")
        if getattr(type(bank), "penalty", None) == "alpha" and "alpha" not in given:
            auto.append("alpha")
        return fixed, auto

    def classmap_search(self, n_classes: int, bank) -> tuple[dict, dict]:
        """``(fixed ClassMap parameters, {searched parameter: candidates})`` for a bank of ``n_classes``."""
        from ..classify.classmap.bank_view import bank_kind
        from ..classify.classmap.estimator import EMBEDDING_EXAMPLES, ClassMap

        given = dict(self.classmap or {})
        bad = [k for k, v in given.items() if searched(v) and k not in SEARCHED]
        if bad:
            raise ConfigError(f"ClassMap {', '.join(bad)}: only {', '.join(SEARCHED)} are chosen on validation; "
                              "give one value")
        fixed = {k: v for k, v in given.items() if k not in SEARCHED}
        fixed.setdefault("random_state", self.random_state)
        p_auto = [p for p in P_SWEEP if p < n_classes] or [max(1, n_classes // 2)]
        grid = {"reference_penalty": [float(f) for f in candidates(given.get("reference_penalty", 1.0),
                                                                   REFERENCE_PENALTIES if penalty_key(bank) else (1.0,))],
                "embedding_examples": candidates(given.get("embedding_examples", "embedding"), EMBEDDING_EXAMPLES),
                "refine": candidates(given.get("refine", "v2"), refines_for(bank_kind(bank))),
                "p": [int(p) for p in candidates(given.get("p", 40), p_auto)]}
        if not all(f > 0 for f in grid["reference_penalty"]):
            raise ConfigError(f"ClassMap reference_penalty must be positive, got {grid['reference_penalty']}")
        if any(f != 1.0 for f in grid["reference_penalty"]) and (penalty_key(bank) is None or bank_kind(bank) != "ova"):
            raise ConfigError("ClassMap reference_penalty needs a one-vs-all bank with a penalty (alpha or C)")
        try:
            for r, e in product(grid["refine"], grid["embedding_examples"]):
                ClassMap(**fixed, refine=r, embedding_examples=e, p=max(grid["p"])).check_params(bank)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"ClassMap settings: {exc}") from None
        return fixed, grid

    def unfitted_bank(self):
        """The bank with its fixed parameters (its penalty still to choose): what a caller asks ``features_for``."""
        return self._bank(**self.penalty_search()[0])

    def searches(self) -> bool:
        """Whether anything is chosen (a penalty to choose, or a ClassMap parameter with several candidates);
        if not, ``fit`` needs no validation rows and fits the given settings on the fit part."""
        if self.penalty_search()[1]:
            return True
        return any(searched(v) and len(candidates(v, (0, 0))) > 1 for v in dict(self.classmap or {}).values())

    def check(self) -> None:
        """Validate the settings before any work (ConfigError naming the bad one)."""
        check_kind(self.scoring)
        fixed, _ = self.penalty_search()
        if self.classmap is not None:
            self.classmap_search(2, _Unfitted(self._bank(**fixed)))

    # ------------------------------------------------------------------ fit
    def fit(self, X_fit, y_fit, X_val, y_val, X_embed=None, y_embed=None, *, row_ids: dict | None = None,
            unseen: dict | None = None, progress: ProgressFn = None, should_stop: StopFn = None) -> "ClassMapSearch":
        """Choose on ``(X_val (n_v, D) float32, y_val)`` with models fitted on ``(X_fit, y_fit)`` (and embedded
        from ``(X_embed, y_embed)``, needed with a ClassMap), then refit on fit + validation. ``row_ids``:
        optional identities of the parts' rows (``{"fit", "validation", "embedding"}``, e.g. indices into one
        set); default their content digests. ``unseen``: ``{name: row identities}`` of parts that must stay
        unseen (the test part): a part sharing a row with one is refused (ConfigError) before any work."""
        from ..selection.splits import check_fresh, row_ids as digests

        X_fit, X_val = np.asarray(X_fit, np.float32), np.asarray(X_val, np.float32)
        y_fit, y_val = np.asarray(y_fit), np.asarray(y_val)
        use_cm = self.classmap is not None
        if use_cm and X_embed is None:
            raise ConfigError("ClassMapSearch with a ClassMap needs an embedding part (X_embed, y_embed)")
        given = {"fit": X_fit, "validation": X_val, **({"embedding": X_embed} if use_cm else {})}
        ids = dict(row_ids or {})
        self.parts_ = {k: np.asarray(ids[k]) if k in ids else digests(X) for k, X in given.items()}
        for name, rows in (unseen or {}).items():
            try:
                check_fresh({"rows": rows}, **{k: {"rows": v} for k, v in self.parts_.items()})
            except ConfigError as exc:
                raise ConfigError(f"{exc} [the {name} part]") from None
        self.scorer_ = Scoring(self.scoring, self.background)
        scored = self.scorer_.rows(y_val)               # the rows every choice is scored on
        Xs, ys = X_val[scored], y_val[scored]
        val = part("validation", self.parts_["validation"][scored])
        self.selection_, self.validation_points_, self.candidates_ = {}, [], {}
        fixed, auto = self.penalty_search()
        params = {**fixed, **self._choose_penalty(fixed, auto, X_fit, y_fit, Xs, ys, val,
                                                  sub_progress(progress, 0.0, 0.2, "bank penalty"), should_stop)}
        self.best_params_ = {"bank": params, "classmap": None}
        chosen = None
        if use_cm:
            X_embed, y_embed = np.asarray(X_embed, np.float32), np.asarray(y_embed)
            if self.searches():
                chosen = self._choose_classmap(params, X_fit, y_fit, Xs, ys, X_embed, y_embed, val,
                                               sub_progress(progress, 0.2, 0.85, "ClassMap on validation"),
                                               should_stop)
            else:   # one candidate each: nothing to score
                grid = self.classmap_search(len(np.unique(y_fit)), _Unfitted(self._bank(**params)))[1]
                chosen = {k: grid[k][0] for k in KEYS}
        check_stop(should_stop)
        X_tr, y_tr = np.concatenate([X_fit, X_val]), np.concatenate([y_fit, y_val])
        report(progress, 0.85, "refit")
        self.bank_ = self._bank(**params).fit(X_tr, y_tr, should_stop=should_stop)
        self.reference_bank_ = self.classmap_ = None
        self.models_, tried, self.candidates_ = {}, self.candidates_, {}
        if use_cm:
            fixed_cm, grid = self.classmap_search(len(np.unique(y_tr)), self.bank_)
            self.reference_bank_ = self._reference_bank(self.bank_, chosen["reference_penalty"], X_tr, y_tr, should_stop)
            self.models_ = self._fit_refines(self.bank_, {**fixed_cm, **chosen}, grid["refine"], max(grid["p"]),
                                             X_embed, y_embed, X_tr, y_tr, self.reference_bank_,
                                             sub_progress(progress, 0.9, 1.0, "ClassMap"), should_stop)
            self.classmap_ = self.models_[chosen["refine"]].set_params(p=int(chosen["p"]))
            self.best_params_["classmap"] = {**fixed_cm, **chosen}
            self.candidates_ = {**grid, **tried}            # the grids as widened on validation
        for rec in self.selection_.values():            # how every choice's validation rows were scored
            rec["scoring"] = self.scorer_.describe()
        report(progress, 1.0, "chosen on validation")
        return self

    def predict(self, X) -> np.ndarray:
        """Labels of ``X (n, D)`` by the chosen model (ClassMap's filter and refine, or brute force)."""
        if self.classmap_ is None:
            return self.bank_.predict(X)
        return self.classmap_.predict_result(np.asarray(X, np.float32), top=1, bank=self.bank_).labels

    # ------------------------------------------------------------------ the choices
    def _choose_penalty(self, fixed, auto, X, y, Xv, yv, val, progress, should_stop) -> dict:
        if not auto:
            return {}
        given = dict(self.bank_params or {})
        scale = len(X) * float(np.mean(X[:5000].var(axis=0, dtype=np.float64))) or 1.0
        grids = {k: [float(f"{(scale if k == 'alpha' else 1.0) * c:.4g}") for c in PENALTY_GRID[k]]
                 if not isinstance(given.get(k), (list, tuple)) else [float(c) for c in given[k]] for k in auto}
        scores, first = {}, int(np.prod([len(g) for g in grids.values()]))

        def choose():   # every combination not yet scored: one bank each on the fit part
            for combo in [c for c in product(*grids.values()) if c not in scores]:
                check_stop(should_stop)
                bank = self._bank(**fixed, **dict(zip(auto, combo))).fit(X, y, should_stop=should_stop)
                scores[combo] = float(np.mean(self.scorer_.brute_hits(bank, Xv, yv)))
                report(progress, len(scores) / first, "choosing " + ", ".join(auto))
            by = {"split": val, "by": "brute-force validation accuracy", "validation_images": len(yv)}
            if len(auto) == 1:  # one penalty: the policy's rule (ties: the stronger penalty)
                rec = best_penalty([c[0] for c in scores], list(scores.values()), parameter=f"bank.{auto[0]}", **by)
                return rec, {auto[0]: rec["chosen"]}
            # alpha and C together: best accuracy, ties to the combination strongest in both
            best = dict(zip(auto, max(scores, key=lambda c: (scores[c], *(v if is_stronger(k) else -v
                                                                           for k, v in zip(auto, c))))))
            return record(best, list(scores), [{"params": dict(zip(auto, c)), "accuracy": a}
                                               for c, a in scores.items()], **by), best

        rec = widen(grids, choose)
        chosen = rec["chosen"] if len(auto) > 1 else {auto[0]: rec["chosen"]}
        self.selection_.update({f"bank.{k}": rec if len(auto) == 1 else {**rec, "chosen": chosen[k],
                                                                          "candidates": grids[k]} for k in auto})
        return chosen

    def _reference_bank(self, bank, factor: float, X, y, should_stop):
        """The reference bank (``factor`` times the penalty, fitted on ``X``) or None for factor 1."""
        if float(factor) == 1.0:
            return None
        from ..classify.classmap.embedding import smoother_bank

        return smoother_bank(bank, float(factor)).fit(X, y, should_stop=should_stop)

    def _fit_refines(self, bank, params, refines, p, Xe, ye, X_tr, y_tr, ref, progress=None, should_stop=None,
                     seed=None) -> dict:
        """ClassMap for every refine in ``refines`` from one fit: the thresholded refine (v3) is fitted (its
        threshold learned at ``p``), the others share its references, weights and class embeddings."""
        from ..classify.classmap.estimator import ClassMap
        from ..classify.classmap.refine import FIRST_ABOVE_THRESHOLD, canonical

        first = next((r for r in refines if canonical(r) == FIRST_ABOVE_THRESHOLD), refines[0])
        params = {**params, "refine": first, "p": int(p), **({} if seed is None else {"random_state": seed})}
        cm = ClassMap(**params).fit_embedding(bank, Xe, ye, X_train=X_tr, y_train=y_tr, reference_bank=ref,
                                              progress=progress, should_stop=should_stop)
        return {r: cm if r == first else cm.with_refine(r) for r in refines}

    def _choose_classmap(self, params, Xf, yf, Xv, yv, Xe, ye, val, progress, should_stop) -> dict:
        from ..selection.splits import position_in_class

        seed, bank = self.random_state, self._bank(**params).fit(Xf, yf, should_stop=should_stop)
        C = len(np.asarray(bank.classes_))
        fixed, grid = self.classmap_search(C, bank)
        self.candidates_ = grid = {k: list(v) for k, v in grid.items()}   # widened below: the grid tried
        p_fit = max(grid["p"])                              # every fit at the given grid's largest p
        brute_val = float(np.mean(brute_hit := self.scorer_.brute_hits(bank, Xv, yv)))
        per_class = len(yf) / C
        refs, runs, first = {}, {}, len(grid["reference_penalty"]) * len(grid["embedding_examples"])

        def fit_run(bank_n, ref, factor, examples, Xn, yn, n, s, brute) -> dict:
            """One validation fit (every refine, at p_fit): a learning-curve run that score_run fills, p by p."""
            models = self._fit_refines(bank_n, {**fixed, "reference_penalty": factor, "embedding_examples": examples},
                                       grid["refine"], p_fit, Xe, ye, Xn, yn, ref, should_stop=should_stop, seed=s)
            return {"n": n, "seed": seed if s is None else s, "brute": brute, "hits": {}, "evaluations": {},
                    "models": models, "bank": bank_n}

        def choose_references():    # every (reference penalty, embedding examples) not yet fitted
            for factor, examples in [c for c in product(grid["reference_penalty"], grid["embedding_examples"])
                                     if c not in runs]:
                if factor not in refs:
                    refs[factor] = self._reference_bank(bank, factor, Xf, yf, should_stop)
                runs[(factor, examples)] = run = fit_run(bank, refs[factor], factor, examples, Xf, yf,
                                                         round(per_class), None, brute_hit)
                self.validation_points_ += score_run(self.scorer_, run, grid["p"], Xv, yv, should_stop,
                                                       reference_penalty=factor, embedding_examples=examples)
                report(progress, 0.6 * min(1.0, len(runs) / first), "references on validation")
            rec = reference_penalty(self.validation_points_, brute_val, split=val,
                                    keys=("reference_penalty", "embedding_examples"))
            return rec, rec["chosen"]

        ref_sel = widen({"reference_penalty": grid["reference_penalty"]}, choose_references,
                        bounds={"reference_penalty": (1e-6, 1e6)})
        ref_sel["points"] = list(self.validation_points_)
        self.selection_["references"] = ref_sel
        factor, examples = ref_sel["chosen"]["reference_penalty"], ref_sel["chosen"]["embedding_examples"]
        for other in [r for key, r in runs.items() if key != (factor, examples)]:
            other.pop("models")                             # their points are scored; their fits are not needed
        curve = [runs[(factor, examples)]]
        inverse = np.unique(yf, return_inverse=True)[1]
        halves = np.maximum(1, np.bincount(inverse) // 2)       # per class: the first half of its fit rows
        n, n_half = round(per_class), round(float(np.mean(halves)))
        use_curve = int(self.curve_seeds) >= 2 and 0 < n_half < n
        if use_curve:   # the learning curve of those references: more seeds at the fit size, one fit at half of it
            half = np.flatnonzero(position_in_class(yf) < halves[inverse])
            extra = [(n, seed + j, None) for j in range(1, int(self.curve_seeds))] + [(n_half, seed, half)]
            for j, (size, s, rows) in enumerate(extra):
                check_stop(should_stop)
                Xn, yn = (Xf, yf) if rows is None else (Xf[rows], yf[rows])
                bank_n = bank if rows is None else self._bank(**params).fit(Xn, yn, should_stop=should_stop)
                brute_n = brute_hit if rows is None else self.scorer_.brute_hits(bank_n, Xv, yv)
                ref = refs[factor] if rows is None else self._reference_bank(bank_n, factor, Xn, yn, should_stop)
                curve.append(fit_run(bank_n, ref, factor, examples, Xn, yn, size, s, brute_n))
                report(progress, 0.6 + 0.4 * (j + 1) / len(extra), "learning curve on validation")
        n_final = per_class + len(yv) / C

        def choose_point():         # every p not yet scored, on every run of the curve
            self.validation_points_ += score_run(self.scorer_, curve[0], grid["p"], Xv, yv, should_stop,
                                                   reference_penalty=factor, embedding_examples=examples)
            for run in curve[1:]:
                score_run(self.scorer_, run, grid["p"], Xv, yv, should_stop)
            mine = [q for q in self.validation_points_
                    if (q["reference_penalty"], q["embedding_examples"]) == (factor, examples)]
            single = operating_point(measured_gaps(mine, brute_val), KEYS, split=val, tolerance=self.tolerance,
                                     n_se=self.n_se, by="validation gap to brute force", brute_force_accuracy=brute_val)
            if not use_curve:
                return single, single["chosen"]
            rows, inputs = predicted_gaps(curve, n_final)
            rows = [{"reference_penalty": factor, "embedding_examples": examples, "refine": r["key"][0],
                     "p": r["key"][1], **{k: v for k, v in r.items() if k != "key"}} for r in rows]
            rec = operating_point(
                rows, KEYS, split=val, tolerance=self.tolerance, n_se=self.n_se,
                gaps=f"predicted (at {n_final:g} images per class)",
                by="predicted gap to brute force at the final training size and its standard error (core.selection.curve)",
                extrapolation=inputs, single_size_rule=single["chosen"],
                brute_force_accuracy_by_size={str(r["n"]): float(np.mean(r["brute"])) for r in curve})
            return rec, rec["chosen"]

        self.selection_["classmap_point"] = widen({"p": grid["p"]}, choose_point, bounds={"p": (1, C)}, integer=("p",))
        return dict(self.selection_["classmap_point"]["chosen"])


class _Unfitted:
    """An unfitted bank seen as a fitted one of two classes (an all-pairs bank with its one pair), so settings are
    checked before any work."""

    def __init__(self, bank):
        from ..classify.banks.allpairs import AllPairsBank

        self._bank, self.classes_ = bank, np.arange(2)
        self.pairs_ = np.array([[0, 1]]) if isinstance(bank, AllPairsBank) else None

    def __getattr__(self, name):
        return getattr(self._bank, name)


__all__ = ["ClassMapSearch"]
