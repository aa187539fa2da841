"""ClassMap's filter index and its derived state: fitting the ``filter`` kind on the class embeddings,
using one chosen elsewhere, refitting it when the embeddings or weights are replaced, and the one cache
dict of unsaved, derived arrays (single-query buffers; what the filter was fitted on).

A mixin of :class:`~.estimator.ClassMap` (it reads ``filter``, ``filter_params``, ``n_classes_``,
``class_embeddings_`` and ``alpha_``), first in its bases so that pickling drops the cache.
"""
from __future__ import annotations

import numpy as np

from ...errors import ConfigError
from ..filters import auto_kind, make_filter
from ..filters.base import FilterIndex


class FilterState:
    """The filter index of a ClassMap, kept over its current class embeddings and weights."""

    def _fit_filter(self) -> None:
        """Fit the ``filter`` kind (``"auto"``: :func:`..filters.auto_kind`) on the class embeddings."""
        kind = auto_kind(self.n_classes_) if self.filter == "auto" else self.filter
        self.filter_ = make_filter(kind, self.filter_params).fit(self.class_embeddings_, self.alpha_)
        self._filter_is_current()

    def _refresh_filter(self, before) -> None:
        """After ``class_embeddings_`` changed from ``before``: classes only appended to a current index are added
        to it (:meth:`..filters.base.FilterIndex.extend`), anything else refits."""
        on = self.cache().get("filter_on")
        E = self.class_embeddings_
        if (on is not None and on[0] is before and on[1] is self.alpha_ and len(E) > len(before)
                and np.array_equal(E[:len(before)], before)):
            self.filter_ = self.filter_.extend(E, self.alpha_)
            self._filter_is_current()
        else:
            self._fit_filter()

    def _filter_is_current(self) -> None:
        """Record that ``filter_`` is over today's ``class_embeddings_`` / ``alpha_`` (the single-query buffers go)."""
        self.__dict__["_cache"] = {"filter_on": (self.class_embeddings_, self.alpha_)}

    def use_filter(self, index: FilterIndex) -> "FilterState":
        """Search with the fitted ``index`` (over these ``class_embeddings_`` / ``alpha_``, e.g. chosen on validation);
        ``filter`` / ``filter_params`` then name it, so it is saved and a refit builds the same kind."""
        if not isinstance(index, FilterIndex) or not index.matches(self.class_embeddings_, self.alpha_):
            raise ConfigError("the filter index was built for another set of class embeddings")
        self.set_params(filter=index.kind, filter_params=index.get_params())
        self.filter_ = index
        self._filter_is_current()
        return self

    def current_filter(self) -> FilterIndex:
        """The fitted filter index, refitted first when ``class_embeddings_`` or ``alpha_`` were replaced."""
        on = self.cache().get("filter_on")
        if on is None or on[0] is not self.class_embeddings_ or on[1] is not self.alpha_:
            self._fit_filter()
        return self.filter_

    def cache(self) -> dict:
        """The one dict of derived, unsaved state (single-query buffers; the arrays the filter was fitted on)."""
        return self.__dict__.setdefault("_cache", {})

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_cache", None)            # buffers are rebuilt, not pickled
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        if "filter_" in state:               # the filter came along: it was fitted on these arrays
            self._filter_is_current()
