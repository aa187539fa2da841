"""Classification latency of brute force and ClassMap, measured through the objects a Recogniser calls,
in interleaved rounds (:func:`..core.timing.interleaved`).

Brute force is ``bank.decision_function`` + ``argmax`` (what ``Recogniser.predict_features`` does
without a ClassMap) and, as the fastest it can be, the bare stacked GEMV/GEMM into preallocated
outputs (``kernel``); ClassMap is ``ClassMap.predict_result(X, bank=bank)`` (one row: its preallocated
single-query path, the one live video uses). Features are not part of any latency. Each method first
gets its faster thread setting (:func:`..core.timing.pinned`), then every round runs all three on the
same queries, in alternating order, each call after an untimed pause (:data:`SETTLE_S`): ``single`` one
query at a time over ``n_single`` (>= 300 for a reported ratio) queries, ``batch`` per query in batches. :func:`speedups` gives the ratios (brute
force's faster path over ClassMap, per round): median, min and max over rounds with the load before
and after.
"""
from __future__ import annotations

import numpy as np

from ..core.progress import ProgressFn, StopFn, check_stop, report
from ..core.timing import interleaved, pinned, ratio

#: interleaved rounds of every latency comparison
ROUNDS = 5
#: untimed pause before each timed call (``core.timing.interleaved``): the other method's spinning thread
#: pools go back to sleep first
SETTLE_S = 0.25


def _batch(X: np.ndarray, batch: int) -> np.ndarray:
    return X[:batch] if len(X) >= batch else np.resize(X, (batch, X.shape[1]))


def brute_force_calls(bank, Q: np.ndarray, XB: np.ndarray) -> dict:
    """``{"brute": (single, batch), "kernel": (single, batch)}``: zero-argument calls over the queries
    ``Q`` one at a time and over the batch ``XB``."""
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

    return {"brute": (lambda: [bank.decision_function(x[None]).argmax() for x in Q],
                      lambda: bank.decision_function(XB).argmax(1)),
            "kernel": (lambda: [one(x) for x in Q], many)}


def classmap_calls(cm, bank, Q: np.ndarray, XB: np.ndarray) -> tuple:
    """``(single, batch)`` zero-argument calls of ``cm.predict_result(..., bank=bank)``."""
    return (lambda: [cm.predict_result(x[None], top=1, bank=bank).labels[0] for x in Q],
            lambda: cm.predict_result(XB, top=1, batch_size=len(XB), bank=bank))


def compare(calls: dict, n_single: int, n_batch: int, rounds: int = ROUNDS) -> dict:
    """``{"single": timing, "batch": timing}`` of :func:`..core.timing.interleaved` over ``calls``
    (``{name: (single, batch)}``), times in ms per query; ``threads`` the setting each method got."""
    out = {}
    for i, (mode, items) in enumerate((("single", n_single), ("batch", n_batch))):
        methods = {name: pinned(fns[i]) for name, fns in calls.items()}
        out[mode] = interleaved(methods, rounds, items, settle_s=SETTLE_S)
        out[mode]["threads"] = {name: fn.threads for name, fn in methods.items()}
    return out


def brute_vs_classmap(bank, cm, X: np.ndarray, n_single: int, batch: int = 1000, rounds: int = ROUNDS) -> dict:
    """Brute force and ClassMap in interleaved rounds on the rows of ``X (n, D) float32`` (the first
    ``n_single`` one at a time; a batch of ``batch``): :func:`compare`'s timings."""
    Q, XB = X[:n_single], _batch(X, batch)
    return compare({**brute_force_calls(bank, Q, XB), "classmap": classmap_calls(cm, bank, Q, XB)},
                   len(Q), len(XB), rounds)


def medians(timing: dict) -> dict:
    """Median ms per query of every method of one :func:`compare` mode."""
    return {name: float(np.median(v)) for name, v in timing["ms"].items()}


def speedups(timings: dict, method: str = "classmap") -> dict:
    """``{"single": ratio, "batch": ratio}``: brute force's faster path (decision function or bare
    kernel, per round) over ``method``, as :func:`..core.timing.ratio` records it."""
    return {mode: ratio(t, ["brute", "kernel"], method) for mode, t in timings.items()}


def op_limit(C: int, D: int, d: int, p: int) -> float:
    """Brute-force operations over ClassMap's: ``C·D / ((d+p)·D + C·d)`` (the best a ratio of times can be)."""
    return C * D / ((d + p) * D + C * d)


def linear_bank(coef: np.ndarray, intercept: np.ndarray):
    """A one-vs-all bank holding the given weights ``coef (C, D)``, ``intercept (C,)``, made the way a saved
    model is loaded (``store.load_estimator``: the bank's own checks run), for timing at sizes no
    quick fit reaches."""
    from ..core.classify import OneVsAllRidge
    from ..core.store import dump_estimator, load_estimator

    C, D = coef.shape
    tiny = OneVsAllRidge().fit(np.eye(2, D, dtype=np.float32), [0, 1])
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
    """Single-query brute / ClassMap latency ratio (interleaved rounds: :func:`brute_vs_classmap`) on
    synthetic linear banks of ``grid`` sizes ``(C, D)`` (random weights, CM-RRC references: latency
    depends on neither), next to :func:`op_limit`."""
    from ..core.classify.classmap.estimator import ClassMap

    rng = np.random.default_rng(seed)
    rows = []
    for i, (C, D) in enumerate(grid):
        check_stop(should_stop)
        bank = linear_bank(rng.standard_normal((C, D), np.float32), np.zeros(C, np.float32))
        Xe = rng.standard_normal((C, D), np.float32)
        cm = ClassMap(d=min(d, C), p=min(p, C), embedding="random", random_state=seed).fit_embedding(bank, Xe, np.arange(C))
        Q = rng.standard_normal((n_single, D), np.float32)
        t = brute_vs_classmap(bank, cm, Q, n_single, batch=1, rounds=ROUNDS)["single"]
        ms = medians(t)
        rows.append({"C": C, "D": D, "d": cm.d, "p": cm.p, "brute_single_ms": min(ms["brute"], ms["kernel"]),
                     "classmap_single_ms": ms["classmap"], "latency_speedup": ratio(t, ["brute", "kernel"], "classmap"),
                     "op_limit": op_limit(C, D, cm.d, cm.p)})
        del bank, Xe
        report(progress, (i + 1) / len(grid), "latency sweep")
    return rows
