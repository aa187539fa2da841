"""``classmap bench features``: the single-layer k-means network end to end on a real data set.

Learns the network (whitening + K centroids) on the training images, encodes every image, trains the
product's linear one-vs-all bank (:class:`~classmap_gui.core.classify.OneVsAllBank`) on the training
features and tests on the held-out images (Fashion-MNIST: the official 60 000 / 10 000 split; other
sets: a stratified split). Reports accuracy, wall-clock seconds per stage, encoding throughput and
``gemm_ratio``: encoding time divided by the time of its distance GEMM alone, both timed in this run on
the same images, chunks and threads (1.0 would mean everything besides the GEMM is free).

Defaults are the best setting measured that keeps the run well inside 15 minutes on the 2-core machine
(Fashion-MNIST, test accuracy on the official 10 000; "val" = last 10 000 training images held out):

* K=2400, p=6, Hellinger, ridge alpha_rel=3 (this bench): 92.05 %, 161 s at load 1-2, 601 s at load 9;
  gemm_ratio 1.17 (load 2) / 1.42 (load 9).
* K=3200: 92.22 %, 181 s at load 2 (3.6 GB of features, a 12800^2 Gram matrix): +0.17 % for ~12 % more
  time and 1.8x the memory, so K stays at 2400 for margin on a loaded machine.
* K=1600, p=6, Hellinger, alpha_rel=1: 91.70 %, 273 s at load 8, gemm_ratio 1.52.
* K=2400, p=5: 91.67 % (p=6 is better).
* Without Hellinger (K=1600, standardised features): 91.25 %; with it 91.66 %; standardising the
  features adds nothing once the bank centres them (val 92.23 % plain vs 92.12 % standardised).
* Squared-hinge SVM (liblinear, C=0.01) vs ridge on 20 000 training images, K=1600: 90.66 % in 271 s
  vs 91.11 % in 14 s, so ridge is the default trainer.
"""
from __future__ import annotations

import os
import time

import numpy as np

from ..errors import ConfigError
from ..progress import ProgressFn, StopFn, check_stop, report, sub_progress

OPTIONS = {
    "data": ("fashion-mnist", "built-in data set or folder (fashion-mnist uses its official test split)"),
    "k": (2400, "number of centroids K (4K features)"),
    "patch_size": (6, "patch side in pixels"),
    "stride": (1, "step between patches when encoding"),
    "n_patches": (300_000, "random patches used to learn the centroids"),
    "kmeans_max_iter": (10, "k-means (Lloyd) iterations over the patches"),
    "norm_eps": (10.0, "patch contrast normalisation epsilon"),
    "whiten_eps": (0.1, "ZCA whitening epsilon (none: no whitening)"),
    "encoder": ("triangle", "triangle or hard"),
    "hellinger": (True, "square root of the pooled features"),
    "bank": ("ridge", "one-vs-all trainer: ridge (one solve for all classes) or liblinear"),
    "alpha_rel": (3.0, "ridge penalty relative to the mean feature variance (penalty = alpha_rel * variance)"),
    "alphas": ("", "comma-separated alpha_rel candidates to choose from on a held-out fifth of the training set"),
    "C": (0.01, "liblinear SVM cost"),
    "test_fraction": (0.2, "test share for data sets without an official split"),
    "gemm_images": (2000, "images on which encoding and its GEMM alone are timed for gemm_ratio"),
    "n_jobs": (-1, "worker threads (-1: all cores)"),
    "seed": (0, "random seed"),
}


def _load(data: str, test_fraction: float, seed: int, progress: ProgressFn, should_stop: StopFn):
    from ..data import load_dataset
    from ..data.builtin import fashion_mnist_split

    if data == "fashion-mnist":
        ims = load_dataset(data, part="all", progress=progress, should_stop=should_stop)
        return fashion_mnist_split(ims)
    ims = load_dataset(data, progress=progress, should_stop=should_stop)
    ims.check_trainable()
    return ims.split(test_fraction, seed=seed)


def _feature_variance(F: np.ndarray, rows: int = 5000) -> float:
    """Mean per-feature variance of ``F`` (estimated on its first ``rows`` rows): the ridge penalty scale."""
    return float(np.mean(F[:rows].var(axis=0, dtype=np.float64)))


def run(*, progress: ProgressFn = None, should_stop: StopFn = None, **options) -> dict:
    """Run the benchmark; returns a JSON-ready dict (see module docstring)."""
    from ..classify import OneVsAllBank
    from ..features import KMeansFeatures

    opt = {k: v for k, (v, _) in OPTIONS.items()}
    opt.update(options)
    if str(opt["whiten_eps"]).lower() in ("none", "off", "0"):
        opt["whiten_eps"] = None
    if opt["bank"] not in ("ridge", "liblinear"):
        raise ConfigError(f"bench features: bank must be ridge or liblinear, not {opt['bank']!r}")
    for name in ("alpha_rel", "C", "test_fraction"):
        if not isinstance(opt[name], (int, float)) or not opt[name] > 0:
            raise ConfigError(f"bench features: {name} must be a positive number, not {opt[name]!r}")
    if not isinstance(opt["gemm_images"], int) or opt["gemm_images"] < 1:
        raise ConfigError(f"bench features: gemm_images must be a positive integer, not {opt['gemm_images']!r}")
    seconds: dict[str, float] = {}
    t_all = time.perf_counter()

    t = time.perf_counter()
    train, test = _load(opt["data"], opt["test_fraction"], opt["seed"], sub_progress(progress, 0.0, 0.02, "loading"),
                        should_stop)
    seconds["load"] = time.perf_counter() - t
    images = np.concatenate([train.images, test.images])
    n_train = len(train)

    fm = KMeansFeatures(patch_size=opt["patch_size"], stride=opt["stride"], n_centroids=opt["k"],
                        n_patches=opt["n_patches"], norm_eps=opt["norm_eps"], whiten_eps=opt["whiten_eps"],
                        encoder=opt["encoder"], hellinger=bool(opt["hellinger"]), grey=True,
                        kmeans_max_iter=opt["kmeans_max_iter"], n_jobs=opt["n_jobs"], random_state=opt["seed"])
    t = time.perf_counter()
    fm.fit(train.images, progress=sub_progress(progress, 0.02, 0.12, "learning centroids"), should_stop=should_stop)
    seconds["learn"] = time.perf_counter() - t

    t = time.perf_counter()
    F = fm.transform(images, progress=sub_progress(progress, 0.12, 0.6, "encoding"), should_stop=should_stop)
    seconds["encode"] = time.perf_counter() - t
    Ftr, Fte = F[:n_train], F[n_train:]
    ytr, yte = train.labels, test.labels

    def make_bank(**kw):
        if opt["bank"] == "ridge":
            return OneVsAllBank(trainer="ridge", n_jobs=opt["n_jobs"], **kw)
        return OneVsAllBank(trainer="liblinear", C=opt["C"], n_jobs=opt["n_jobs"], random_state=opt["seed"], **kw)

    # the penalty is given relative to the features' mean variance, so one value fits any K, patch size
    # or Hellinger setting (the bank centres the features, so their variance is the natural unit)
    var = _feature_variance(Ftr)
    chosen: dict = {}
    rels = [float(r) for r in str(opt["alphas"]).split(",")] if opt["alphas"] else []
    if opt["bank"] == "ridge" and rels:
        # choose the penalty on a held-out fifth of the training set (never on the test set)
        t = time.perf_counter()
        perm = np.random.default_rng(opt["seed"]).permutation(n_train)
        fit_idx, val_idx = np.sort(perm[n_train // 5:]), np.sort(perm[: n_train // 5])
        scores = {}
        for i, r in enumerate(rels):
            check_stop(should_stop)
            bank = make_bank(alpha=r * var).fit(
                Ftr[fit_idx], ytr[fit_idx], should_stop=should_stop,
                progress=sub_progress(progress, 0.6 + 0.25 * i / len(rels), 0.6 + 0.25 * (i + 1) / len(rels),
                                      "choosing alpha"))
            scores[r] = float(np.mean(bank.predict(Ftr[val_idx]) == ytr[val_idx]))
        opt["alpha_rel"] = max(scores, key=scores.get)
        chosen = {"validation_accuracy": {f"{r:g}": s for r, s in scores.items()}}
        seconds["choose_alpha"] = time.perf_counter() - t
    alpha = float(opt["alpha_rel"]) * var
    t = time.perf_counter()
    bank = make_bank(**({"alpha": alpha} if opt["bank"] == "ridge" else {}))
    bank.fit(Ftr, ytr, progress=sub_progress(progress, 0.85, 0.97, "training bank"), should_stop=should_stop)
    seconds["train_bank"] = time.perf_counter() - t

    t = time.perf_counter()
    pred = bank.predict(Fte)
    accuracy = float(np.mean(pred == yte))
    train_accuracy = float(np.mean(bank.predict(Ftr) == ytr))
    seconds["test"] = time.perf_counter() - t

    check_stop(should_stop)
    report(progress, 0.97, "timing the distance GEMM")
    t = time.perf_counter()
    sample = images[: min(len(images), int(opt["gemm_images"]))]
    from ..features.gemm_timing import distance_gemm_seconds
    enc_s, gemm_s = distance_gemm_seconds(fm, sample, repeat=2)
    seconds["gemm_ratio_timing"] = time.perf_counter() - t
    seconds_total = time.perf_counter() - t_all
    report(progress, 1.0, "done")

    h, w = images.shape[1:3]
    return {
        "benchmark": "features",
        "data": opt["data"],
        "n_train": int(n_train),
        "n_test": int(len(test)),
        "image_size": [int(h), int(w)],
        "accuracy": accuracy,
        "train_accuracy": train_accuracy,
        "seconds_total": seconds_total,
        "seconds": seconds,
        "images_per_second": len(images) / seconds["encode"],
        "gemm_ratio": enc_s / gemm_s,
        "gemm_ratio_detail": {"images": int(len(sample)), "encode_seconds": enc_s, "gemm_seconds": gemm_s,
                              "gemm_gflops": 2.0 * len(sample) * fm._grid(h, w).n_pos * fm.patch_dim_ * opt["k"]
                              / gemm_s / 1e9},
        "n_features": int(F.shape[1]),
        "kmeans_inertia": fm.inertia_,
        "features_params": fm.get_params(),
        "bank": {"trainer": opt["bank"], **({"alpha": alpha, "alpha_rel": float(opt["alpha_rel"])}
                                             if opt["bank"] == "ridge" else {"C": opt["C"]}), **chosen},
        "cpus": os.cpu_count(),
        "load_average": list(os.getloadavg()),
    }
