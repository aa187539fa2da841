"""``classmap bench features``: the single-layer k-means network end to end on a real data set.

Learns the network (whitening + K centroids) on the training images (no labels), encodes every image,
trains the product's linear one-vs-all bank (:class:`~classmap_gui.core.classify.OneVsAllBank`) and tests
once on the held-out images (Fashion-MNIST: the official 60 000 / 10 000 split, ``test_seed`` "official";
other sets: a stratified split drawn with ``test_seed``, which must differ from ``seed``). Reports
accuracy, wall-clock seconds per stage, encoding throughput and ``gemm_ratio``: encoding time over the
time of its distance GEMM alone, on the same images, chunks and threads, in alternating rounds
(``gemm_ratio.median`` / ``min`` / ``max`` over ``rounds``, with the load before and after).

Choices, all on a stratified validation part of the *training* images (``validation_fraction``, 1/6 =
10 000 of Fashion-MNIST's 60 000; :func:`..core.selection.splits.holdout`), by the selection policy
(:mod:`..core.selection.policy`):

* **network** (``k``, ``patch_size``, ``hellinger``, ``flip``: the mirror image of every training image
  added to the bank's training rows) and **solver** (``bank``: ridge or liblinear), each given as
  comma-separated candidates: a coordinate search (the first candidate of every option to
  start, then each option in turn over its candidates, the others held at the best so far) whose
  candidates are scored by accuracy on ``search_validation_images`` validation images with banks
  trained on ``search_images`` images of the fit part (stratified subsets: the search costs a fraction
  of a full run; a network is learned and encoded once for both Hellinger values). ``selection.network``.
* **penalty** (``alpha_rel`` for ridge, ``C`` for liblinear): for the chosen network on the whole fit
  part; best validation accuracy, ties to the stronger penalty (``selection.best_penalty``). The ridge
  bank comes from moments (:class:`..core.classify.banks.ridge_moments.RidgeMoments`: the Gram matrix once,
  one solve per penalty, fit + validation moments added for the refit).

Then the bank is refitted on the whole training part and tested once. With one candidate per option
the run only chooses the penalty: the defaults (K = 1600, 6x6 patches, no Hellinger, no flip, ridge) are
the network the validation-only search chose (``docs/bench/features-search.json``; ``docs/features.md``,
``docs/bench/LEDGER.md``). The network the finalists' run kept (K = 2400, Hellinger) was steered by the official
test set, which had picked it first: it is no default.
"""
from __future__ import annotations

import os
import time

import numpy as np

from ..core.errors import ConfigError
from ..core.progress import ProgressFn, StopFn, check_stop, report, sub_progress
from .common import LoadDuring
from .feature_banks import PenaltyScores

OPTIONS = {
    "data": ("fashion-mnist", "built-in data set or folder (fashion-mnist uses its official test split)"),
    "k": ("1600", "number of centroids K (4K features); several, comma-separated: chosen on validation"),
    "patch_size": ("6", "patch side in pixels; several: chosen on validation"),
    "stride": (1, "step between patches when encoding"),
    "n_patches": (300_000, "random patches used to learn the centroids"),
    "kmeans_max_iter": (10, "k-means (Lloyd) iterations over the patches"),
    "norm_eps": (10.0, "patch contrast normalisation epsilon"),
    "whiten_eps": (0.1, "ZCA whitening epsilon (none: no whitening)"),
    "encoder": ("triangle", "triangle or hard"),
    "hellinger": ("false", "square root of the pooled features (true/false; both: chosen on validation)"),
    "flip": ("false", "add the horizontal mirror image of every training image to the bank's training rows "
                      "(true/false; both: chosen on validation; validation and test images are never mirrored)"),
    "bank": ("ridge", "one-vs-all trainer: ridge (one solve for all classes) or liblinear; both: chosen on validation"),
    "alpha_rel": ("1,3,10,30,100,300", "ridge penalty relative to the mean feature variance "
                                       "(penalty = alpha_rel * variance); several: chosen on validation"),
    "C": ("0.01", "liblinear SVM cost; several: chosen on validation"),
    "validation_fraction": (1 / 6, "share of every class of the training images held out to choose on"),
    "search_images": (10_000, "fit images (a stratified subset) the network / solver candidates are trained on "
                            "when several are given (0: the whole fit part)"),
    "search_validation_images": (0, "validation images (a stratified subset) the candidates are scored on "
                                       "(0: the whole validation part)"),
    "test_fraction": (0.2, "test share for data sets without an official split"),
    "gemm_images": (2000, "images on which encoding and its GEMM alone are timed for gemm_ratio"),
    "timing_rounds": (3, "alternating rounds of the gemm_ratio timing"),
    "n_jobs": (-1, "worker threads (-1: all cores)"),
    "seed": (0, "random seed (centroids, the validation part)"),
    "test_seed": ("official", "the test part: 'official' (Fashion-MNIST's 10 000) or the seed of a stratified split"),
}

NET_KEYS = ("k", "patch_size", "hellinger", "flip", "bank")


def _load(data: str, test_fraction: float, test_seed, progress: ProgressFn, should_stop: StopFn):
    from ..core.data import load_dataset
    from ..core.data.builtin import fashion_mnist_split

    if data == "fashion-mnist":
        if test_seed != "official":
            raise ConfigError("bench features: fashion-mnist is tested on its official test part (test_seed=official)")
        ims = load_dataset(data, part="all", progress=progress, should_stop=should_stop)
        return fashion_mnist_split(ims)
    if test_seed == "official":
        raise ConfigError(f"bench features: {data} has no official test part; give test_seed a number")
    ims = load_dataset(data, progress=progress, should_stop=should_stop)
    ims.check_trainable()
    return ims.split(test_fraction, seed=int(test_seed))


def _candidates(v, cast) -> list:
    """Candidates of an option: a list, or text separated by commas."""
    items = v if isinstance(v, (list, tuple)) else str(v).split(",")
    out = []
    for x in items:
        x = str(x).strip()
        if cast is bool:
            if x.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ConfigError(f"bench features: expected true or false, not {x!r}")
            out.append(x.lower() in ("true", "1", "yes"))
        elif cast is str:
            if x not in ("ridge", "liblinear"):
                raise ConfigError(f"bench features: bank must be ridge or liblinear, not {x!r}")
            out.append(x)
        else:
            try:
                out.append(cast(x))
            except ValueError:
                raise ConfigError(f"bench features: {x!r} is not a number") from None
    if not out:
        raise ConfigError("bench features: an option has no value")
    return out


def _network(opt, k, patch, hell):
    from ..core.features import KMeansFeatures

    return KMeansFeatures(patch_size=patch, stride=opt["stride"], n_centroids=k, n_patches=opt["n_patches"],
                          norm_eps=opt["norm_eps"], whiten_eps=opt["whiten_eps"], encoder=opt["encoder"],
                          hellinger=hell, grey=True, kmeans_max_iter=opt["kmeans_max_iter"], n_jobs=opt["n_jobs"],
                          random_state=opt["seed"])


def _check(opt) -> dict:
    if str(opt["whiten_eps"]).lower() in ("none", "off", "0"):
        opt["whiten_eps"] = None
    cands = {"k": _candidates(opt["k"], int), "patch_size": _candidates(opt["patch_size"], int),
             "hellinger": _candidates(opt["hellinger"], bool), "flip": _candidates(opt["flip"], bool),
             "bank": _candidates(opt["bank"], str),
             "alpha_rel": _candidates(opt["alpha_rel"], float), "C": _candidates(opt["C"], float)}
    if min(cands["alpha_rel"] + cands["C"]) <= 0 or min(cands["k"]) < 1 or min(cands["patch_size"]) < 1:
        raise ConfigError("bench features: penalties, k and patch_size must be positive")
    for name in ("test_fraction", "validation_fraction"):
        if not isinstance(opt[name], (int, float)) or not 0 < opt[name] < 1:
            raise ConfigError(f"bench features: {name} must lie between 0 and 1, not {opt[name]!r}")
    for name in ("gemm_images", "timing_rounds"):
        if not isinstance(opt[name], int) or opt[name] < 1:
            raise ConfigError(f"bench features: {name} must be a positive integer, not {opt[name]!r}")
    ts = str(opt["test_seed"])
    opt["test_seed"] = ts if ts == "official" else int(ts)
    if opt["test_seed"] != "official" and int(opt["test_seed"]) == int(opt["seed"]):
        from ..core.selection.splits import check_fresh

        check_fresh({"seed": opt["test_seed"]}, validation={"seed": opt["seed"]})
    return cands


def _mirror(images: np.ndarray) -> np.ndarray:
    """Images mirrored left to right (a label-preserving change on Fashion-MNIST's garments)."""
    return np.ascontiguousarray(images[:, :, ::-1])


class _Encodings:
    """The search's encoded subsets, one network (k, patch) at a time: the network is learned once (its
    centroids do not depend on Hellinger), the images and the mirrored fit images encoded once; Hellinger
    is the square root of the pooled features, taken on a copy."""

    def __init__(self, opt, images, rows, n_fit, should_stop):
        self.opt, self.images, self.rows, self.n_fit, self.stop = opt, images, rows, n_fit, should_stop
        self.learned: dict = {}
        self.F: dict = {}

    def network(self, k, patch):
        if (k, patch) not in self.learned:
            self.learned[(k, patch)] = _network(self.opt, k, patch, False).fit(self.images, should_stop=self.stop)
        return self.learned[(k, patch)]

    def features(self, k, patch, hell, flip, keep):
        """``(F, mirrored rows or None)``: rows ``rows`` encoded (then the mirrored fit rows if ``flip``)."""
        fm = self.network(k, patch)
        for key in [key for key in self.F if key[:2] not in keep]:
            del self.F[key]
        if (k, patch, False) not in self.F:
            self.F[(k, patch, False)] = fm.transform(self.images[self.rows], should_stop=self.stop)
        if flip and (k, patch, True) not in self.F:
            self.F[(k, patch, True)] = fm.transform(_mirror(self.images[self.rows[: self.n_fit]]),
                                                     should_stop=self.stop)
        F = self.F[(k, patch, False)]
        if flip:
            F = np.concatenate([F, self.F[(k, patch, True)]])
        if hell:
            F = np.sqrt(F)
        mirrored = (np.arange(len(self.rows), len(self.rows) + self.n_fit), np.arange(0)) if flip else None
        return F, mirrored


def run(*, progress: ProgressFn = None, should_stop: StopFn = None, **options) -> dict:
    """Run the benchmark; returns a JSON-ready dict (see module docstring)."""
    from itertools import product

    from ..core.features.gemm_timing import distance_gemm_timing
    from ..core.selection.policy import best_penalty, part, record
    from ..core.selection.splits import holdout
    from ..core.timing import ratio

    opt = {k: v for k, (v, _) in OPTIONS.items()}
    opt.update(options)
    cands = _check(opt)
    seconds: dict[str, float] = {"learn": 0.0, "encode": 0.0, "search": 0.0}
    t_all, load_before = time.perf_counter(), list(os.getloadavg())
    t = time.perf_counter()
    train, test = _load(opt["data"], opt["test_fraction"], opt["test_seed"],
                        sub_progress(progress, 0.0, 0.02, "loading"), should_stop)
    seconds["load"] = time.perf_counter() - t
    n_train = len(train)
    ytr, yte = train.labels, test.labels
    fit_idx, val_idx = holdout(ytr, float(opt["validation_fraction"]), int(opt["seed"]))
    n_val = int(len(val_idx))

    # ---- network and solver: coordinate search on a subset of the fit part, scored on the validation part
    dims = [d for d in NET_KEYS if len(cands[d]) > 1]
    current = {d: cands[d][0] for d in NET_KEYS}
    scores: list[dict] = []
    learned: dict = {}
    if dims:
        t = time.perf_counter()
        n_search = int(opt["search_images"])
        sub = fit_idx
        if 0 < n_search < len(fit_idx):
            sub = fit_idx[holdout(ytr[fit_idx], n_search / len(fit_idx), int(opt["seed"]) + 1)[1]]
        vsub = val_idx
        n_vs = int(opt["search_validation_images"])
        if 0 < n_vs < len(val_idx):
            vsub = val_idx[holdout(ytr[val_idx], n_vs / len(val_idx), int(opt["seed"]) + 2)[1]]
        rows = np.concatenate([sub, vsub])
        enc = _Encodings(opt, train.images, rows, len(sub), should_stop)
        done: dict = {}
        plan = [(None, None)] + [(d, v) for d in dims for v in cands[d]]
        for i, (dim, value) in enumerate(plan):
            net = dict(current, **({dim: value} if dim else {}))
            key = tuple(net[d] for d in NET_KEYS)
            if key not in done:
                F, mirrored = enc.features(net["k"], net["patch_size"], net["hellinger"], net["flip"],
                                           keep={(current["k"], current["patch_size"]), (net["k"], net["patch_size"])})
                y = np.concatenate([ytr[rows], ytr[sub]]) if net["flip"] else ytr[rows]
                banks = PenaltyScores(opt, F, y, np.arange(len(sub)), np.arange(len(sub), len(rows)), should_stop, mirrored)
                pens = cands["alpha_rel" if net["bank"] == "ridge" else "C"]
                accs = banks.scores(net["bank"], pens)
                done[key] = max(a for a in accs if a is not None)
                scores += [{**net, "penalty": p, "accuracy": a} for p, a in zip(pens, accs)]
                del F, banks
            if dim is not None and done[key] > done[tuple(current[d] for d in NET_KEYS)]:
                current = net
            report(progress, 0.02 + 0.5 * (i + 1) / len(plan), "choosing the network on validation")
        learned = enc.learned
        del enc
        seconds["search"] = time.perf_counter() - t
    k, patch, hell, flip, trainer = (current[d] for d in NET_KEYS)
    sel = {"network": record({d: current[d] for d in NET_KEYS},
                             [dict(zip(NET_KEYS, c)) for c in product(*(cands[d] for d in NET_KEYS))],
                             scores, split=part("validation", vsub if dims else val_idx),
                             by="validation accuracy (best penalty per candidate)",
                             rule=("coordinate search: from the first candidates, each option in turn over its "
                                   "candidates with the others at the best so far" if dims else
                                   "fixed: one candidate per option (see docs/bench/LEDGER.md for where it was chosen)"),
                             validation_images=n_val,
                             search_fit_images=int(len(sub)) if dims else None,
                             search_validation_images=int(len(vsub)) if dims else None)}

    # ---- the chosen network on all images; its penalty on the whole fit part
    fm = learned.get((k, patch))
    t = time.perf_counter()
    if fm is None:
        fm = _network(opt, k, patch, hell).fit(train.images, progress=sub_progress(progress, 0.52, 0.57, "learning centroids"),
                                               should_stop=should_stop)
    fm.set_params(hellinger=hell)  # the search's networks are learned once for both (same centroids)
    seconds["learn"] = time.perf_counter() - t
    t = time.perf_counter()
    n_test = len(test)
    F = fm.transform(np.concatenate([train.images, test.images] + ([_mirror(train.images)] if flip else [])),
                     progress=sub_progress(progress, 0.57, 0.75, "encoding"), should_stop=should_stop)
    seconds["encode"] = time.perf_counter() - t
    t = time.perf_counter()
    off = n_train + n_test  # the mirrored training images' rows
    banks = PenaltyScores(opt, F, np.concatenate([ytr, yte] + ([ytr] if flip else [])), fit_idx, val_idx, should_stop,
                   (off + fit_idx, off + val_idx) if flip else None)
    pen_name = "alpha_rel" if trainer == "ridge" else "C"
    pens = cands[pen_name]
    accs = banks.scores(trainer, pens)
    pens, accs = zip(*[(p, a) for p, a in zip(pens, accs) if a is not None])
    sel[f"bank.{pen_name}"] = best_penalty(pens, accs, parameter=f"bank.{pen_name}", split=part("validation", val_idx),
                                           validation_images=n_val)
    pen = sel[f"bank.{pen_name}"]["chosen"]
    seconds["choose"] = time.perf_counter() - t
    report(progress, 0.85, "training the bank")

    # ---- refit on the whole training part, test once
    t = time.perf_counter()
    bank = banks.fitted(trainer, pen, both=True)
    seconds["train_bank"] = time.perf_counter() - t
    t = time.perf_counter()
    accuracy = float(np.mean(bank.predict(F[n_train:off]) == yte))
    train_accuracy = float(np.mean(bank.predict(F[:n_train]) == ytr))
    seconds["test"] = time.perf_counter() - t
    n_features, n_encoded = int(F.shape[1]), int(F.shape[0])
    del F

    check_stop(should_stop)
    report(progress, 0.97, "timing the distance GEMM")
    t = time.perf_counter()
    images = train.images[: min(n_train, int(opt["gemm_images"]))]
    with LoadDuring() as load:
        timing = distance_gemm_timing(fm, images, rounds=int(opt["timing_rounds"]))
    gemm = ratio(timing, "encode", "gemm")
    seconds["gemm_ratio_timing"] = time.perf_counter() - t
    seconds_total = time.perf_counter() - t_all
    report(progress, 1.0, "done")

    h, w = train.images.shape[1:3]
    return {
        "benchmark": "features", "load_during": load.record(),
        "data": opt["data"],
        "test_seed": opt["test_seed"],
        "n_train": int(n_train),
        "n_test": int(len(test)),
        "image_size": [int(h), int(w)],
        "accuracy": accuracy,
        "validation_accuracy": float(max(accs)),
        "train_accuracy": train_accuracy,
        "selection": sel,
        "seconds_total": seconds_total,
        "seconds": seconds,
        "images_per_second": n_encoded / seconds["encode"],
        "gemm_ratio": gemm,
        "gemm_ratio_detail": {"images": int(len(images)), "ms_per_image": timing["ms"],
                              "gemm_gflops": 2.0 * fm.positions(h, w) * fm.patch_dim_ * k
                              / (gemm["denominator_ms"] / 1e3) / 1e9},
        "n_features": n_features,
        "kmeans_inertia": fm.inertia_,
        "features_params": fm.get_params(),
        "bank": {"trainer": trainer, **({"alpha": banks.alpha(pen), "alpha_rel": pen}
                                        if trainer == "ridge" else {"C": pen})},
        "cpus": os.cpu_count(),
        "load_average": list(os.getloadavg()),
        "load_before": load_before,
    }
