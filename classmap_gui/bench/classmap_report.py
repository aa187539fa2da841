"""What ``bench classmap`` reports beside its figures: the selected point against brute force
(:func:`summary`, with the issue's targets) and against the faiss MIPS peer (:func:`mips_comparison`).
Nothing is chosen here; both read test figures only to report them."""
from __future__ import annotations


def mips_comparison(selected: dict, mips: dict) -> dict:
    """ClassMap's selected point against the faiss MIPS peer on test (a report, nothing is chosen here):
    per index, the cheapest point (fewest evaluations) whose test accuracy is at least ClassMap's, or, if
    none reaches it, the most accurate one; with the ratios of evaluations and of single / batch latency
    (peer over ClassMap: above 1, ClassMap is cheaper / faster) and who wins each (where the peer does not
    reach ClassMap's accuracy, ClassMap also wins on accuracy)."""
    out = {"classmap": {k: selected[k] for k in ("p", "refine", "accuracy", "evaluations", "latency_single_ms",
                                                 "latency_batch_ms")}}
    for kind in ("ivf", "hnsw"):
        rows = [r for r in mips.get(kind, []) if r.get("accuracy") is not None]
        if not rows:
            continue
        ok = [r for r in rows if r["accuracy"] >= selected["accuracy"]]
        peer = (min(ok, key=lambda r: (r["evaluations"], -r["accuracy"])) if ok
                else max(rows, key=lambda r: (r["accuracy"], -r["evaluations"])))
        ratios = {"evaluations": peer["evaluations"] / selected["evaluations"],
                  "latency_single": peer["latency_single_ms"] / selected["latency_single_ms"],
                  "latency_batch": peer["latency_batch_ms"] / selected["latency_batch_ms"]}
        out[kind] = {"reaches_classmap_accuracy": bool(ok),
                     "peer": {k: peer.get(k) for k in ("p", "setting", "nlist", "accuracy", "evaluations",
                                                      "latency_single_ms", "latency_batch_ms")},
                     "accuracy_gap_points": 100 * (peer["accuracy"] - selected["accuracy"]),
                     "peer_over_classmap": ratios,
                     "classmap_wins": {k: v > 1 for k, v in ratios.items()}}
    return out


def summary(result: dict) -> dict:
    """The selected point against brute force on test: accuracy gap, ``evaluations_ratio`` (a count
    ratio) and ``latency_speedup`` (measured wall-clock, against the faster brute-force path), targets."""
    bf, sel = result["brute_force"], result["selected"]
    single_ref = min(v for v in (bf["latency_single_ms"], bf.get("kernel_single_ms")) if v)
    batch_ref = min(v for v in (bf["latency_batch_ms"], bf.get("kernel_batch_ms")) if v)
    gap = sel["accuracy"] - bf["accuracy"]
    ratio = result["classes"] / sel["evaluations"]
    speed = {"single": single_ref / sel["latency_single_ms"], "batch": batch_ref / sel["latency_batch_ms"]}
    at = {q["p"]: q for q in result["classmap"] if q["embedding"] == "boosted" and q["refine"] == "v2"}
    rnd = {q["p"]: q for q in result["classmap"] if q["embedding"] == "random-median"}
    return {
        "accuracy_gap_points": 100 * gap,
        "evaluations_ratio": ratio,
        "latency_speedup": speed,
        "targets": {"within_0.5_points": gap >= -0.005, "evaluations_ratio_at_least_28": ratio >= 28,
                    "single_latency_speedup_at_least_3": speed["single"] >= 3},
        "boosted_beats_random_median_at": [p for p in at if p in rnd and at[p]["accuracy"] > rnd[p]["accuracy"]],
    }
