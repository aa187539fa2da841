"""The table of ClassMap's filter index kinds: names, class paths and the "auto" policy (names only, no imports).

One line per kind: ClassMap's ``filter`` parameter takes these names (or ``"auto"``), the registry derives the
kinds' saved type names and parameter schemas from the table, and :mod:`.classify.filters` makes them. A leaf
module, so the registry reads it without importing the classifiers.
"""
from __future__ import annotations

#: ``{kind: (module:Class relative to classmap_gui.core, what it is, {parameter: help line})}``
INDEXES: dict[str, tuple[str, str, dict[str, str]]] = {
    "exact": (".classify.filters.exact:ExactFilter", "the exact weighted-L1 scan (byte-code prefilter for batches)",
              {"codes_from": "batches from this many queries prefilter on byte codes (unset: never)"}),
    "ivf": (".classify.filters.ivf:IVFFilter", "inverted lists over k-means cells, uint8 codes, exact re-rank",
            {"nlist": "inverted lists (unset: 3.2 sqrt(C))", "nprobe": "lists scanned a query (unset: a rule)",
             "rerank": "code-nearest rows re-ranked exactly, times p", "n_iter": "k-means passes"}),
    "hnsw": (".classify.filters.graph:GraphFilterIndex", "an HNSW graph (faiss), walked over uint8 codes",
             {"m": "graph links a node", "ef_construction": "the build's beam",
              "ef_search": "the search beam (unset: max(2p, 160))", "walk": "how the graph is walked"}),
}
#: class count from which ``"auto"`` searches the HNSW graph instead of the exact scan (bench scale: the fused
#: exact scan is about as fast below it)
AUTO_INDEX_FROM = 20_000


def auto_kind(n_classes: int) -> str:
    """The kind ``"auto"`` stands for at ``n_classes`` classes."""
    return "hnsw" if int(n_classes) >= AUTO_INDEX_FROM else "exact"


__all__ = ["AUTO_INDEX_FROM", "INDEXES", "auto_kind"]
