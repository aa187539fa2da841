"""``classmap bench scale --data hand-pose``: ClassMap end to end on real class embeddings at 10^5 classes.

``--set orientations=1235``: 81 hand shapes x 1235 orientations (an even grid over all 3-D
orientations) = 100 035 classes, 8 images per class by position: 4 training (positions 0-2 *fit*,
3 *validation*), 2 embedding, 2 test; and ``extra_images`` more per class from their own seed (``extra_seed``,
their own cached folder) that only class embeddings summarise. Stages, each timed (``seconds``):

1. **generation** and **encoding**: images and HOG features in chunks into memory-mapped files under
   ``cache_dir`` (:mod:`..data.hand_chunks`), on threads here or on a 2-worker local Dask cluster
   (``backend=dask``; that cluster also computes the bank's moments).
2. **bank**: ridge one-vs-all from moments (:mod:`..classify.banks.ridge_moments`: Gram matrix once,
   per-class sums, no one-hot matrix). The penalty is chosen by brute-force accuracy on
   ``val_queries`` validation images (the fit part's bank; every candidate scored from one
   eigendecomposition); then the bank is refitted on all 4 training images per class (moments add)
   and its ``(C, D) float32`` weights are written to a ``.npy`` memory map.
3. **embedding**: CM-Boosted on the embedding part with sampled candidate references and hard
   triples (:func:`..classify.classmap.sampled.fit_classmap_sampled`) for the *validation* bank; ``p``
   (and the reference bank's penalty) are chosen on the validation images (exact filter) by the one
   operating-point rule (:func:`..core.selection.policy.operating_point`), together with what a class embedding
   summarises (``class_embeddings``: the embedding images' medians, or the means over every training image and
   the first N extra images, ``all+N``). The refitted bank's class embeddings are then recomputed for the same
   references over the same images.
4. **index**: the filter index chosen on the validation images' embeddings among kinds
   (:func:`.filter_selection.select_filter`: HNSW graphs, the quantised exact scan, the IVF index, the exact
   scan; each one's recall@p and time measured, the fastest reaching ``target_recall`` kept), then built on
   the final class embeddings and kept with the model; a graph's beam is then held to the target once more
   on images of retired test parts (``recheck_seeds``, now validation) under the final model
   (:func:`.graph_selection.recheck_beam`), after p itself is held to the operating-point rule there
   (:func:`.hand_parts.recheck`).
5. **test** once on ``test_queries`` images of a test part generated afresh with ``test_seed`` (2 per
   class, its own cached folder; ``test_seed=none``: positions 6-7 of the seed's set, seen by earlier
   runs): brute force (all C classifiers, one blocked GEMM over the weights) and ClassMap
   (``ClassMap.predict_result``, the call ``Recogniser.predict_features`` makes): exact-class accuracy,
   ``accuracy_within_30`` (same shape, orientation within 30°: ``hand_pose.pose_match``), evaluations,
   the index's recall@p against the exact filter; latencies from ``bench.latency`` (interleaved
   rounds on ``latency_queries`` queries; ratios as median, min, max over rounds), both methods on the
   weights read into RAM (``weights_in_memory``), after waiting for a quiet machine when
   ``quiet_before_timing`` is set.

``peak_memory_gb`` is this process's peak resident set (``ru_maxrss``; memory-mapped pages a stage
touches count while mapped, so feature rows are read through short-lived maps). ``save_model``
writes the final recogniser (HOG + bank + ClassMap; the weights as a memory-mappable member) for
the app.
"""
from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

import numpy as np

from ..core.errors import ConfigError
from ..core.progress import ProgressFn, StopFn, check_stop, report, sub_progress
from ..core.selection.policy import TOLERANCE, best_penalty, measured_gaps, operating_point, paired_se_from_rates, part
from ..core.selection.splits import check_fresh, row_ids
from .common import LoadDuring, cache_key, floats
from .hand_parts import (TEST, check_extra_seed, class_means, embedding_kinds, extra_chunks, extra_part, feature_chunks,
                         read_rows, recheck, test_part)
from .scale_real_measures import peak_gb, save_model, scores, stage_times
from .scale_real_report import real_report

#: positions within each class's 8 images
FIT, VALIDATION, EMBEDDING = (0, 1, 2), (3,), (4, 5)
IMAGES_PER_CLASS = 8
#: reference classifiers with --data hand-pose unless --d is given (validation at 10^4 classes: d=45 stayed
#: 1-2 points below brute force at p=160; d=100 with a 10x smoother reference bank matched it at p=40)
REAL_D = 100

REAL_OPTIONS = {
    "data": (None, "real class embeddings: 'hand-pose' (default: synthetic embeddings)"),
    "orientations": (1235, "hand-pose: orientations per shape (81 x 1235 = 100 035 classes; 126 for ~10^4)"),
    "shapes": (None, "hand-pose: shapes (count or names; default all 81)"),
    "backend": ("local", "hand-pose: where generation, encoding and the bank's moments run: local or dask "
                "(a 2-worker local cluster)"),
    "scheduler": (None, "hand-pose, backend=dask: a Dask scheduler's address (tcp://HEAD:8786) instead of the local "
                  "2-worker cluster; the workers must see cache_dir at the same path"),
    "cache_dir": (None, "hand-pose: folder for the memory-mapped images, features and weights (never the repo)"),
    "penalties": ("300,1000,3000,10000", "hand-pose: ridge penalty candidates, chosen on validation"),
    "p_candidates": ("10,20,40,80,160,320,640", "hand-pose: ClassMap p candidates, chosen on validation"),
    "d_candidates": ("", "hand-pose: reference-classifier counts (d) chosen on validation with p (default: --d)"),
    "class_embeddings": ("embedding,all,all+4,all+8,all+16", "hand-pose: candidates for the images a class embedding "
                         "summarises, chosen on validation with p: 'embedding' (medians over the 2 embedding images), "
                         "'all' (means over the embedding images and the bank's training images: fit on validation, "
                         "fit + validation at the end) or 'all+N' (and the first N extra images)"),
    "extra_images": (16, "hand-pose: images per class generated with extra_seed for class embeddings only (never the "
                     "bank, a test or a re-check part; 0: none)"),
    "extra_seed": (100, "hand-pose: the seed of the extra embedding images (not the training, test or a re-check seed)"),
    "tolerance": (TOLERANCE, "hand-pose: p (with the reference penalty, d and class embeddings) by the one "
                  "operating-point rule (core.selection.policy.operating_point): fewest evaluations whose validation gap to "
                  "brute force plus one paired standard error is within this"),
    "filter": ("auto", "hand-pose: the filter index: auto (every kind of filter_kinds measured on validation, the "
               "fastest reaching target_recall kept: bench.filter_selection), or one of hnsw, scan, ivf, exact"),
    "filter_kinds": ("hnsw,scan,ivf,exact", "hand-pose: the kinds filter=auto measures: hnsw (an L1 graph, walked by faiss and over codes), "
                     "scan (quantised exact scan + re-rank), ivf (the product's IVF), exact"),
    "hnsw_m": ("16,32", "hand-pose: HNSW links per class embedding (candidates, comma separated)"),
    "hnsw_ef_construction": ("80,200", "hand-pose: HNSW build beams (candidates, comma separated; every m x beam "
                             "graph is measured)"),
    "weights_in_memory": (True, "hand-pose: test and time with the (C, D) float32 weights read into RAM (both brute "
                          "force and ClassMap's refine; false: both read the memory-mapped file)"),
    "reference_penalties": ("10", "hand-pose: reference-bank penalty factors (x the bank's; 1 = the bank's own "
                            "classifiers), chosen on validation with p"),
    "n_candidates": (1000, "hand-pose: candidate reference classifiers sampled for boosting"),
    "n_triples": (60_000, "hand-pose: AdaBoost triples"),
    "n_hard_examples": (1500, "hand-pose: embedding examples whose confusers (whole-bank top 10) give hard triples"),
    "test_queries": (3000, "hand-pose: test images scored by both brute force and ClassMap"),
    "latency_queries": (300, "hand-pose: queries timed one at a time, in interleaved rounds with brute force"),
    "latency_rounds": (5, "hand-pose: interleaved timing rounds"),
    "latency_batch": (128, "hand-pose: batch size of the batch latency"),
    "quiet_before_timing": (0, "hand-pose: before the latency rounds wait up to this many seconds for the 1-minute "
                            "load average to fall below 1.5 (the JSON records whether it did)"),
    "save_model": (None, "hand-pose: also save the final recogniser to this folder (for the app)"),
    "recheck_seeds": ("", "hand-pose: test seeds of retired test parts (now validation) whose images re-check the chosen "
                      "p and graph beam under the final model (comma separated; none: no re-check)"),
    "recheck_images": (6000, "hand-pose: images of those parts the re-check scores (1000 of them for the beam)"),
}


def _candidates(o: dict) -> tuple[list, list, list, dict, list, list]:
    """The candidates each choice is made among, from the options, checked: ``(penalties, p, d, class
    embeddings, filter kinds, HNSW (m, ef_construction) grid)``; ConfigError naming the option."""
    from .filter_selection import KINDS

    penalties = floats(o["penalties"], "penalties")
    p_cands = sorted(int(v) for v in floats(o["p_candidates"], "p_candidates"))
    if not penalties or not p_cands or min(penalties) <= 0 or min(p_cands) < 1:
        raise ConfigError("penalties must be positive and p_candidates >= 1")
    d_cands = sorted({int(v) for v in floats(o["d_candidates"], "d_candidates")}) if o.get("d_candidates") \
        else [int(o["d"])]
    if min(d_cands) < 1:
        raise ConfigError(f"d_candidates must be positive, got {o['d_candidates']!r}")
    emb_kinds = embedding_kinds([v.strip() for v in str(o["class_embeddings"]).split(",") if v.strip()],
                                int(o.get("extra_images") or 0))
    filt = str(o["filter"])
    kinds = [v.strip() for v in str(o["filter_kinds"]).split(",") if v.strip()] if filt == "auto" else [filt]
    if not kinds or any(k not in KINDS for k in kinds):
        raise ConfigError(f"bench scale: filter auto or one of {', '.join(KINDS)} (filter_kinds likewise), got "
                          f"{filt!r} / {o.get('filter_kinds')!r}")
    hnsw_grid = [(int(m), int(e)) for m in floats(o["hnsw_m"], "hnsw_m")
                 for e in floats(o["hnsw_ef_construction"], "hnsw_ef_construction")]
    return penalties, p_cands, d_cands, emb_kinds, kinds, hnsw_grid


def run_real(o: dict, progress: ProgressFn = None, should_stop: StopFn = None) -> dict:
    """The hand-pose scale benchmark (options: ``scale.OPTIONS``); returns the ``real`` object and the
    selections (see the module docstring)."""
    from ..core.classify.filters import AUTO_INDEX_FROM
    from ..core.classify.filters.exact import ExactFilter
    from ..core.classify.classmap.sampled import fit_classmap_sampled, hard_confusers, set_mean_class_embeddings
    from ..core.classify.banks.ridge_moments import ova_ridge_bank, ridge_moments, top_k_linear
    from ..core.data.hand_chunks import FEATURES_FILE, build_hand_pose_memmap
    from ..core.parallel import parallel_backend
    from ..core.timing import wait_for_quiet
    from .latency import brute_vs_classmap, medians as median_ms
    from .filter_selection import build_chosen, select_filter
    from .ivf_selection import exact_topp, recall_at_p

    if o.get("data") != "hand-pose":
        raise ConfigError(f"bench scale: --data must be hand-pose (or left out for synthetic), got {o.get('data')!r}")
    backend = str(o.get("backend") or "local")
    if backend not in ("local", "dask"):
        raise ConfigError(f"bench scale: backend must be local or dask, got {backend!r}")
    if not o.get("cache_dir"):
        raise ConfigError("bench scale --data hand-pose needs --cache-dir (a folder outside the repo, e.g. /tmp/...)")
    seed = int(o["seed"])
    rechecks = [int(v) for v in floats(o.get("recheck_seeds") or "", "recheck_seeds")]
    if str(o.get("test_seed")).lower() not in ("none", ""):
        check_fresh({"seed": o["test_seed"]}, validation={"seed": seed}, **{f"re-check {v}": {"seed": v} for v in rechecks})
    if int(o.get("extra_images") or 0) > 0:
        check_extra_seed(o, seed)
    penalties, p_cands, d_cands, emb_kinds, kinds, hnsw_grid = _candidates(o)
    load_start = list(os.getloadavg())
    t_all = time.perf_counter()
    seconds: dict[str, float] = {}
    spec = {"orientations": int(o["orientations"]), "shapes": o.get("shapes"), "seed": seed, "ipc": IMAGES_PER_CLASS}
    folder = Path(o["cache_dir"]).expanduser() / f"hand-pose-{cache_key(spec)}"
    where = parallel_backend("dask", scheduler=o.get("scheduler") or None, n_workers=2) if backend == "dask" else \
        contextlib.nullcontext({"backend": "local"})
    with where as placed:
        report(progress, 0.0, "generating hand-pose")
        data = build_hand_pose_memmap(folder, shapes=o.get("shapes"), orientations=spec["orientations"],
                                      images_per_class=IMAGES_PER_CLASS, seed=seed, n_jobs=2,
                                      progress=sub_progress(progress, 0.0, 0.25), should_stop=should_stop)
        seconds["generation"], seconds["encoding"] = data.seconds["generation"], data.seconds["encoding"]
        extra = extra_part(o, spec, sub_progress(progress, 0.25, 0.3), should_stop) \
            if any(emb_kinds.values()) else None
        if extra is not None:
            seconds["extra_generation"], seconds["extra_encoding"] = (extra[0].seconds["generation"],
                                                                      extra[0].seconds["encoding"])
        C, fpath = data.n_classes, data.folder / FEATURES_FILE
        D = int(data.features.shape[1])
        names = data.class_names
        # ---- bank: moments of the fit and validation parts (on the cluster when there is one)
        t = time.perf_counter()
        fit_rows, val_rows = data.rows(FIT), data.rows(VALIDATION)
        mom_fit = ridge_moments(str(fpath), data.labels(fit_rows), C, rows=fit_rows, n_jobs=2,
                                progress=sub_progress(progress, 0.3, 0.35), should_stop=should_stop)
        mom_val = ridge_moments(str(fpath), data.labels(val_rows), C, rows=val_rows, shift=mom_fit.shift, n_jobs=2,
                                should_stop=should_stop)
        placed = dict(placed)
    rng = np.random.default_rng(seed)
    vq = np.sort(rng.choice(val_rows, size=min(len(val_rows), int(o.get("real_val_queries") or 1000)), replace=False))
    Xv, yv = read_rows(fpath, vq), data.labels(vq)
    seen = {"validation": row_ids(Xv)}     # the rows choices are made on, checked against the test rows below
    path = mom_fit.path()
    report(progress, 0.37, "bank: penalty on validation")
    tops = path.top_k(Xv, penalties, 1, should_stop=should_stop)
    val_acc = {a: float(np.mean(tops[a][:, 0] == yv)) for a in tops}
    sel_penalty = best_penalty(penalties, [val_acc[float(a)] for a in penalties], parameter="bank.alpha",
                               split=part("validation", vq), by="brute-force validation accuracy", queries=len(vq))
    alpha = float(sel_penalty["chosen"])
    bf_val_pred = tops[alpha][:, 0]
    W_val, b_val = path.weights(alpha)
    bank_val = ova_ridge_bank(W_val, b_val, alpha)
    del tops
    seconds["bank"] = time.perf_counter() - t
    check_stop(should_stop)

    # ---- embedding: CM-Boosted for the validation bank; reference penalty and p on validation
    t = time.perf_counter()
    emb_rows = data.rows(EMBEDDING)
    Xe, ye = read_rows(fpath, emb_rows), data.labels(emb_rows)
    seen["embedding"] = row_ids(Xe)
    hard = hard_confusers(bank_val, Xe, int(o["n_hard_examples"]), 10, seed)
    factors = floats(o["reference_penalties"], "reference_penalties")
    big = C >= AUTO_INDEX_FROM
    bf_val = val_acc[alpha]
    curve, models, embeds = [], {}, {}
    fits = [(f, dd) for f in factors for dd in d_cands]
    for fi, (f, dd) in enumerate(fits):
        rows_of = None if f == 1 else (lambda r, a=alpha * f, fit=path: fit.weight_rows(a, r))
        cm = fit_classmap_sampled(bank_val, Xe, ye, d=dd, p=max(p_cands), n_candidates=int(o["n_candidates"]),
                                  n_triples=int(o["n_triples"]), reference_rows=rows_of, hard=hard, filter="exact",
                                  random_state=seed,
                                  progress=sub_progress(progress, 0.4 + 0.2 * fi / len(fits),
                                                        0.4 + 0.2 * (fi + 1) / len(fits)), should_stop=should_stop)
        models[(f, dd)], medians = cm, cm.class_embeddings_
        # 'all': the fit images (the validation bank's training) join the embedding images; 'all+N': N extra ones
        means = class_means(cm, bank_val, emb_kinds, feature_chunks(fpath, data, fit_rows, [(Xe, ye)]), extra)
        for v in emb_kinds:
            cm.set_class_embeddings(medians if emb_kinds[v] is None else means[v])  # the exact filter, on validation
            embeds[(f, dd, v)] = cm.class_embeddings_
            for p in p_cands:
                cm.set_params(p=min(p, C))
                pr = cm.predict_result(Xv, top=1, bank=bank_val)
                lost = float(np.mean((pr.labels != yv) & (bf_val_pred == yv)))
                gained = float(np.mean((pr.labels == yv) & (bf_val_pred != yv)))
                curve.append({"reference_penalty": f, "d_requested": dd, "d": int(len(cm.reference_)),
                              "class_embeddings": v, "p": p,
                              "accuracy": float(np.mean(pr.labels == yv)),
                              "agreement": float(np.mean(pr.labels == bf_val_pred)), "lost": lost,
                              "difference_se": paired_se_from_rates(lost, gained, len(yv)),
                              "evaluations": float(pr.evaluations.mean())})
                check_stop(should_stop)
    sel_p = operating_point(measured_gaps(curve, bf_val), ("p", "reference_penalty", "class_embeddings", "d_requested"),
                            split=part("validation", vq), tolerance=float(o["tolerance"]), by="validation gap to brute force (exact filter), its "
                            "paired standard error, and evaluations", brute_force_accuracy=bf_val, queries=len(vq),
                            parameter="classmap.p, classmap.reference_penalty, class_embeddings, d")
    best = sel_p["chosen"]
    p, factor, emb_kind, d = best["p"], best["reference_penalty"], best["class_embeddings"], best["d_requested"]
    cm = models[(factor, d)]
    cm.set_class_embeddings(embeds[(factor, d, emb_kind)])
    del models, embeds
    seconds["embedding"] = time.perf_counter() - t
    refs = cm.reference_
    if cm.reference_coef_ is not None:
        Wv_refs, bv_refs = cm.reference_coef_, cm.reference_intercept_
    else:
        Wv_refs, bv_refs = np.asarray(W_val[refs]), b_val[refs]
    Fv = (Xv @ Wv_refs.T + bv_refs).astype(np.float32)
    del W_val, bank_val, path

    # ---- the bank refitted on all four training images per class (moments add); weights to a memory map
    t = time.perf_counter()
    path = (mom_fit + mom_val).path()
    del mom_fit, mom_val
    wfile = folder / f"coef-{backend}.npy"
    W = np.lib.format.open_memmap(wfile, mode="w+", dtype=np.float32, shape=(C, D))
    _, b = path.weights(alpha, out=W)
    W.flush()
    del W
    if cm.reference_coef_ is not None:  # the reference bank refitted too
        cm.reference_coef_, cm.reference_intercept_ = path.weight_rows(alpha * factor, refs)
    del path
    W = np.load(wfile, mmap_mode="r")
    bank = ova_ridge_bank(W, b, alpha)
    seconds["bank"] += time.perf_counter() - t
    report(progress, 0.65, "index: nlist/nprobe on validation")

    # ---- index: chosen on the validation embeddings, built on the final ones
    t_sel = time.perf_counter()
    A = np.ascontiguousarray(cm.class_embeddings_ * cm.alpha_)
    k = min(p, C)
    exact_v = exact_topp(Fv * cm.alpha_, A, k)
    _, sel_index = select_filter(cm.class_embeddings_, cm.alpha_, Fv, exact_v, k, target=float(o["target_recall"]),
                                 kinds=kinds, hnsw_grid=hnsw_grid, seed=seed, should_stop=should_stop)
    chosen = sel_index["chosen"]
    seconds["index_selection"] = time.perf_counter() - t_sel
    del A
    t = time.perf_counter()
    if emb_kinds[emb_kind] is not None:  # every training image (fit + validation) joins the embedding images
        set_mean_class_embeddings(cm, bank, final_embedding_chunks(fpath, data, Xe, ye, extra, emb_kinds[emb_kind]))
    else:
        cm.update_class_embeddings(bank, Xe, ye)
    seconds["embedding"] += time.perf_counter() - t
    cm.set_params(p=k)
    t = time.perf_counter()
    index = build_chosen(chosen, cm.class_embeddings_, cm.alpha_, seed)
    if rechecks:  # p and the graph beam under the final model, on retired test parts (now validation)
        again = recheck(o, spec, data, fpath, cm, bank, index if chosen["method"] == "hnsw" else None, p_cands,
                        rechecks, should_stop)
        sel_p["final_check"], k = again["p"], int(cm.p)
        if again["beam"] is not None:
            sel_index["final_check"], chosen["ef_search"] = again["beam"], again["beam"]["ef_search"]
    cm.use_filter(index)  # used now, and saved with the model
    seconds["index"] = time.perf_counter() - t
    del Xe
    report(progress, 0.75, "test")

    # ---- test once
    t = time.perf_counter()
    Wr, br = (cm.reference_coef_, cm.reference_intercept_) if cm.reference_coef_ is not None else \
        (np.asarray(W[refs]), b[refs])
    tdata, tpath, test_rows = test_part(o, spec, data, fpath, should_stop)
    seconds["test_part"] = time.perf_counter() - t  # its generation and encoding (or reading the cached part)
    if o.get("weights_in_memory", True) not in (False, "false", "0", 0):  # both methods read RAM, not the map
        W = np.array(W)
        bank = ova_ridge_bank(W, b, alpha)
    tq = np.sort(rng.choice(test_rows, size=min(len(test_rows), int(o["test_queries"])), replace=False))
    Xt, yt = read_rows(tpath, tq), tdata.labels(tq)
    check_fresh({"rows": row_ids(Xt)}, **{k: {"rows": v} for k, v in seen.items()})
    true_names = [names[i] for i in yt]
    bf_pred = top_k_linear(Xt, W, b, 1)[:, 0]
    pr = cm.predict_result(Xt, top=1, bank=bank)
    Ft = (Xt @ Wr.T + br).astype(np.float32)
    got = index.search(Ft, k)[0]
    exact_t = ExactFilter().fit(cm.class_embeddings_, cm.alpha_).search(Ft, k)[0]
    rec = recall_at_p(got, exact_t)
    seconds["test"] = time.perf_counter() - t - seconds["test_part"]
    report(progress, 0.85, "latency")
    t = time.perf_counter()
    nlat, batch = int(o["latency_queries"]), int(o["latency_batch"])
    wait = float(o.get("quiet_before_timing") or 0)  # the timing on a machine at load < 1.5, waiting up to this long
    quiet = wait_for_quiet(max_wait_s=wait, threshold=1.5, should_stop=should_stop) if wait > 0 else None
    with LoadDuring(threshold=1.5) as load:  # the threshold its wait for a quiet machine used
        timing = brute_vs_classmap(bank, cm, Xt, nlat, batch, rounds=int(o["latency_rounds"]))
    ms = {mode: median_ms(v) for mode, v in timing.items()}
    stage_ms = stage_times(cm, bank, index, Xt[:nlat], Ft[:nlat], k)
    seconds["latency"] = time.perf_counter() - t
    brute = {**scores([names[i] for i in bf_pred], true_names, bf_pred, yt),
             "evaluations": C, "latency_single_ms": ms["single"]["brute"], "latency_batch_ms": ms["batch"]["brute"],
             "kernel_single_ms": ms["single"]["kernel"], "kernel_batch_ms": ms["batch"]["kernel"]}
    classmap = {**scores([names[i] for i in pr.labels], true_names, pr.labels, yt),
                "evaluations": float(pr.evaluations.mean()), "latency_single_ms": ms["single"]["classmap"],
                "latency_batch_ms": ms["batch"]["classmap"], "d": int(len(refs)), "p": int(k), "reference_penalty": factor,
                "class_embeddings": emb_kind,
                "filter": chosen["method"] if big else "exact (ClassMap uses its index from "
                                                      f"{AUTO_INDEX_FROM} classes)",
                "filter_params": {k2: v for k2, v in chosen.items() if k2 != "method"},
                "recall_at_p": {"mean": float(rec.mean()), "min": float(rec.min())},
                "stage_ms": stage_ms}
    if o.get("save_model"):
        t = time.perf_counter()
        save_model(o["save_model"], bank, cm, names, chosen, {"classmap": classmap, "brute_force": brute})
        seconds["save_model"] = time.perf_counter() - t
    seconds["total"] = time.perf_counter() - t_all
    real = real_report(o, spec=spec, data=data, tdata=tdata, extra=extra, used_extra=emb_kinds[emb_kind], names=names,
                       D=D, queries={"validation": len(vq), "test": len(tq)}, brute=brute, classmap=classmap,
                       timing=timing, d=len(refs), p=k, bank={"alpha": alpha, "weights_file": wfile, "W": W},
                       quiet=quiet, seconds=seconds, placed=placed, load_start=load_start, folder=folder,
                       peak=peak_gb(), images_per_class=IMAGES_PER_CLASS,
                       split_positions={"fit": list(FIT), "validation": list(VALIDATION), "embedding": list(EMBEDDING),
                                        "test": list(TEST)})
    sels = {"penalty": sel_penalty, "p": sel_p, "index": sel_index}
    return {"real": {**real, "load_during": load.record()}, "selection": sels}


def final_embedding_chunks(fpath: Path, data, Xe: np.ndarray, ye: np.ndarray, extra, n_extra: int):
    """The images of the final class means, in the order they are summed: the embedding images ``(Xe, ye)``,
    every training image (fit + validation), then the first ``n_extra`` extra images per class."""
    train = np.sort(np.concatenate([data.rows(FIT), data.rows(VALIDATION)]))
    yield from feature_chunks(fpath, data, train, [(Xe, ye)])
    yield from extra_chunks(extra, n_extra)


__all__ = ["EMBEDDING", "FIT", "REAL_OPTIONS", "TEST", "VALIDATION", "final_embedding_chunks", "read_rows", "run_real"]
