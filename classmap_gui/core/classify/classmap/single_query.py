"""`SingleQuery`: ClassMap one query at a time with no per-query allocation (live video)."""
from __future__ import annotations

import time

import numba as nb
import numpy as np

from ..kernels import single as K
from ..kernels.codes import band, one_scratch
from ..kernels.exact_filter import filter_scratch
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
        # the filter: the exact scan fused with the embedding over the exact index's (d, C) layout (through its
        # byte codes where it has them: the same list, fewer operations); any other kind is searched
        flt = cm.current_filter()
        self.index = None if flt.kind == "exact" else flt
        self.ET = flt.scaled_t_ if self.index is None else None
        codes = flt.codes() if self.index is None else None
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
        # the compiled calls and their fixed arguments (the query goes first; the refine's m after the fifth)
        if self.codes is not None:
            self._filter = (K.embed_codes_one, (self.W_emb, self.b_emb, self.refs, self.alpha, self.ET, *self.codes,
                                                self.p, self.query_embedding, self.codes_scratch,
                                                self.candidate_dist, self.candidates))
        elif self.index is None:
            self._filter = (K.embed_filter_one, (self.W_emb, self.b_emb, self.refs, self.alpha, self.ET, self.p,
                                                 self.query_embedding, self.filter_acc, self.candidate_dist,
                                                 self.candidates))
        else:
            self._filter = (K.embed_one, (self.W_emb, self.b_emb, self.refs, self.query_embedding))
        self._refine = (K.refine_one, (self.W, self.b, self.query_embedding, self.refpos, self.candidates),
                        (self.mode, self.t, self.responses, self.top_classes, self.top_scores))
        x0 = np.zeros((1, W.shape[1]), np.float32)
        self(x0[0])                                         # compile / warm up now, not on the first frame
        self._filter = (_entry(self._filter[0], (x0, *self._filter[1])), self._filter[1])
        self._refine = (_entry(self._refine[0], (x0, *self._refine[1], self.p, *self._refine[2])),
                        *self._refine[1:])

    def __call__(self, x: np.ndarray) -> int:
        """Classify one query ``x (D,) float32``; returns the bank label of the best class."""
        t0 = time.perf_counter()
        x2 = np.ascontiguousarray(x, np.float32).reshape(1, -1)    # a view when x is already float32
        if not x2.flags.writeable:
            x2 = x2.copy()                                  # the compiled entry points take a writeable array
        fn, args = self._filter
        m = fn(x2, *args)
        if self.index is not None:
            self.index.search(self.query_embedding, self.p, out_cls=self.candidates[None],
                              out_dist=self.candidate_dist[None])
            m = self.p
        t1 = time.perf_counter()
        fn, head, tail = self._refine
        e = fn(x2, *head, m, *tail)
        t2 = time.perf_counter()
        self.evaluations = len(self.refs) + e
        self.timings["embedding+filter"] = t1 - t0
        self.timings["refine"] = t2 - t1
        return int(self.classes[self.top_classes[0]])


def _entry(dispatcher, args):
    """The compiled entry point of the numba ``dispatcher`` for ``args``' types, which skips the per-call
    dispatch on the argument types (about 0.1 us an argument: 1.4 of a live query's 14 us through the
    19-argument embedding and filter, measured at 2430 classes); the dispatcher itself where numba has no
    such entry for them."""
    try:
        return dispatcher.overloads[tuple(nb.typeof(a) for a in args)].entry_point
    except (AttributeError, KeyError, TypeError, ValueError):
        return dispatcher
