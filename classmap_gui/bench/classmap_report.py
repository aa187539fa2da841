"""What ``bench classmap`` reports beside its figures: the selected point against brute force
(:func:`summary`, with the issue's targets) and against the faiss MIPS peer (:func:`mips_comparison`).
Nothing is chosen here; both read test figures only to report them."""
from __future__ import annotations


def mips_comparison(selected: dict, mips: dict) -> dict:
    """ClassMap's selected point against the faiss MIPS peer on test (a report, nothing is chosen here):
    per index, the cheapest point (fewest evaluations) whose test accuracy is at least ClassMap's, or, if
    none reaches it, the most accurate one; with the ratio of evaluations (peer over ClassMap: above 1,
    ClassMap is cheaper) and each side's latency in ms. No latency *ratio*: the peer and ClassMap are
    not timed in alternating rounds, and every reported ratio must be (``core.timing``)."""
    out = {"classmap": {k: selected[k] for k in ("p", "refine", "accuracy", "evaluations", "latency_single_ms",
                                                 "latency_batch_ms")}}
    for kind in ("ivf", "hnsw"):
        rows = [r for r in mips.get(kind, []) if r.get("accuracy") is not None]
        if not rows:
            continue
        ok = [r for r in rows if r["accuracy"] >= selected["accuracy"]]
        peer = (min(ok, key=lambda r: (r["evaluations"], -r["accuracy"])) if ok
                else max(rows, key=lambda r: (r["accuracy"], -r["evaluations"])))
        ratios = {"evaluations": peer["evaluations"] / selected["evaluations"]}
        out[kind] = {"reaches_classmap_accuracy": bool(ok),
                     "peer": {k: peer.get(k) for k in ("p", "setting", "nlist", "accuracy", "evaluations",
                                                      "latency_single_ms", "latency_batch_ms")},
                     "accuracy_gap_points": 100 * (peer["accuracy"] - selected["accuracy"]),
                     "peer_over_classmap": ratios,
                     "classmap_wins": {k: v > 1 for k, v in ratios.items()}}
    return out


def headline(C: int, D: int, d: int, evaluations: float, speedup: dict) -> dict:
    """Every evaluations ratio in one form: ``evaluations_ratio`` (classifier evaluations, brute force's C
    over ClassMap's mean), beside ``operations_ratio`` (multiply-adds, the filter included: ``C·D`` over
    ``evaluations·D + C·d``, the d-dimensional distance to every class embedding) and the measured
    ``latency_speedup`` (interleaved rounds: median, min, max per mode)."""
    return {"evaluations_ratio": C / evaluations, "operations_ratio": C * D / (evaluations * D + C * d),
            "latency_speedup": speedup}


def summary(result: dict) -> dict:
    """The selected point against brute force on test: accuracy gap and :func:`headline`, and targets."""
    bf, sel = result["brute_force"], result["selected"]
    gap = sel["accuracy"] - bf["accuracy"]
    head = headline(result["classes"], result["features"], sel["d"], sel["evaluations"], sel["latency_speedup"])
    at = {q["p"]: q for q in result["classmap"] if q["embedding"] == "boosted" and q["refine"] == "v2"}
    rnd = {q["p"]: q for q in result["classmap"] if q["embedding"] == "random-median"}
    return {
        "accuracy_gap_points": 100 * gap,
        **head,
        "targets": {"within_0.5_points": gap >= -0.005, "evaluations_ratio_at_least_28": head["evaluations_ratio"] >= 28,
                    "single_latency_speedup_at_least_3": head["latency_speedup"]["single"]["median"] >= 3},
        "boosted_beats_random_median_at": [p for p in at if p in rnd and at[p]["accuracy"] > rnd[p]["accuracy"]],
    }
