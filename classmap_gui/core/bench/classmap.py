"""``classmap bench classmap``: the ClassMap paper's experiments on a many-class set.

Stages (features are computed once and are *not* part of any latency):

1. data + HOG features + a linear one-vs-all bank on the train split (cached on disk, safe npz);
2. brute force: the bank's stacked weights, one BLAS call per query/batch;
3. CM-Boosted (d references by AdaBoost, §6) over a sweep of p (Fig. 3), refine v2 and v3;
4. boosted vs ``n_random`` random embeddings of the same d, median and best (Fig. 4);
5. unseen classes: embedding built on ``1 - unseen_fraction`` of the classes, tested on the rest,
   still classified among all classes (Fig. 5);
6. latency sweep on synthetic stacked banks, measured ratio brute / ClassMap next to the
   operation-count limit ``C·D / ((d+p)·D + C·d)``.

Latency is the classification stage only: ``latency_single_ms`` one query at a time (ClassMap's
preallocated :class:`SingleQuery`; brute force ``np.dot`` into a preallocated output, the better
of one BLAS thread and the default), ``latency_batch_ms`` per query in batches of 1000.
Timings are medians of repeated runs; the machine's load average is reported with them.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import numpy as np

from ..errors import ConfigError
from ..progress import ProgressFn, StopFn, check_stop, report, sub_progress

OPTIONS = {
    "data": ("glyph-pose", "data set: glyph-pose, glyph-pose-small or any load_dataset spec with a per-class split"),
    "d": (45, "reference classifiers of the ClassMap embeddings"),
    "p_sweep": ("5,10,15,20,30,40,60,80", "comma-separated p values for the accuracy-vs-evaluations curve"),
    "refine": ("v2,v3", "refine versions to report for CM-Boosted"),
    "n_triples": (60_000, "AdaBoost training triples (all 2430 candidates fit the 600 MB budget at 60 000)"),
    "n_random": (20, "random embeddings (CM-RRC) compared with the boosted one"),
    "unseen_fraction": (0.2, "share of classes left out when building the embedding for the unseen-classes test"),
    "bank": ("ova-ridge", "classifier bank (a linear one-vs-all bank)"),
    "bank_params": ("alpha=1000", "bank parameters as k=v;k=v. Ridge alpha=1000: brute force 89.5% (alpha=1: 89.1%, "
                    "100: 90.2%), and its outputs on other classes keep the similarity ClassMap embeds"),
    "latency_queries": (300, "queries timed one at a time"),
    "sweep": (True, "run the synthetic latency sweep (C in {2430, 10000}, D in {1764, 6400})"),
    "cache": (True, "cache data features and bank under the user cache folder"),
    "seed": (0, "random seed"),
}


def _cache_dir() -> Path:
    env = os.environ.get("CLASSMAP_CACHE")
    if env:
        return Path(env)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("classmap-studio")) / "bench-classmap"


def _load_cached(path: Path) -> dict | None:
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (OSError, ValueError):
        return None


def _save_cached(path: Path, arrays: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, **arrays)
    os.replace(tmp, path)


def _bank_params(s) -> dict:
    out: dict = {}
    for pair in filter(None, str(s or "").replace(";", ",").split(",")):
        if "=" not in pair:
            raise ConfigError(f"bank_params expects k=v pairs, got {pair!r}")
        k, v = pair.split("=", 1)
        try:
            out[k.strip()] = json.loads(v.strip())
        except json.JSONDecodeError:
            out[k.strip()] = v.strip()
    return out


def prepare(data: str, bank: str, bank_params: dict, seed: int, cache: bool,
            progress: ProgressFn = None, should_stop: StopFn = None) -> dict:
    """Features of the train / embedding / test splits and a fitted bank (arrays), cached."""
    try:
        from ..data.glyph_pose import GENERATOR_VERSION
    except ImportError:  # pragma: no cover
        GENERATOR_VERSION = 0
    key = hashlib.sha1(json.dumps([data, bank, bank_params, seed, GENERATOR_VERSION, 2], sort_keys=True)
                       .encode()).hexdigest()[:12]
    path = _cache_dir() / f"{data.replace('/', '_')}-{key}.npz"
    got = _load_cached(path) if cache else None
    if got is not None:
        report(progress, 1.0, "data: cached")
        return got
    from ..registry import make_bank
    from ..data import load_dataset
    from ..data.glyph_pose import split_per_class
    from ..features.hog import HOGFeatures

    ims = load_dataset(data, progress=sub_progress(progress, 0.0, 0.3, "data"), should_stop=should_stop,
                       seed=seed, n_jobs=-1)
    per = int(ims.counts().min())
    counts = (per - 2 * (per // 6), per // 6, per // 6)     # glyph-pose default 60 -> 40 / 10 / 10
    tr, em, te = split_per_class(ims, counts)
    hog = HOGFeatures(n_jobs=-1).fit(tr.images)
    feats = []
    for i, part in enumerate((tr, em, te)):
        check_stop(should_stop)
        feats.append(hog.transform(part.images, progress=sub_progress(progress, 0.3 + 0.1 * i, 0.4 + 0.1 * i, "HOG"),
                                   should_stop=should_stop))
    del ims
    b = make_bank(bank, **bank_params).fit(feats[0], tr.labels, progress=sub_progress(progress, 0.6, 1.0, "bank"),
                                           should_stop=should_stop)
    if getattr(b, "coef_", None) is None:
        raise ConfigError(f"bench classmap needs a linear one-vs-all bank, {bank} has no stacked weights")
    out = {"X_embed": feats[1], "y_embed": em.labels, "X_test": feats[2], "y_test": te.labels,
           "coef": b.coef_, "intercept": b.intercept_, "classes": np.asarray(b.classes_, np.int64)}
    if cache:
        _save_cached(path, out)
    return out


class _Bank:
    """The stacked linear bank as arrays (what ClassMap and brute force read)."""

    def __init__(self, W, b, classes=None):
        self.coef_ = np.ascontiguousarray(W, np.float32)
        self.intercept_ = np.ascontiguousarray(b, np.float32)
        self.classes_ = np.arange(len(W)) if classes is None else classes

    def decision_function(self, X):
        out = X @ self.coef_.T
        out += self.intercept_
        return out


def brute_force_latency(bank, X: np.ndarray, n_single: int, batch: int = 1000) -> tuple[float, float]:
    """(single-query ms, per-query ms in batches) of the stacked GEMV/GEMM with preallocated outputs."""
    from threadpoolctl import threadpool_limits

    W, b = bank.coef_, bank.intercept_
    out = np.empty(len(W), np.float32)
    Q = X[:n_single]

    def one(x):
        np.dot(W, x, out=out)
        np.add(out, b, out=out)
        return out.argmax()

    singles = []
    for limit in (1, None):
        with threadpool_limits(limit):
            singles.append(_time_per_item(one, Q))
    XB = X[:batch] if len(X) >= batch else np.resize(X, (batch, X.shape[1]))
    outb = np.empty((len(XB), len(W)), np.float32)

    def run_batch():
        np.dot(XB, W.T, out=outb)
        np.add(outb, b, out=outb)
        outb.argmax(1)

    tb = _median_time(run_batch) / len(XB)
    return 1e3 * min(singles), 1e3 * tb


def classmap_latency(cm, bank, X: np.ndarray, n_single: int, batch: int = 1000) -> tuple[float, float]:
    """(single-query ms via :class:`SingleQuery`, per-query ms of ``predict`` in batches of ``batch``)."""
    one = cm.single_query(bank)
    ts = _time_per_item(one, X[:n_single])
    XB = X[:batch] if len(X) >= batch else np.resize(X, (batch, X.shape[1]))
    cm.predict(bank, XB[:10])
    tb = _median_time(lambda: cm.predict(bank, XB, batch_size=batch)) / len(XB)
    return 1e3 * ts, 1e3 * tb


def _time_per_item(fn, Q, repeats: int = 5) -> float:
    for x in Q[:20]:
        fn(x)
    best = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for x in Q:
            fn(x)
        best.append((time.perf_counter() - t0) / len(Q))
    return float(np.median(best))


def _median_time(fn, repeats: int = 5) -> float:
    fn()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def op_limit(C: int, D: int, d: int, p: int) -> float:
    """Brute-force operations over ClassMap's: C·D / ((d+p)·D + C·d)."""
    return C * D / ((d + p) * D + C * d)


def latency_sweep(d: int, p: int, n_single: int, seed: int, progress: ProgressFn = None,
                  should_stop: StopFn = None) -> list[dict]:
    """Single-query brute / ClassMap ratio on synthetic stacked banks (random weights, CM-RRC refs:
    the latency does not depend on which references or how good the embedding is)."""
    from ..classify.classmap import ClassMap

    rng = np.random.default_rng(seed)
    rows = []
    grid = [(2430, 1764), (2430, 6400), (10000, 1764), (10000, 6400)]
    for i, (C, D) in enumerate(grid):
        check_stop(should_stop)
        W = rng.standard_normal((C, D), np.float32)
        bank = _Bank(W, np.zeros(C, np.float32))
        Xe = rng.standard_normal((C, D), np.float32)
        cm = ClassMap(d=d, p=p, embedding="random", random_state=seed).fit(bank, Xe, np.arange(C))
        Q = rng.standard_normal((n_single, D), np.float32)
        bs, _ = brute_force_latency(bank, Q, n_single, batch=1)
        cs, _ = classmap_latency(cm, bank, Q, n_single, batch=1)
        rows.append({"C": C, "D": D, "d": d, "p": p, "brute_single_ms": bs, "classmap_single_ms": cs,
                     "ratio": bs / cs, "op_limit": op_limit(C, D, d, p)})
        del W, bank, Xe
        report(progress, (i + 1) / len(grid), "latency sweep")
    return rows


def _acc(labels, y) -> float:
    return float(np.mean(labels == y))


def run(*, progress: ProgressFn = None, should_stop: StopFn = None, **options) -> dict:
    """Run the benchmark; returns the JSON-able result (see module docstring)."""
    from ..classify.classmap import ClassMap

    opt = {k: v[0] for k, v in OPTIONS.items()}
    opt.update(options)
    d = int(opt["d"])
    p_sweep = [int(v) for v in str(opt["p_sweep"]).split(",") if str(v).strip()]
    refines = [r.strip() for r in str(opt["refine"]).split(",") if r.strip()]
    seed = int(opt["seed"])
    t_start = time.perf_counter()
    D = prepare(str(opt["data"]), str(opt["bank"]), _bank_params(opt["bank_params"]), seed, bool(opt["cache"]),
                sub_progress(progress, 0.0, 0.35, "data"), should_stop)
    bank = _Bank(D["coef"], D["intercept"], D["classes"])
    Xe, ye, Xt, yt = D["X_embed"], D["y_embed"], D["X_test"], D["y_test"]
    C = len(bank.classes_)
    nq = int(opt["latency_queries"])
    result: dict = {"data": opt["data"], "classes": C, "features": int(Xt.shape[1]), "test_queries": len(Xt),
                    "embedding_queries": len(Xe), "bank": opt["bank"]}

    # brute force
    check_stop(should_stop)
    S_test = bank.decision_function(Xt)                    # reused to score filter candidates of CM-RRC
    acc_brute = _acc(bank.classes_[S_test.argmax(1)], yt)
    bs, bb = brute_force_latency(bank, Xt, nq)
    result["brute_force"] = {"accuracy": acc_brute, "evaluations": C, "latency_single_ms": bs, "latency_batch_ms": bb}
    report(progress, 0.4, "brute force")

    # CM-Boosted over p (Fig. 3)
    points = []
    t0 = time.perf_counter()
    boosted = ClassMap(d=d, p=max(p_sweep), embedding="boosted", refine="v2", n_triples=int(opt["n_triples"]),
                       random_state=seed).fit(bank, Xe, ye, progress=sub_progress(progress, 0.4, 0.55, "CM-Boosted"),
                                              should_stop=should_stop)
    result["boosted_fit_seconds"] = time.perf_counter() - t0
    result["boosted_d"] = int(len(boosted.reference_))
    cross = None
    if "v3" in refines:
        from ..classify.classmap import class_medians, cross_fit_medians

        M_embed = bank.decision_function(Xe)
        yi = np.searchsorted(bank.classes_, ye)
        fold, E2 = cross_fit_medians(M_embed, yi, C, class_medians(M_embed, yi, C))
        cross = (M_embed, yi, fold, E2)
    for refine in refines:
        for p in p_sweep:
            check_stop(should_stop)
            cm = _variant(boosted, p, refine, cross)
            res = cm.predict(bank, Xt)
            ls, lb = classmap_latency(cm, bank, Xt, nq)
            points.append({"embedding": "boosted", "d": int(len(cm.reference_)), "p": p, "refine": refine,
                           "accuracy": _acc(res.labels, yt), "evaluations": float(res.evaluations.mean()),
                           "latency_single_ms": ls, "latency_batch_ms": lb,
                           **({"threshold": cm.threshold_} if refine == "v3" else {})})
    report(progress, 0.65, "CM-Boosted sweep")

    # boosted vs random (Fig. 4), at every p of the sweep, refine v2
    rand_acc = {p: [] for p in p_sweep}
    rand_eval = {p: [] for p in p_sweep}
    for s in range(int(opt["n_random"])):
        check_stop(should_stop)
        rcm = ClassMap(d=d, p=max(p_sweep), embedding="random", random_state=seed + 1000 + s).fit(bank, Xe, ye)
        for p, (acc, ev) in filter_sweep(rcm, bank, Xt, yt, S_test, p_sweep).items():
            rand_acc[p].append(acc)
            rand_eval[p].append(ev)
        report(progress, 0.65 + 0.1 * (s + 1) / int(opt["n_random"]), "CM-RRC")
    for p in p_sweep:
        points.append({"embedding": "random-median", "d": d, "p": p, "refine": "v2",
                       "accuracy": float(np.median(rand_acc[p])), "evaluations": float(np.median(rand_eval[p])),
                       "latency_single_ms": None, "latency_batch_ms": None, "n_embeddings": len(rand_acc[p])})
        points.append({"embedding": "random-best", "d": d, "p": p, "refine": "v2",
                       "accuracy": float(np.max(rand_acc[p])),
                       "evaluations": float(rand_eval[p][int(np.argmax(rand_acc[p]))]),
                       "latency_single_ms": None, "latency_batch_ms": None, "n_embeddings": len(rand_acc[p])})
    result["classmap"] = points

    # unseen classes (Fig. 5)
    result["unseen_classes"] = _unseen(bank, Xe, ye, Xt, yt, d, p_sweep, opt, seed,
                                       sub_progress(progress, 0.75, 0.85, "unseen classes"), should_stop)

    # targets: best boosted point within 0.5 points of brute force, and its evaluations / latency
    result["summary"] = _summary(result)
    if opt["sweep"]:
        result["sweep"] = latency_sweep(d, 40, min(nq, 200), seed, sub_progress(progress, 0.85, 1.0, "latency sweep"),
                                        should_stop)
    else:
        result["sweep"] = []
    result["seconds"] = time.perf_counter() - t_start
    result["load_average"] = list(os.getloadavg())
    result["cpu_count"] = os.cpu_count()
    report(progress, 1.0, "done")
    return result


def filter_sweep(cm, bank, X, y, S, p_sweep) -> dict:
    """Refine-v2 accuracy and exact mean evaluations at every p from one filter call at max p.

    The candidates for a smaller p are a prefix of those for a larger one, and ``S (n, C)``
    holds every classifier's output, so this equals ``predict`` at each p (used for the many
    CM-RRC embeddings; the CM-Boosted points are measured with ``predict`` itself).
    """
    cands, _ = cm.filter(bank, X, max(p_sweep))
    ci = np.searchsorted(bank.classes_, cands)
    R = np.take_along_axis(S, ci, axis=1)
    is_ref = np.isin(ci, cm.reference_)
    d = len(cm.reference_)
    out = {}
    rows = np.arange(len(X))
    for p in p_sweep:
        pred = cands[rows, R[:, :p].argmax(1)]
        out[p] = (_acc(pred, y), float(np.mean(d + p - is_ref[:, :p].sum(1))))
    return out


def _variant(boosted, p: int, refine: str, cross):
    """The boosted embedding with another p / refine; v3 learns its threshold for that p
    (``cross``: bank outputs on the embedding examples, class indices, folds, fold medians)."""
    from ..classify.classmap import learn_threshold

    cm = _clone(boosted)
    cm.p, cm.refine = p, refine
    if refine == "v3":
        M, yi, fold, E2 = cross
        cm.threshold_ = learn_threshold(M, yi, cm.reference_, cm.alpha_, cm.class_embeddings_,
                                        min(p, cm.n_classes_), fold=fold, E2=E2)
    else:
        cm.threshold_ = None
    return cm


def _clone(cm):
    from sklearn.base import clone

    new = clone(cm)
    for k, v in vars(cm).items():
        if k.endswith("_") and not k.startswith("_"):
            setattr(new, k, v)
    return new


def _unseen(bank, Xe, ye, Xt, yt, d, p_sweep, opt, seed, progress, should_stop) -> dict:
    from ..classify.classmap import ClassMap

    C = len(bank.classes_)
    rng = np.random.default_rng(seed + 7)
    n_un = int(round(float(opt["unseen_fraction"]) * C))
    unseen = np.sort(rng.choice(C, n_un, replace=False))
    seen = np.setdiff1d(np.arange(C), unseen)
    mask = np.isin(yt, bank.classes_[unseen])
    Xu, yu = Xt[mask], yt[mask]
    acc_brute = _acc(bank.classes_[bank.decision_function(Xu).argmax(1)], yu)
    cm = ClassMap(d=d, p=max(p_sweep), embedding="boosted", n_triples=int(opt["n_triples"]),
                  random_state=seed).fit(bank, Xe, ye, train_classes=bank.classes_[seen], should_stop=should_stop)
    out = {"unseen_classes": n_un, "test_queries": int(mask.sum()), "brute_force_accuracy": acc_brute, "points": []}
    Su = bank.decision_function(Xu)
    boosted = filter_sweep(cm, bank, Xu, yu, Su, p_sweep)
    ra = {p: [] for p in p_sweep}
    for s in range(int(opt["n_random"])):
        check_stop(should_stop)
        r = ClassMap(d=d, p=max(p_sweep), embedding="random", random_state=seed + 2000 + s).fit(
            bank, Xe, ye, train_classes=bank.classes_[seen])
        for p, (acc, _) in filter_sweep(r, bank, Xu, yu, Su, p_sweep).items():
            ra[p].append(acc)
        report(progress, (s + 1) / int(opt["n_random"]), "unseen classes")
    for p in p_sweep:
        out["points"].append({"p": p, "evaluations": boosted[p][1], "boosted_accuracy": boosted[p][0],
                              "random_median_accuracy": float(np.median(ra[p])),
                              "random_best_accuracy": float(np.max(ra[p]))})
    return out


def _summary(result: dict) -> dict:
    bf = result["brute_force"]
    pts = [q for q in result["classmap"] if q["embedding"] == "boosted" and q["refine"] == "v2"]
    ok = [q for q in pts if q["accuracy"] >= bf["accuracy"] - 0.005]
    best = min(ok, key=lambda q: q["evaluations"]) if ok else max(pts, key=lambda q: q["accuracy"])
    at = {q["p"]: q for q in pts}
    rnd = {q["p"]: q for q in result["classmap"] if q["embedding"] == "random-median"}
    return {
        "cheapest_boosted_within_0.5_points": best if ok else None,
        "evaluation_reduction": result["classes"] / best["evaluations"],
        "single_query_speedup": (bf["latency_single_ms"] / best["latency_single_ms"]
                                 if best.get("latency_single_ms") else None),
        "batch_speedup": (bf["latency_batch_ms"] / best["latency_batch_ms"] if best.get("latency_batch_ms") else None),
        "boosted_beats_random_median_at": [p for p in at if p in rnd and at[p]["accuracy"] > rnd[p]["accuracy"]],
        "boosted_vs_random_median": [{"p": p, "boosted": at[p]["accuracy"], "random_median": rnd[p]["accuracy"],
                                      "evaluations": at[p]["evaluations"]} for p in sorted(at) if p in rnd],
    }
