"""The exact filter: every class's weighted-L1 distance, the p nearest kept (ClassMap's filter below many classes).

The scan runs the compiled exact filter family (:mod:`..kernels.exact_filter`) over the alpha-scaled class
embeddings transposed to ``(d, C)`` (the layout the kernels read, fitted and saved as ``scaled_t_``). A batch of
at least ``codes_from`` queries prefilters on the embeddings' byte codes (:mod:`..kernels.codes`: the same lists,
fewer operations); a batch whose codes left too many classes to refine exactly turns them off for this index.
One query (live video) is fused with the embedding in ClassMap's single-query path, which reads this index's
layout and codes.
"""
from __future__ import annotations

from numbers import Integral

import numpy as np

from ...guards.constraints import Interval
from ..kernels.codes import encode_classes, filter_codes_batch, worth_it
from ..kernels.exact_filter import filter_batch_t, transpose_embeddings
from .base import FilterIndex, checked_embeddings


class ExactFilter(FilterIndex):
    """The exact weighted-L1 filter.

    Parameters: ``codes_from`` — batches from this many queries go through the byte codes (a handful costs the
    coding more than it saves); None never. Learned: ``alpha_ (d,) float32``, ``scaled_t_ (d, C) float32``
    (:func:`..kernels.exact_filter.transpose_embeddings`), ``n_classes_``; derived on first use and never saved:
    the byte codes."""

    kind = "exact"
    _parameter_constraints: dict = {"codes_from": [Interval(Integral, 1, None, closed="left"), None]}

    def __init__(self, codes_from: int | None = 8):
        self.codes_from = codes_from

    def fit(self, embeddings: np.ndarray, alpha: np.ndarray) -> "ExactFilter":
        """Index class embeddings ``(C, d) float32`` under weights ``alpha (d,) >= 0``."""
        self.alpha_, scaled = checked_embeddings(embeddings, alpha)
        self.scaled_t_ = transpose_embeddings(embeddings, self.alpha_)
        self.n_classes_ = len(scaled)
        self.__dict__.pop("_codes", None)
        return self

    def extend(self, embeddings: np.ndarray, alpha: np.ndarray) -> "ExactFilter":
        """Append the classes after the indexed ones (the rows of ``embeddings`` from ``n_classes_`` on)."""
        a, scaled = checked_embeddings(embeddings[self.n_classes_:], alpha)
        if not np.array_equal(a, self.alpha_):
            return self.fit(embeddings, alpha)
        self.scaled_t_ = np.ascontiguousarray(np.hstack([self.scaled_t_, transpose_embeddings(
            embeddings[self.n_classes_:], self.alpha_)]))
        self.n_classes_ += len(scaled)
        self.__dict__.pop("_codes", None)
        return self

    def validate_state(self) -> None:
        ET = np.asarray(self.scaled_t_)
        if ET.dtype != np.float32 or ET.ndim != 2:
            raise ValueError("ExactFilter: scaled_t_ must be (d, C) float32")
        self._check_fitted_arrays(ET.shape[1], ET.shape[0])

    def after_load(self) -> None:
        self.scaled_t_ = np.ascontiguousarray(self.scaled_t_)
        self.__dict__.pop("_codes", None)

    def scaled(self) -> np.ndarray:
        return self.scaled_t_.T

    def codes(self):
        """The byte codes of the layout (:func:`..kernels.codes.encode_classes`), or None where they do not
        apply or did not pay (built on first use, kept)."""
        if "_codes" not in self.__dict__:
            self.__dict__["_codes"] = encode_classes(self.scaled_t_)
        return self.__dict__["_codes"]

    def _search(self, F: np.ndarray, k: int, cls: np.ndarray, dist: np.ndarray) -> None:
        codes = self.codes() if self.codes_from is not None and len(F) >= int(self.codes_from) else None
        if codes is None:
            filter_batch_t(F, self.scaled_t_, self.alpha_, k, cls, dist)
        elif not worth_it(filter_codes_batch(F, self.scaled_t_, self.alpha_, codes, k, cls, dist), self.n_classes_):
            self.__dict__["_codes"] = None     # the float32 scan from now on


__all__ = ["ExactFilter"]
