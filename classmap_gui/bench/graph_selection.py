"""Choosing the graph (HNSW) filter index on validation queries: the smallest search beam ``ef_search``
whose recall@p against the exact filter reaches the target. Used by the real 10^5-class scale bench
(``scale_real.py``); the IVF choice for both benches stays in ``ivf_selection``."""
from __future__ import annotations

import time

from ..core.classify.filters.graph import GraphFilterIndex
from ..core.progress import StopFn, check_stop
from .ivf_selection import REACHES, each_query, first_reaching, latency_ms, recall_at_p, recall_entry

#: ef_search candidates as multiples of p (the beam is never narrower than p)
EF_FACTORS = (1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 12, 16, 24, 32)


def select_graph(E, alpha, Fv, exact_v, p: int, *, target: float, m: int = 32, ef_construction: int = 80,
                 walk: str = "codes", index: GraphFilterIndex | None = None, build_s: float | None = None,
                 should_stop: StopFn = None) -> tuple[GraphFilterIndex, dict]:
    """Build an HNSW index on class embeddings ``E (C, d)`` / ``alpha`` (or take the built ``index``, which
    took ``build_s``) and choose ``ef_search`` for the ``walk`` on validation query embeddings ``Fv (m, d)``
    whose exact top-p is ``exact_v (m, p)``.

    Rule: the smallest ``ef_search`` among ``EF_FACTORS`` x p whose recall reaches ``target``
    (``ivf_selection.REACHES``; else the best bound). Returns the index (``walk`` and ``ef_search`` set) and
    the ``selection`` record (the recall curve with each candidate's single-query latency on up to 200 of
    the queries, per query the best of 3 passes)."""
    t = time.perf_counter()
    if index is None:
        index = GraphFilterIndex(m=m, ef_construction=ef_construction).fit(E, alpha)
    build_s = time.perf_counter() - t if build_s is None else build_s
    index.walk = walk
    Fs = Fv[:200]
    curve = []
    for f in EF_FACTORS:
        index.ef_search = max(p, int(round(f * p)))
        entry = recall_entry(recall_at_p(index.search(Fv, p)[0], exact_v), target)
        ms = latency_ms([each_query(lambda q: index.search(q[None], p), Fs) for _ in range(3)])
        curve.append({"ef_search": index.ef_search, **entry, "index_ms": ms})
        check_stop(should_stop)
        if entry["reaches_target"]:
            break
    pick = first_reaching(curve)
    index.ef_search = pick["ef_search"]
    selection = {"split": "validation", "queries": int(len(Fv)), "timed_queries": int(len(Fs)), "target_recall": target,
                 "method": "hnsw", "rule": f"the smallest ef_search (multiples of p) whose {REACHES} on validation "
                                           "queries (recall@p against the exact filter)",
                 "chosen": {"method": "hnsw", "m": int(index.m), "ef_construction": int(index.ef_construction),
                            "ef_search": int(index.ef_search), "walk": walk},
                 "reaches_target": pick["reaches_target"], "build_s": round(build_s, 2), "ef_curve": curve}
    return index, selection


def recheck_beam(index: GraphFilterIndex, F, exact, p: int, *, target: float, parts: str,
                 should_stop: StopFn = None) -> dict:
    """Hold the deployed graph's beam to ``target`` once more, on query embeddings ``F (n, d)`` (exact top-p
    ``exact (n, p)``) of images the final model never saw (``parts`` names them: retired test parts, now
    validation), under the final model: the refitted bank and the class embeddings over every training image
    shift the geometry the beam was chosen on (two 10^5 runs: validation recall 0.9913 and 0.9917 at the chosen
    beams, 0.9899 and 0.9889 on their fresh test parts). From the chosen ``ef_search`` up the ``EF_FACTORS`` x p
    grid, the first whose recall reaches the target (``REACHES``); sets ``index.ef_search`` and returns the record."""
    start = int(index.ef_search)
    curve = []
    for ef in sorted({start} | {max(p, int(round(f * p))) for f in EF_FACTORS if f * p > start}):
        index.ef_search = ef
        curve.append({"ef_search": ef, **recall_entry(recall_at_p(index.search(F, p)[0], exact), target)})
        check_stop(should_stop)
        if curve[-1]["reaches_target"]:
            break
    index.ef_search = first_reaching(curve)["ef_search"]
    return {"split": f"validation: {parts}", "queries": int(len(F)), "target_recall": target,
            "rule": f"from the beam chosen above, the smallest ef_search whose {REACHES} on these queries under the "
                    "final model", "from_ef_search": start, "ef_search": int(index.ef_search), "ef_curve": curve}


__all__ = ["EF_FACTORS", "recheck_beam", "select_graph"]
