"""``classmap bench classmap``: the ClassMap paper's experiments on a many-class set, every choice on validation.

Data (:mod:`.classmap_data`): per class fit / validation / embedding / test parts (glyph-pose 30 / 10 /
10 / 10) with HOG features. Features are not part of any latency.

1-3. **Every choice, and the model**: one call of the product's search, :class:`..core.train.search.ClassMapSearch`
   (what the Train panel and ``classmap train`` run, :func:`..core.train.training.train`), handed the fit,
   validation and embedding parts: the bank penalty, ClassMap's references (reference-bank penalty and
   ``embedding_examples``: the embedding part alone, or with the bank's training part), refine and p, all
   chosen on the validation part by the rules of :mod:`..core.selection.policy` (the operating point on the gap
   predicted at the final training size, :mod:`..core.selection.curve`), then the refit on fit + validation
   (the paper's training part). Its records are ``selection``; the rules and their history are in the
   search's docstring and ``docs/classmap.md``. Before anything is tested, the test part's rows are checked
   against the rows the search was handed (:func:`..core.selection.splits.check_fresh` on their content digests).
   Brute force and the whole test curve (every refine and p, Fig. 3) are measured, and ``selected`` is
   the validation-chosen point with its *test* figures.
4. Boosted vs ``n_random`` random embeddings (CM-RRC) at every p (Fig. 4); unseen classes: the
   embedding built on ``1 - unseen_fraction`` of the classes, tested on the rest (Fig. 5).
5. Latency sweep on synthetic linear banks next to the operation-count limit.

Everything goes through the product's objects: the search's bank and ClassMap (``make_bank``,
``ClassMap.fit_embedding``) and ``ClassMap.predict_result`` (the calls ``Recogniser.predict_features`` makes);
evaluations are counted by the prediction result. ``selection`` records every choice with its candidates,
validation scores and the digest of the rows it was chosen on.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from ..core.errors import ConfigError
from ..core.progress import ProgressFn, StopFn, check_stop, report, sub_progress
from .classmap_data import DEFAULT_DATA, DEFAULT_TEST_SEED, prepare
from .classmap_report import mips_comparison, summary
from ..core.selection.policy import N_SE, TOLERANCE, paired_se, part
from .common import LoadDuring, machine
from .latency import brute_vs_classmap, latency_sweep, medians, speedups
from .latency_model import save_if_asked

OPTIONS = {
    "data": (DEFAULT_DATA, "generated data set with a per-class split (glyph-pose, glyph-pose-small, ...)"),
    "d": (45, "reference classifiers of the ClassMap embeddings"),
    "p_sweep": ("auto", "comma-separated p values: the candidates and the test curve ('auto': the search's, "
                        "core.train.search_space.P_SWEEP below the number of classes)"),
    "refine": ("auto", "refine versions: candidates and test curve ('auto': v2,v3)"),
    "tolerance": (TOLERANCE, "the chosen ClassMap point: fewest evaluations within this of brute force on validation "
                             "(core.selection.policy.operating_point)"),
    "n_se": (N_SE, "the chosen point's predicted final-size gap is raised by this many of its prediction standard "
                   "errors before the tolerance test (core.selection.curve)"),
    "curve_seeds": (3, "validation fits (AdaBoost seeds) of the chosen reference penalty at the fit size: their "
                       "mean gap and spread enter the learning-curve rule (core.selection.curve); at least 2"),
    "n_triples": (60_000, "AdaBoost training triples"),
    "hard_fraction": (0.5, "share of triples whose wrong class is one of the example's strongest confusers"),
    "embedding_examples": ("auto", "examples of the class embeddings and triples, candidates chosen on validation: "
                           "'embedding' (the held-out part alone), 'embedding+training' (with the bank's training "
                           "part), both ('auto') or a comma-separated list"),
    "n_random": (20, "random embeddings (CM-RRC) compared with the boosted one"),
    "unseen_fraction": (0.2, "share of classes left out when building the embedding for the unseen-classes test"),
    "bank": ("ova-ridge", "classifier bank (a linear one-vs-all bank)"),
    "penalties": ("auto", "penalty candidates (ridge alpha / liblinear C), chosen on validation ('auto': the search's "
                          "grid, ridge alphas relative to n * mean feature variance: core.train.search_space.PENALTY_GRID)"),
    "reference_penalties": ("auto", "candidate reference-bank penalties as multiples of the bank's (1: the bank's own "
                            "classifiers are the references), chosen on validation ('auto': 1,3,10,30,100)"),
    "bank_params": ("{}", "further bank parameters as a JSON object"),
    "latency_queries": (300, "queries timed one at a time, in interleaved rounds with brute force (>= 300)"),
    "sweep": (True, "run the synthetic latency sweep (C in {2430, 10000}, D in {1764, 6400})"),
    "mips": (True, "compare the faiss maximum-inner-product peer (IVF and HNSW over the bank's rows; needs faiss)"),
    "cache_dir": (None, "folder for cached HOG features (none: compute them); the CLI passes the user cache"),
    "seed": (0, "random seed"),
    "save_model": (None, "folder for the selected bank, ClassMap and test part (bench roofline --set model=DIR)"),
    "test_seed": (DEFAULT_TEST_SEED, "seed of the freshly generated test part ('none': the old test part, positions "
                                     "50-59 of the seed's set; .classmap_data)"),
}



def _acc(labels, y) -> float:
    return float(np.mean(np.asarray(labels) == y))


def _bank_params(s) -> dict:
    if isinstance(s, dict):
        return dict(s)
    try:
        out = json.loads(s or "{}")
    except json.JSONDecodeError as exc:
        raise ConfigError(f"bench classmap: bank_params must be a JSON object: {exc}") from None
    if not isinstance(out, dict):
        raise ConfigError("bench classmap: bank_params must be a JSON object")
    return out


def _candidates(value, cast=str):
    """An option as the search takes it: ``"auto"``, or a list of comma-separated values."""
    if str(value).strip() == "auto":
        return "auto"
    out = [cast(v.strip()) for v in str(value).split(",") if v.strip()]
    if not out:
        raise ConfigError(f"bench classmap: an option lists no candidates: {value!r}")
    return out


def make_search(opt: dict, bank_name: str, params: dict):
    """The search this bench's options ask for (:class:`..core.train.search.ClassMapSearch`); the acceptance test
    builds the same through :func:`..core.train.training.train` with ``"auto"`` settings."""
    from ..core.train.search import ClassMapSearch
    from ..core.train.search_space import penalty_key
    from ..core.registry import make_bank

    key = penalty_key(make_bank(bank_name, **params))
    bank_params = dict(params)
    if key is not None and key not in params:
        bank_params[key] = _candidates(opt["penalties"], float)
    cm = {"d": int(opt["d"]), "n_triples": int(opt["n_triples"]), "hard_fraction": float(opt["hard_fraction"]),
          "embedding": "boosted", "p": _candidates(opt["p_sweep"], int), "refine": _candidates(opt["refine"]),
          "reference_penalty": _candidates(opt["reference_penalties"], float) if key else 1.0,
          "embedding_examples": _candidates(opt["embedding_examples"])}
    return ClassMapSearch(bank_name, bank_params, cm, tolerance=float(opt["tolerance"]), n_se=float(opt["n_se"]),
                          curve_seeds=int(opt["curve_seeds"]), random_state=int(opt["seed"]))


def curve(models: dict, bank, X, y, p_sweep, should_stop: StopFn = None, brute_correct=None, hits: dict | None = None,
          **tags) -> list[dict]:
    """Accuracy and mean evaluations of every ``(refine, p)``: ``models`` maps refine -> fitted ClassMap.
    With ``brute_correct`` (brute force's per-query hits on the same ``X``) each point also gets
    ``difference_se``: the standard error of its accuracy difference to brute force (:func:`paired_se`).
    ``hits``, if given, receives ``(refine, p) -> (n,) bool`` per-query hits (the learning-curve rule)."""
    out = []
    for refine, cm in models.items():
        for p in p_sweep:
            check_stop(should_stop)
            cm.set_params(p=p)
            res = cm.predict_result(X, top=1, bank=bank)
            hit = np.asarray(res.labels) == y
            if hits is not None:
                hits[(refine, p)] = hit
            out.append({**tags, "refine": refine, "p": p, "accuracy": float(np.mean(hit)),
                        "evaluations": float(np.mean(res.evaluations)),
                        **({"difference_se": paired_se(hit, brute_correct)} if brute_correct is not None else {}),
                        **({"threshold": cm.threshold_} if refine == "v3" else {})})
    return out


def _camera_scores(bank, cm, camera: dict, data: str) -> dict:
    """Brute force and the selected ClassMap point on the camera-style test images: exact class, and
    the paper's real-photo score (same shape, orientation within 30 degrees)."""
    from .classmap_data import data_module

    X, y, names = camera["X_camera"], camera["y_camera"], [str(n) for n in camera["class_names"]]
    match = getattr(data_module(data), "pose_match", None)
    out = {"images": int(len(y))}
    for key, labels in (("brute_force", bank.predict(X)), ("classmap", cm.predict_result(X, bank=bank).labels)):
        labels = np.asarray(labels)
        row = {"accuracy": _acc(labels, y), **_shape_pose(names, y, labels, data)}
        if match is not None:
            row["accuracy_within_30"] = float(np.mean(match([names[i] for i in y], [names[i] for i in labels], 30)))
        out[key] = row
    return out


def _shape_pose(names, y, labels, data: str) -> dict:
    """hand-pose: ``shape_accuracy`` and ``pose_accuracy_within_30`` (:func:`..core.data.hand_pose.pose_scores`)."""
    from ..core.data.hand_pose import pose_scores
    out = pose_scores([str(names[i]) for i in y], [str(names[i]) for i in labels]) if data.startswith("hand-pose") else {}
    return {k: v for k, v in out.items() if k != "class_accuracy"}


def run(*, progress: ProgressFn = None, should_stop: StopFn = None, **options) -> dict:
    """Run the benchmark; returns the JSON-able result (see module docstring)."""
    from ..core.selection.splits import row_ids

    opt = {k: v[0] for k, v in OPTIONS.items()}
    opt.update(options)
    seed, tol, nq = int(opt["seed"]), float(opt["tolerance"]), int(opt["latency_queries"])
    bank_name, params = str(opt["bank"]), _bank_params(opt["bank_params"])
    search = make_search(opt, bank_name, params)
    search.check()
    t_start = time.perf_counter()
    cache_dir = Path(opt["cache_dir"]) if opt["cache_dir"] not in (None, "", "none") else None
    test_seed = None if str(opt["test_seed"]).lower() in ("none", "") else int(opt["test_seed"])
    D = prepare(str(opt["data"]), seed, cache_dir, sub_progress(progress, 0.0, 0.2, "data"), should_stop,
                test_seed=test_seed)
    Xf, yf, Xv, yv = D["X_fit"], D["y_fit"], D["X_val"], D["y_val"]
    Xe, ye, Xt, yt = D["X_embed"], D["y_embed"], D["X_test"], D["y_test"]
    C = len(np.unique(yt))
    result: dict = {"data": opt["data"], "classes": C, "features": int(Xt.shape[1]),
                    "parts_per_class": dict(zip(("fit", "validation", "embedding", "test"),
                                                D["counts"].tolist())),
                    "test_queries": len(Xt), "validation_queries": len(Xv), "embedding_queries": len(Xe),
                    "test_part": ("positions after the embedding part" if test_seed is None
                                  else f"generated afresh with seed {test_seed}"),
                    "test_seed": test_seed,
                    "bank": bank_name, "options": {k: v for k, v in opt.items() if k != "cache_dir"},
                    "cache": cache_dir is not None}

    # 1-3. every choice on validation and the refit on fit + validation: the product's one search
    # the test part (and the camera-style one) must share no row with a part the search is handed: refused
    # before any work (core.selection.splits.check_fresh on the rows' content digests)
    test_rows = row_ids(Xt)
    unseen = {"test": test_rows, **({"camera": row_ids(D["X_camera"])} if "X_camera" in D else {})}
    search.fit(Xf, yf, Xv, yv, Xe, ye, unseen=unseen,
               progress=sub_progress(progress, 0.2, 0.55, "choosing on validation"), should_stop=should_stop)
    result["selection"] = search.selection_
    result["parts"] = {k: part(k, v) for k, v in {**search.parts_, "test": test_rows}.items()}
    bank, ref, models = search.bank_, search.reference_bank_, search.models_
    if getattr(bank, "coef_", None) is None:
        raise ConfigError(f"bench classmap needs a linear one-vs-all bank, {bank_name} has no stacked weights")
    chosen = search.best_params_["classmap"]
    p_sweep = list(search.candidates_["p"])
    camera = {k: D[k] for k in ("X_camera", "y_camera", "class_names") if k in D}
    result["generation_images_per_second"] = float(D.get("generation_images_per_second", np.nan))
    # the examples the class embeddings summarise, as the search fitted them (for the CM-RRC and unseen runs)
    fit_kw = {"reference_bank": ref, "X_train": np.concatenate([Xf, Xv]), "y_train": np.concatenate([yf, yv])}
    del D, Xf, Xv
    result["brute_force"] = {"accuracy": _acc(bank.predict(Xt), yt), "evaluations": C,
                             "bank_params": search.best_params_["bank"]}
    result["embedding_examples_per_class"] = float(
        (len(ye) + (len(fit_kw["y_train"]) if chosen["embedding_examples"] == "embedding+training" else 0)) / C)
    points = []
    with LoadDuring() as load:  # the load while the points' latency rounds ran
        for q in curve(models, bank, Xt, yt, p_sweep, should_stop, reference_penalty=chosen["reference_penalty"],
                       embedding_examples=chosen["embedding_examples"]):
            cm = models[q["refine"]].set_params(p=q["p"])
            t = brute_vs_classmap(bank, cm, Xt, nq)  # brute force and this point in alternating rounds
            ms = {mode: medians(v) for mode, v in t.items()}
            points.append({"embedding": "boosted", "d": int(len(cm.reference_)), **q,
                           "latency_single_ms": ms["single"]["classmap"], "latency_batch_ms": ms["batch"]["classmap"],
                           "brute_force_ms": {mode: {k: v for k, v in m.items() if k != "classmap"} for mode, m in ms.items()},
                           "latency_speedup": speedups(t)})
            load.sample()
    result["load_during"] = load.record()
    report(progress, 0.65, "CM-Boosted test curve")
    selected = next(q for q in points if q["refine"] == chosen["refine"] and q["p"] == chosen["p"])
    selected["reference_bank_params"] = None if ref is None else ref.get_params()
    result["selected"] = selected
    save_if_asked(opt["save_model"], bank, models[chosen["refine"]].set_params(p=chosen["p"]), Xt, yt, chosen)
    # brute force's times: those measured in the selected point's rounds
    result["brute_force"].update({"latency_single_ms": selected["brute_force_ms"]["single"]["brute"],
                                  "kernel_single_ms": selected["brute_force_ms"]["single"]["kernel"],
                                  "latency_batch_ms": selected["brute_force_ms"]["batch"]["brute"],
                                  "kernel_batch_ms": selected["brute_force_ms"]["batch"]["kernel"]})
    models[chosen["refine"]].set_params(p=chosen["p"])

    if camera:  # the camera-style test set (the paper's real photos: 95.3% synthetic, 22.5% real); shape and
        cm_sel = search.classmap_                                     # pose accuracy of the clean test part too
        result["camera"] = _camera_scores(bank, cm_sel, camera, str(opt["data"]))
        result["brute_force"].update(_shape_pose(camera["class_names"], yt, bank.predict(Xt), str(opt["data"])))
        selected.update(_shape_pose(camera["class_names"], yt, cm_sel.predict_result(Xt, bank=bank).labels,
                                    str(opt["data"])))

    # 3b. the peer a user would try instead: top-p by inner product with faiss (bench.mips); its index
    # settings are chosen on the embedding part, which the bank never trained on
    if opt["mips"]:
        try:
            import faiss  # noqa: F401
        except ImportError:
            result["mips"] = {"skipped": "faiss is not installed (pip install 'classmap-studio[bench]')"}
        else:
            from .mips import mips_sweep

            result["mips"] = mips_sweep(bank, Xe, ye, Xt, yt, p_sweep, tolerance=tol, n_single=min(nq, 200),
                                        seed=seed, progress=sub_progress(progress, 0.65, 0.7, "MIPS peer"),
                                        should_stop=should_stop)
            result["mips"]["selection"]["validation_part"] = "embedding (held out from the bank's training)"
            result["mips_comparison"] = mips_comparison(selected, result["mips"])

    # 4. boosted vs random embeddings (Fig. 4), unseen classes (Fig. 5)
    fit_kw["examples"] = chosen["embedding_examples"]
    points += _random_points(bank, fit_kw, Xe, ye, Xt, yt, p_sweep, opt, seed,
                             sub_progress(progress, 0.65, 0.8, "CM-RRC"), should_stop)
    result["classmap"] = points
    result["unseen_classes"] = _unseen(bank, fit_kw, Xe, ye, Xt, yt, p_sweep, opt, seed,
                                       sub_progress(progress, 0.8, 0.9, "unseen classes"), should_stop)
    result["summary"] = summary(result)
    result["sweep"] = (latency_sweep(int(opt["d"]), selected["p"], nq, seed,
                                     sub_progress(progress, 0.9, 1.0, "latency sweep"), should_stop)
                       if opt["sweep"] else [])
    result["seconds"] = time.perf_counter() - t_start
    result.update(machine())
    report(progress, 1.0, "done")
    return result


def _random_curves(bank, Xe, ye, X, y, p_sweep, opt, seed0, progress, should_stop, examples="embedding", **fit_kw):
    """Accuracy and evaluations of ``n_random`` CM-RRC embeddings at every p (refine v2), their class embeddings
    from the chosen ``examples`` (``fit_kw``: the reference bank and the bank's training part)."""
    from ..core.classify.classmap.estimator import ClassMap

    n = int(opt["n_random"])
    acc = {p: [] for p in p_sweep}
    ev = {p: [] for p in p_sweep}
    for s in range(n):
        rcm = ClassMap(d=int(opt["d"]), p=max(p_sweep), embedding="random", embedding_examples=examples,
                       random_state=seed0 + s).fit_embedding(bank, Xe, ye, **fit_kw)
        for q in curve({"v2": rcm}, bank, X, y, p_sweep, should_stop):
            acc[q["p"]].append(q["accuracy"])
            ev[q["p"]].append(q["evaluations"])
        report(progress, (s + 1) / n, "CM-RRC")
    return acc, ev


def _random_points(bank, fit_kw, Xe, ye, Xt, yt, p_sweep, opt, seed, progress, should_stop) -> list[dict]:
    if int(opt["n_random"]) < 1:
        return []
    acc, ev = _random_curves(bank, Xe, ye, Xt, yt, p_sweep, opt, seed + 1000, progress, should_stop, **fit_kw)
    out = []
    for p in p_sweep:
        best = int(np.argmax(acc[p]))
        common = {"d": int(opt["d"]), "p": p, "refine": "v2", "latency_single_ms": None, "latency_batch_ms": None,
                  "n_embeddings": len(acc[p])}
        out.append({"embedding": "random-median", **common, "accuracy": float(np.median(acc[p])),
                    "evaluations": float(np.median(ev[p]))})
        out.append({"embedding": "random-best", **common, "accuracy": float(acc[p][best]),
                    "evaluations": float(ev[p][best])})
    return out


def _unseen(bank, fit_kw, Xe, ye, Xt, yt, p_sweep, opt, seed, progress, should_stop) -> dict:
    classes = np.asarray(bank.classes_)
    C = len(classes)
    rng = np.random.default_rng(seed + 7)
    n_un = int(round(float(opt["unseen_fraction"]) * C))
    if n_un < 1 or n_un >= C - 1:
        return {"unseen_classes": 0, "points": []}
    unseen = np.sort(rng.choice(C, n_un, replace=False))
    seen = classes[np.setdiff1d(np.arange(C), unseen)]
    mask = np.isin(yt, classes[unseen])
    Xu, yu = Xt[mask], yt[mask]
    from ..core.classify.classmap.estimator import ClassMap

    kw = {k: v for k, v in fit_kw.items() if k != "examples"}
    boosted = ClassMap(d=int(opt["d"]), p=max(p_sweep), refine="v2", n_triples=int(opt["n_triples"]),
                       hard_fraction=float(opt["hard_fraction"]), embedding_examples=fit_kw["examples"],
                       random_state=seed).fit_embedding(bank, Xe, ye, train_classes=seen, should_stop=should_stop, **kw)
    bpts = {q["p"]: q for q in curve({"v2": boosted}, bank, Xu, yu, p_sweep, should_stop)}
    ra = {p: [] for p in p_sweep}
    if int(opt["n_random"]) >= 1:
        ra, _ = _random_curves(bank, Xe, ye, Xu, yu, p_sweep, opt, seed + 2000, progress, should_stop,
                               train_classes=seen, **fit_kw)
    return {"unseen_classes": n_un, "test_queries": int(mask.sum()), "brute_force_accuracy": _acc(bank.predict(Xu), yu),
            "points": [{"p": p, "evaluations": bpts[p]["evaluations"], "boosted_accuracy": bpts[p]["accuracy"],
                        "random_median_accuracy": float(np.median(ra[p])) if ra[p] else None,
                        "random_best_accuracy": float(np.max(ra[p])) if ra[p] else None} for p in p_sweep]}
