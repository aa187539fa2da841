"""``classmap bench features``: the single-layer k-means network end to end on a real data set.

Learns the network (whitening + K centroids) on the training images (no labels), encodes every image,
trains the product's linear one-vs-all bank (:class:`~classmap_gui.core.classify.OneVsAllBank`) and tests
once on the held-out images (Fashion-MNIST: the official 60 000 / 10 000 split; other sets: a stratified
split). Reports accuracy, wall-clock seconds per stage, encoding throughput and ``gemm_ratio``: encoding
time divided by the time of its distance GEMM alone, both timed in this run on the same images, chunks
and threads (1.0 would mean everything besides the GEMM is free).

Choices: every option given as a comma-separated list of candidates (``k``, ``patch_size``,
``hellinger``, ``alpha_rel``; ``C`` for liblinear) is chosen on a stratified validation part of the
*training* images (``validation_fraction``, 1/6 = 10 000 of Fashion-MNIST's 60 000) by validation
accuracy: for each network candidate the network is learned on the training images and the bank on the
rest of the training part; the best is refitted on the whole training part and tested once. The
``selection`` object of the JSON lists every choice, its candidates and validation scores. Options with
one value are fixed settings of the run (``K=2400``, 6x6 patches, Hellinger: the network the app ships),
not chosen by it; the test set never takes part in a choice.
"""
from __future__ import annotations

import os
import time

import numpy as np

from ..core.errors import ConfigError
from ..core.progress import ProgressFn, StopFn, check_stop, report, sub_progress

OPTIONS = {
    "data": ("fashion-mnist", "built-in data set or folder (fashion-mnist uses its official test split)"),
    "k": ("2400", "number of centroids K (4K features); several, comma-separated: chosen on validation"),
    "patch_size": ("6", "patch side in pixels; several: chosen on validation"),
    "stride": (1, "step between patches when encoding"),
    "n_patches": (300_000, "random patches used to learn the centroids"),
    "kmeans_max_iter": (10, "k-means (Lloyd) iterations over the patches"),
    "norm_eps": (10.0, "patch contrast normalisation epsilon"),
    "whiten_eps": (0.1, "ZCA whitening epsilon (none: no whitening)"),
    "encoder": ("triangle", "triangle or hard"),
    "hellinger": ("true", "square root of the pooled features (true/false; both: chosen on validation)"),
    "bank": ("ridge", "one-vs-all trainer: ridge (one solve for all classes) or liblinear"),
    "alpha_rel": ("1,3,10", "ridge penalty relative to the mean feature variance (penalty = alpha_rel * "
                                "variance); several: chosen on validation"),
    "C": ("0.01", "liblinear SVM cost; several: chosen on validation"),
    "validation_fraction": (1 / 6, "share of every class of the training images held out to choose on"),
    "test_fraction": (0.2, "test share for data sets without an official split"),
    "gemm_images": (2000, "images on which encoding and its GEMM alone are timed for gemm_ratio"),
    "n_jobs": (-1, "worker threads (-1: all cores)"),
    "seed": (0, "random seed"),
}


def _load(data: str, test_fraction: float, seed: int, progress: ProgressFn, should_stop: StopFn):
    from ..core.data import load_dataset
    from ..core.data.builtin import fashion_mnist_split

    if data == "fashion-mnist":
        ims = load_dataset(data, part="all", progress=progress, should_stop=should_stop)
        return fashion_mnist_split(ims)
    ims = load_dataset(data, progress=progress, should_stop=should_stop)
    ims.check_trainable()
    return ims.split(test_fraction, seed=seed)


def _feature_variance(F: np.ndarray, rows: int = 5000) -> float:
    """Mean per-feature variance of ``F`` (estimated on its first ``rows`` rows): the ridge penalty scale."""
    return float(np.mean(F[:rows].var(axis=0, dtype=np.float64)))


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
        else:
            try:
                out.append(cast(x))
            except ValueError:
                raise ConfigError(f"bench features: {x!r} is not a number") from None
    if not out:
        raise ConfigError("bench features: an option has no value")
    return out


def run(*, progress: ProgressFn = None, should_stop: StopFn = None, **options) -> dict:
    """Run the benchmark; returns a JSON-ready dict (see module docstring)."""
    from itertools import product

    from ..core.classify import OneVsAllBank
    from ..core.features import KMeansFeatures
    from .common import selection, stratified_holdout

    opt = {k: v for k, (v, _) in OPTIONS.items()}
    opt.update(options)
    if str(opt["whiten_eps"]).lower() in ("none", "off", "0"):
        opt["whiten_eps"] = None
    if opt["bank"] not in ("ridge", "liblinear"):
        raise ConfigError(f"bench features: bank must be ridge or liblinear, not {opt['bank']!r}")
    ks, patches = _candidates(opt["k"], int), _candidates(opt["patch_size"], int)
    hells = _candidates(opt["hellinger"], bool)
    pens = _candidates(opt["alpha_rel"] if opt["bank"] == "ridge" else opt["C"], float)
    if min(pens) <= 0 or min(ks) < 1 or min(patches) < 1:
        raise ConfigError("bench features: penalties, k and patch_size must be positive")
    for name in ("test_fraction", "validation_fraction"):
        if not isinstance(opt[name], (int, float)) or not 0 < opt[name] < 1:
            raise ConfigError(f"bench features: {name} must lie between 0 and 1, not {opt[name]!r}")
    if not isinstance(opt["gemm_images"], int) or opt["gemm_images"] < 1:
        raise ConfigError(f"bench features: gemm_images must be a positive integer, not {opt['gemm_images']!r}")
    seconds: dict[str, float] = {"learn": 0.0, "encode": 0.0, "choose": 0.0}
    t_all = time.perf_counter()

    t = time.perf_counter()
    train, test = _load(opt["data"], opt["test_fraction"], opt["seed"], sub_progress(progress, 0.0, 0.02, "loading"),
                        should_stop)
    seconds["load"] = time.perf_counter() - t
    n_train = len(train)
    ytr, yte = train.labels, test.labels
    fit_idx, val_idx = stratified_holdout(ytr, float(opt["validation_fraction"]), int(opt["seed"]))

    def make_bank(pen, var):
        if opt["bank"] == "ridge":
            return OneVsAllBank(trainer="ridge", alpha=pen * var, n_jobs=opt["n_jobs"])
        return OneVsAllBank(trainer="liblinear", C=pen, n_jobs=opt["n_jobs"], random_state=opt["seed"])

    nets = list(product(ks, patches, hells))
    scores: list[dict] = []
    best = None                       # (validation accuracy, net, penalty, network, features of train+test)
    for i, (k, patch, hell) in enumerate(nets):
        lo, hi = 0.02 + 0.83 * i / len(nets), 0.02 + 0.83 * (i + 1) / len(nets)
        fm = KMeansFeatures(patch_size=patch, stride=opt["stride"], n_centroids=k, n_patches=opt["n_patches"],
                            norm_eps=opt["norm_eps"], whiten_eps=opt["whiten_eps"], encoder=opt["encoder"],
                            hellinger=hell, grey=True, kmeans_max_iter=opt["kmeans_max_iter"], n_jobs=opt["n_jobs"],
                            random_state=opt["seed"])
        t = time.perf_counter()
        # the network learns from the training images only, without labels: no choice depends on it
        fm.fit(train.images, progress=sub_progress(progress, lo, lo + 0.1 * (hi - lo), "learning centroids"),
               should_stop=should_stop)
        seconds["learn"] += time.perf_counter() - t
        t = time.perf_counter()
        F = fm.transform(np.concatenate([train.images, test.images]),
                         progress=sub_progress(progress, lo + 0.1 * (hi - lo), lo + 0.6 * (hi - lo), "encoding"),
                         should_stop=should_stop)
        seconds["encode"] += time.perf_counter() - t
        Ftr = F[:n_train]
        # the penalty is relative to the features' mean variance, so one value fits any K, patch or Hellinger
        var = _feature_variance(Ftr[fit_idx])
        t = time.perf_counter()
        for j, pen in enumerate(pens):
            check_stop(should_stop)
            bank = make_bank(pen, var).fit(Ftr[fit_idx], ytr[fit_idx], should_stop=should_stop)
            acc = float(np.mean(bank.predict(Ftr[val_idx]) == ytr[val_idx]))
            scores.append({"k": k, "patch_size": patch, "hellinger": hell, "penalty": pen, "accuracy": acc})
            if best is None or acc > best[0]:
                best = (acc, (k, patch, hell), pen, fm, F)
            report(progress, lo + (0.6 + 0.4 * (j + 1) / len(pens)) * (hi - lo), "choosing on validation")
        seconds["choose"] += time.perf_counter() - t
        del F, Ftr
    val_acc, (k, patch, hell), pen, fm, F = best
    Ftr, Fte = F[:n_train], F[n_train:]
    pen_name = "alpha_rel" if opt["bank"] == "ridge" else "C"
    sel = {
        "network": selection({"k": k, "patch_size": patch, "hellinger": hell},
                             [{"k": a, "patch_size": b, "hellinger": c} for a, b, c in nets], scores,
                             by="validation accuracy (best penalty per network)",
                             validation_images=int(len(val_idx))),
        f"bank.{pen_name}": selection(pen, pens, [q for q in scores if (q["k"], q["patch_size"], q["hellinger"])
                                                  == (k, patch, hell)], by="validation accuracy",
                                      validation_images=int(len(val_idx))),
    }

    # refit on the whole training part, test once
    var = _feature_variance(Ftr)
    t = time.perf_counter()
    bank = make_bank(pen, var)
    bank.fit(Ftr, ytr, progress=sub_progress(progress, 0.85, 0.97, "training bank"), should_stop=should_stop)
    seconds["train_bank"] = time.perf_counter() - t

    t = time.perf_counter()
    accuracy = float(np.mean(bank.predict(Fte) == yte))
    train_accuracy = float(np.mean(bank.predict(Ftr) == ytr))
    seconds["test"] = time.perf_counter() - t

    check_stop(should_stop)
    report(progress, 0.97, "timing the distance GEMM")
    t = time.perf_counter()
    images = train.images[: min(n_train, int(opt["gemm_images"]))]
    from ..core.features.gemm_timing import distance_gemm_seconds
    enc_s, gemm_s = distance_gemm_seconds(fm, images, repeat=2)
    seconds["gemm_ratio_timing"] = time.perf_counter() - t
    seconds_total = time.perf_counter() - t_all
    report(progress, 1.0, "done")

    h, w = train.images.shape[1:3]
    return {
        "benchmark": "features",
        "data": opt["data"],
        "n_train": int(n_train),
        "n_test": int(len(test)),
        "image_size": [int(h), int(w)],
        "accuracy": accuracy,
        "validation_accuracy": val_acc,
        "train_accuracy": train_accuracy,
        "selection": sel,
        "seconds_total": seconds_total,
        "seconds": seconds,
        "images_per_second": len(nets) * (n_train + len(test)) / seconds["encode"],
        "gemm_ratio": enc_s / gemm_s,
        "gemm_ratio_detail": {"images": int(len(images)), "encode_seconds": enc_s, "gemm_seconds": gemm_s,
                              "gemm_gflops": 2.0 * len(images) * fm.positions(h, w) * fm.patch_dim_ * k
                              / gemm_s / 1e9},
        "n_features": int(F.shape[1]),
        "kmeans_inertia": fm.inertia_,
        "features_params": fm.get_params(),
        "bank": {"trainer": opt["bank"], **({"alpha": pen * var, "alpha_rel": pen} if opt["bank"] == "ridge"
                                             else {"C": pen})},
        "cpus": os.cpu_count(),
        "load_average": list(os.getloadavg()),
    }
