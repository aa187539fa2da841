"""The peer a user would try first for fast one-vs-all scoring: maximum inner product search (faiss).

A linear one-vs-all bank scores class ``c`` as ``w_c · x + b_c`` = ``[w_c, b_c] · [x, 1]``, so the
top-p classes by score are the top-p of an inner-product search over the bank's augmented weight
rows. Two faiss indices are built over those ``(C, D + 1)`` rows:

* ``ivf``: ``IndexIVFFlat`` with inner-product metric (k-means lists over the weight rows), searched
  in ``nprobe`` lists;
* ``hnsw``: ``IndexHNSWFlat`` searched with beam ``efSearch``, over the standard MIPS-to-L2 reduction
  (rows ``[w_c, b_c, sqrt(M^2 - |[w_c, b_c]|^2)]`` with M the largest row norm, queries ``[x, 1, 0]``:
  the L2 order is exactly the score order). With faiss's inner-product metric the graph itself is
  built on inner products, which is not a metric: on 40 classes an efSearch of 200 (wider than the
  bank) still missed the best class for about a tenth of the queries, so the reduction is what a
  careful user would build.

Each returns p candidates; they are then scored exactly with the bank's rows (the grouped kernel
ClassMap's batch refine uses, ``kernels.batch.eval_rows``) and the best exact score wins.

Index parameters are chosen **on validation queries** for every p (``nlist``/``nprobe``, ``efSearch``):
the setting with the fewest evaluations whose validation accuracy is within ``tolerance`` of brute
force's validation accuracy (else the most accurate one). The test queries are used only to report.

Evaluations per query (one evaluation = one ``D + 1`` inner product, what a classifier costs):
``ivf`` = ``nlist`` (the coarse quantizer scans every list centroid) + the list entries faiss scored
(``indexIVF_stats.ndis / nq``) + p (exact rescoring); ``hnsw`` = the distances faiss computed
(``hnsw_stats.ndis / nq``, greedy upper levels and the beam) + p. Both indices store the rows
unquantised, so their own scores are already exact up to rounding: the rescoring's p evaluations
could be dropped, which the figures note as ``evaluations_index``.

Latency (classification only, features given): ``latency_single_ms`` one query at a time with one
faiss thread (search, rescoring, argmax); ``latency_batch_ms`` per query in batches of ``batch``,
the better of 1 and 2 faiss threads (including appending the constant 1 column).
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ConfigError
from ..core.progress import ProgressFn, StopFn, check_stop, report
from ..core.timing import median_time, time_per_item

__all__ = ["augmented_rows", "mips_sweep", "MipsIndex"]


def _faiss():
    try:
        import faiss
    except ImportError as e:                                          # pragma: no cover - optional
        raise ConfigError("the MIPS peer needs faiss: pip install 'classmap-studio[bench]'") from e
    return faiss


def augmented_rows(W: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(C, D + 1) float32`` rows ``[w_c, b_c]``: an inner product with ``[x, 1]`` is the class score."""
    return np.ascontiguousarray(np.hstack([np.asarray(W, np.float32), np.asarray(b, np.float32)[:, None]]))


def _augment(X: np.ndarray, extra: int = 1) -> np.ndarray:
    """``[x, 1]`` (extra=1) or ``[x, 1, 0]`` (extra=2, the L2 reduction's query) as float32 rows."""
    D = X.shape[1]
    out = np.zeros((len(X), D + extra), np.float32)
    out[:, :D] = X
    out[:, D] = 1.0
    return out


class MipsIndex:
    """One faiss inner-product index over a linear bank's augmented rows, plus exact rescoring.

    ``kind`` "ivf" (``nlist`` lists; ``set_search(nprobe)``) or "hnsw" (``m`` links;
    ``set_search(ef)``); ``W (C, D) float32``, ``b (C,)``. ``search(X (n, D), p)`` -> ``(classes
    (n, p) int64 column indices best exact score first, scores (n, p) float32, evaluations (n,)
    float)``.
    """

    def __init__(self, kind: str, W: np.ndarray, b: np.ndarray, *, nlist: int = 32, m: int = 32,
                 ef_construction: int = 80, seed: int = 0):
        faiss = _faiss()
        self.kind = kind
        self.extra = 1 if kind == "ivf" else 2          # columns appended to a query
        self.W = np.ascontiguousarray(W, np.float32)
        self.b = np.ascontiguousarray(b, np.float32)
        A = augmented_rows(self.W, self.b)
        C, Dp = A.shape
        if kind == "ivf":
            self.nlist = int(min(nlist, C))
            self.quantizer = faiss.IndexFlatIP(Dp)
            self.index = faiss.IndexIVFFlat(self.quantizer, Dp, self.nlist, faiss.METRIC_INNER_PRODUCT)
            self.index.cp.seed = int(seed)
            self.index.train(A)
        elif kind == "hnsw":
            self.nlist = 0
            norms = np.sum(A.astype(np.float64) ** 2, axis=1)
            A = np.ascontiguousarray(np.hstack([A, np.sqrt(norms.max() - norms)[:, None].astype(np.float32)]))
            self.index = faiss.IndexHNSWFlat(Dp + 1, int(m))
            self.index.hnsw.efConstruction = int(ef_construction)
        else:
            raise ConfigError(f"MIPS index kind must be 'ivf' or 'hnsw', got {kind!r}")
        self.index.add(A)
        self.setting = None
        self._refpos = np.full(C, -1, np.int64)                     # no reference outputs to reuse

    def set_search(self, value: int) -> None:
        """``nprobe`` (ivf) or ``efSearch`` (hnsw)."""
        if self.kind == "ivf":
            self.index.nprobe = int(value)
        else:
            self.index.hnsw.efSearch = int(value)
        self.setting = int(value)

    def _stats(self):
        faiss = _faiss()
        return faiss.cvar.indexIVF_stats if self.kind == "ivf" else faiss.cvar.hnsw_stats

    def candidates(self, Xa: np.ndarray, p: int) -> tuple[np.ndarray, float]:
        """faiss top-p of augmented queries ``Xa (n, D + extra)``: ``(ids (n, p) int64, index evaluations per query)``."""
        st = self._stats()
        st.reset()
        _, ids = self.index.search(Xa, p)
        n = max(1, len(Xa))
        return ids, (self.nlist + st.ndis / n)

    def rescore(self, X: np.ndarray, ids: np.ndarray):
        """Exact scores of the candidates ``ids (n, p)`` (-1 = none found: score -inf), best first."""
        from ..core.classify.kernels.batch import eval_rows

        missing = ids < 0
        rows = np.where(missing, 0, ids)
        S = eval_rows(np.ascontiguousarray(X, np.float32), self.W, self.b, rows,
                      np.zeros((len(X), 1), np.float32), self._refpos)
        S[missing] = -np.inf
        order = np.argsort(-S, axis=1, kind="stable")
        return np.take_along_axis(rows, order, 1), np.take_along_axis(S, order, 1)

    def search(self, X: np.ndarray, p: int):
        """Top class of queries ``X (n, D)`` float32: faiss candidates, exactly rescored; returns
        ``(class (n,), score (n,), evaluations per query (n,))``."""
        X = np.ascontiguousarray(X, np.float32)
        ids, ev = self.candidates(_augment(X, self.extra), p)
        cls, score = self.rescore(X, ids)
        return cls, score, np.full(len(X), ev + p)


class _Searches:
    """faiss candidates of one query set, searched once per (index, setting) and shared by every p.

    An IVF search scans the same lists whatever k, an HNSW search with ``efSearch >= k`` walks the same
    beam, and both return their k best sorted: the top p of a search for k = ``k_max`` (IVF) or k =
    ``efSearch`` (HNSW; its grid never goes below p) are the first p columns. The index evaluations
    (``nlist + ndis``) do not depend on k either. So each setting is searched once instead of once per p."""

    def __init__(self, X: np.ndarray, k_max: int):
        self.X = np.ascontiguousarray(X, np.float32)
        self.k_max = int(k_max)
        self._got: dict = {}
        self._aug: dict = {}

    def top(self, index: MipsIndex, p: int):
        """``(ids (n, p) int64, index evaluations per query)`` at the index's current setting."""
        k = self.k_max if index.kind == "ivf" else max(p, int(index.setting))
        key = (id(index), index.setting, k)
        if key not in self._got:
            if index.extra not in self._aug:
                self._aug[index.extra] = _augment(self.X, index.extra)
            ids, ev = index.candidates(self._aug[index.extra], k)
            self._got[key] = (np.ascontiguousarray(ids[:, :self.k_max], np.int32), ev)   # no p needs more
        ids, ev = self._got[key]
        return ids[:, :p].astype(np.int64), ev


def _accuracy(index: MipsIndex, searches: _Searches, y, p: int, classes) -> tuple[float, float]:
    ids, ev = searches.top(index, p)
    cls, _ = index.rescore(searches.X, ids)
    return float(np.mean(classes[cls[:, 0]] == y)), float(ev + p)


def _latency(index: MipsIndex, X: np.ndarray, p: int, n_single: int, batch: int, rounds: int = 3):
    """(single-query ms with one faiss thread, per-query ms in batches: best of 1 and 2 threads)."""
    faiss = _faiss()
    W, b = index.W, index.b
    xa = _augment(X[:1], index.extra)
    D = X.shape[1]
    Q = X[:n_single]

    def one(x):
        xa[0, :D] = x
        _, ids = index.index.search(xa, p)
        r = ids[0][ids[0] >= 0]
        return r[np.argmax(W[r] @ x + b[r])]

    XB = X[:batch] if len(X) >= batch else np.resize(X, (batch, X.shape[1]))

    def run_batch():
        ids, _ = index.candidates(_augment(XB, index.extra), p)
        index.rescore(XB, ids)

    before = faiss.omp_get_max_threads()
    try:
        faiss.omp_set_num_threads(1)
        single = time_per_item(one, Q, rounds)
        batches = []
        for threads in (1, 2):
            faiss.omp_set_num_threads(threads)
            batches.append(median_time(run_batch, rounds) / len(XB))
    finally:
        faiss.omp_set_num_threads(before)
    return 1e3 * single, 1e3 * min(batches)


def _choose(index: MipsIndex, grid, X_val: "_Searches", y_val, p, classes, target):
    """The grid value with the fewest validation evaluations reaching ``target`` accuracy, else the
    most accurate; returns (value, validation accuracy, candidates tried)."""
    tried = []
    for v in grid:
        index.set_search(v)
        acc, ev = _accuracy(index, X_val, y_val, p, classes)
        tried.append({"value": int(v), "validation_accuracy": acc, "evaluations": ev})
    ok = [t for t in tried if t["validation_accuracy"] >= target]
    best = min(ok, key=lambda t: t["evaluations"]) if ok else max(tried, key=lambda t: t["validation_accuracy"])
    return best, tried


def mips_sweep(bank, X_val, y_val, X_test, y_test, p_sweep, *, tolerance: float = 0.005,
               nlists=(16, 32, 64), hnsw_m: int = 32, ef_construction: int = 80, batch: int = 1000,
               n_single: int = 200, seed: int = 0, latency: bool = True,
               progress: ProgressFn = None, should_stop: StopFn = None) -> dict:
    """The faiss MIPS peer over a fitted linear one-vs-all ``bank`` (``coef_ (C, D)``, ``intercept_``).

    For every p of ``p_sweep`` and each index kind, the search setting is chosen on ``(X_val,
    y_val)`` (module docstring) and the chosen one reported on ``(X_test, y_test)``:
    ``{"brute_force": {...}, "ivf": [row per p], "hnsw": [row per p], "selection": {...}}``, a row
    ``{"p", "setting", "nlist", "accuracy", "validation_accuracy", "evaluations",
    "evaluations_index", "latency_single_ms", "latency_batch_ms", "tried"}``.
    """
    W = getattr(bank, "coef_", None)
    if W is None or getattr(bank, "pairs_", None) is not None:
        raise ConfigError("the MIPS peer needs a linear one-vs-all bank (coef_, intercept_)")
    W = np.ascontiguousarray(W, np.float32)
    b = np.ascontiguousarray(getattr(bank, "intercept_", np.zeros(len(W))), np.float32)
    classes = np.asarray(bank.classes_)
    C = len(W)
    X_val = np.ascontiguousarray(X_val, np.float32)
    X_test = np.ascontiguousarray(X_test, np.float32)
    brute_val = float(np.mean(classes[(X_val @ W.T + b).argmax(1)] == np.asarray(y_val)))
    brute_test = float(np.mean(classes[(X_test @ W.T + b).argmax(1)] == np.asarray(y_test)))
    target = brute_val - tolerance
    out = {"brute_force": {"validation_accuracy": brute_val, "accuracy": brute_test, "evaluations": C},
           "ivf": [], "hnsw": [],
           "selection": {"split": "validation", "tolerance": tolerance, "target_validation_accuracy": target,
                         "rule": "fewest evaluations with validation accuracy >= brute force - tolerance, "
                                 "else the most accurate"}}
    ps = [int(min(p, C)) for p in p_sweep]
    val_searches, test_searches = _Searches(X_val, max(ps)), _Searches(X_test, max(ps))
    report(progress, 0.0, "MIPS: building indices")
    ivfs = [MipsIndex("ivf", W, b, nlist=nl, seed=seed) for nl in sorted({min(int(n), C) for n in nlists})]
    hnsw = MipsIndex("hnsw", W, b, m=hnsw_m, ef_construction=ef_construction, seed=seed)
    check_stop(should_stop)
    for i, p in enumerate(ps):
        check_stop(should_stop)
        # ivf: every (nlist, nprobe) pair competes on validation
        best = None
        tried_all = []
        for index in ivfs:
            grid = sorted({v for v in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64) if v <= index.nlist} | {index.nlist})
            pick, tried = _choose(index, grid, val_searches, y_val, p, classes, target)
            for t in tried:
                t["nlist"] = index.nlist
            tried_all += tried
            key = (pick["validation_accuracy"] >= target, -pick["evaluations"] if pick["validation_accuracy"] >= target
                   else pick["validation_accuracy"])
            if best is None or key > best[0]:
                best = (key, index, pick)
        out["ivf"].append(_report(best[1], best[2], tried_all, test_searches, y_test, p, classes, latency, batch,
                                  n_single))
        # hnsw: efSearch >= p
        grid = sorted({max(p, int(p * f)) for f in (1, 1.5, 2, 3, 4, 6, 8)})
        pick, tried = _choose(hnsw, grid, val_searches, y_val, p, classes, target)
        out["hnsw"].append(_report(hnsw, pick, tried, test_searches, y_test, p, classes, latency, batch, n_single))
        report(progress, (i + 1) / len(ps), f"MIPS: p={p}")
    return out


def _report(index: MipsIndex, pick: dict, tried: list, test: "_Searches", y_test, p, classes, latency, batch,
            n_single) -> dict:
    index.set_search(pick["value"])
    acc, ev = _accuracy(index, test, y_test, p, classes)
    X_test = test.X
    row = {"p": p, "setting": {"nprobe" if index.kind == "ivf" else "efSearch": pick["value"]},
           "nlist": index.nlist or None, "accuracy": acc, "validation_accuracy": pick["validation_accuracy"],
           "evaluations": ev, "evaluations_index": ev - p, "latency_single_ms": None, "latency_batch_ms": None,
           "tried": tried}
    if latency:
        row["latency_single_ms"], row["latency_batch_ms"] = _latency(index, X_test, p, n_single, batch)
    return row
