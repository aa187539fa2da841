"""`SingleQuery`: ClassMap one query at a time with no per-query allocation (live video)."""
from __future__ import annotations

import time

import numpy as np

from . import classmap_kernels as K
from .filter_codes import band, one_scratch
from .filter_kernels import filter_scratch
from .bank_view import linear_weights
from .refine import KERNEL_MODE


class SingleQuery:
    """Two compiled calls over fixed buffers per query, for a linear one-vs-all bank (with a filter index,
    at many classes: the embedding, the index's search into the same buffers, the refine).

    ``__call__(x (D,) float32) -> int`` label; afterwards ``top_classes (p,)`` (class indices, best
    first), ``top_scores (p,)``, ``evaluations`` and ``timings`` describe the last query. The arrays
    are reused by the next call: copy them to keep them. One instance per thread
    (``ClassMap.predict_result`` on one row keeps one per calling thread).
    """

    def __init__(self, cm, bank):
        W, b = linear_weights(bank)
        self.W, self.b = W, b
        self.alpha = cm.alpha_
        # the embedding reads the reference classifiers: the bank's rows, or a kept reference bank's
        self.W_emb, self.b_emb, self.refs = cm.embedding_weights(bank)
        # the filter: the model's filter index at many classes, else the fused exact scan over the
        # (d, C) alpha-scaled transposed embeddings
        self.index = cm.filter_index()
        self.ET = cm.embeddings_t() if self.index is None else None
        # the exact scan through the byte codes where the model has them (the same list, fewer operations)
        codes = cm.byte_codes() if self.index is None else None
        self.codes = None
        if codes is not None:
            width, gamma = band(len(cm.alpha_))
            self.codes = (codes.CT, codes.lo, codes.hi, np.float32(codes.inv_s), codes.SUB, codes.ES,
                          np.float32(width), np.float32(gamma))
            self.codes_scratch = one_scratch(codes, len(cm.alpha_))
        self.refpos = cm.reference_positions(bank)
        self.classes = cm.classes_
        self.p = min(int(cm.p), cm.n_classes_)
        self.mode = KERNEL_MODE[cm.refine_strategy]
        self.t = cm.threshold_value
        d = len(self.refs)
        self.query_embedding = np.empty(d, np.float32)        # outputs of the d reference classifiers
        self.candidate_dist = np.empty(self.p, np.float32)    # filter distances, ascending
        self.filter_acc = filter_scratch(d)                 # filter scratch
        self.candidates = np.empty(self.p, np.int64)          # class indices in filter order
        self.responses = np.empty(self.p, np.float32)         # refine scratch
        self.top_classes = np.empty(self.p, np.int64)
        self.top_scores = np.empty(self.p, np.float32)
        self.evaluations = 0
        self.timings = {"embedding+filter": 0.0, "refine": 0.0}
        self(np.zeros(W.shape[1], np.float32))          # compile / warm up now, not on the first frame

    def __call__(self, x: np.ndarray) -> int:
        """Classify one query ``x (D,) float32``; returns the bank label of the best class."""
        t0 = time.perf_counter()
        x2 = np.ascontiguousarray(x, np.float32).reshape(1, -1)    # a view when x is already float32
        if self.codes is not None:
            m = K.embed_codes_one(x2, self.W_emb, self.b_emb, self.refs, self.alpha, self.ET, *self.codes, self.p,
                                  self.query_embedding, self.codes_scratch, self.candidate_dist, self.candidates)
        elif self.index is None:
            m = K.embed_filter_one(x2, self.W_emb, self.b_emb, self.refs, self.alpha, self.ET, self.p,
                                   self.query_embedding, self.filter_acc, self.candidate_dist, self.candidates)
        else:
            K.embed_one(x2, self.W_emb, self.b_emb, self.refs, self.query_embedding)
            self.index.search(self.query_embedding, self.p, out_cls=self.candidates[None],
                              out_dist=self.candidate_dist[None])
            m = self.p
        t1 = time.perf_counter()
        e = K.refine_one(x2, self.W, self.b, self.query_embedding, self.refpos, self.candidates, m, self.mode,
                         self.t, self.responses, self.top_classes, self.top_scores)
        t2 = time.perf_counter()
        self.evaluations = len(self.refs) + e
        self.timings["embedding+filter"] = t1 - t0
        self.timings["refine"] = t2 - t1
        return int(self.classes[self.top_classes[0]])
