"""Classification latency of brute force and ClassMap, measured through the objects a Recogniser calls.

Brute force is ``bank.decision_function`` + ``argmax`` (what ``Recogniser.predict_features`` does
without a ClassMap); ClassMap is ``ClassMap.predict_result(X, bank=bank)`` (one row: its preallocated
single-query path, the one live video uses). Features are not part of any latency. Each side gets
the better of one thread and the default (BLAS threads for brute force, numba threads for ClassMap's
batch kernels: one small GEMV does not gain from threads, a GEMM does; on a loaded machine a second
thread can cost more than it gives). Brute force is also timed as the bare stacked GEMV/GEMM (``kernel_*``).
``*_single_ms``: one query at a time; ``*_batch_ms``: per query, in batches.
"""
from __future__ import annotations

import numpy as np

from ..core.progress import ProgressFn, StopFn, check_stop, report
from ..core.timing import best_of_threads as _best_of_threads, median_time, time_per_item


def _batch(X: np.ndarray, batch: int) -> np.ndarray:
    return X[:batch] if len(X) >= batch else np.resize(X, (batch, X.shape[1]))


def brute_force_latency(bank, X: np.ndarray, n_single: int, batch: int = 1000) -> tuple[float, float, dict]:
    """``(single-query ms, per-query ms in batches of batch, kernel)`` of ``bank.decision_function`` +
    argmax on the rows of ``X (n, D) float32``. ``kernel`` holds ``kernel_single_ms`` /
    ``kernel_batch_ms``: the bare stacked GEMV/GEMM into preallocated outputs, the fastest brute force
    can be (speed-ups are taken against the faster of the two)."""
    Q = X[:n_single]
    single = _best_of_threads(lambda: time_per_item(lambda x: bank.decision_function(x[None]).argmax(), Q))
    XB = _batch(X, batch)
    per = _best_of_threads(lambda: median_time(lambda: bank.decision_function(XB).argmax(1))) / len(XB)
    W, b = np.ascontiguousarray(bank.coef_, np.float32), np.ascontiguousarray(bank.intercept_, np.float32)
    out = np.empty(len(W), np.float32)
    outb = np.empty((len(XB), len(W)), np.float32)

    def one(x):
        np.dot(W, x, out=out)
        np.add(out, b, out=out)
        return out.argmax()

    def many():
        np.dot(XB, W.T, out=outb)
        np.add(outb, b, out=outb)
        return outb.argmax(1)

    k_single = _best_of_threads(lambda: time_per_item(one, Q))
    k_batch = _best_of_threads(lambda: median_time(many)) / len(XB)
    return 1e3 * single, 1e3 * per, {"kernel_single_ms": 1e3 * k_single, "kernel_batch_ms": 1e3 * k_batch}


def classmap_latency(cm, bank, X: np.ndarray, n_single: int, batch: int = 1000) -> tuple[float, float]:
    """``(single-query ms, per-query ms in batches of batch)`` of ``cm.predict_result(..., bank=bank)``."""
    Q = X[:n_single]
    single = _best_of_threads(lambda: time_per_item(lambda x: cm.predict_result(x[None], top=1, bank=bank).labels[0], Q))
    XB = _batch(X, batch)
    per = _best_of_threads(lambda: median_time(lambda: cm.predict_result(XB, top=1, batch_size=batch, bank=bank))) / len(XB)
    return 1e3 * single, 1e3 * per


def op_limit(C: int, D: int, d: int, p: int) -> float:
    """Brute-force operations over ClassMap's: ``C·D / ((d+p)·D + C·d)`` (the best a ratio of times can be)."""
    return C * D / ((d + p) * D + C * d)


def linear_bank(coef: np.ndarray, intercept: np.ndarray):
    """A one-vs-all bank holding the given weights ``coef (C, D)``, ``intercept (C,)``, made the way a saved
    model is loaded (``store.load_estimator``: the bank's own checks run), for timing at sizes no
    quick fit reaches."""
    from ..core.classify import OneVsAllBank
    from ..core.store import dump_estimator, load_estimator

    C, D = coef.shape
    tiny = OneVsAllBank(trainer="ridge").fit(np.eye(2, D, dtype=np.float32), [0, 1])
    arrays: dict = {}
    spec = dump_estimator(tiny, arrays, "bank")
    state = spec["state"]
    for k, v in (("coef_", coef), ("intercept_", intercept), ("classes_", np.arange(C))):
        arrays[state[k]["__array__"]] = np.ascontiguousarray(v, np.float32 if k != "classes_" else None)
    state["n_features_in_"] = int(D)
    return load_estimator(spec, arrays)


def latency_sweep(d: int, p: int, n_single: int, seed: int, progress: ProgressFn = None,
                  should_stop: StopFn = None,
                  grid: tuple = ((2430, 1764), (2430, 6400), (10000, 1764), (10000, 6400))) -> list[dict]:
    """Single-query brute / ClassMap latency ratio on synthetic linear banks of ``grid`` sizes ``(C, D)``
    (random weights, CM-RRC references: latency depends on neither), next to :func:`op_limit`."""
    from ..core.classify.classmap import ClassMap

    rng = np.random.default_rng(seed)
    rows = []
    for i, (C, D) in enumerate(grid):
        check_stop(should_stop)
        bank = linear_bank(rng.standard_normal((C, D), np.float32), np.zeros(C, np.float32))
        Xe = rng.standard_normal((C, D), np.float32)
        cm = ClassMap(d=min(d, C), p=min(p, C), embedding="random", random_state=seed).fit_embedding(bank, Xe, np.arange(C))
        Q = rng.standard_normal((n_single, D), np.float32)
        bs, _, kernel = brute_force_latency(bank, Q, n_single, batch=1)
        bs = min(bs, kernel["kernel_single_ms"])
        cs, _ = classmap_latency(cm, bank, Q, n_single, batch=1)
        rows.append({"C": C, "D": D, "d": cm.d, "p": cm.p, "brute_single_ms": bs, "classmap_single_ms": cs,
                     "latency_speedup": bs / cs, "op_limit": op_limit(C, D, cm.d, cm.p)})
        del bank, Xe
        report(progress, (i + 1) / len(grid), "latency sweep")
    return rows
