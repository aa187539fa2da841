"""The compiled (numba) kernels: the exact filter family (:mod:`.exact_filter`, :mod:`.codes`, :mod:`.topk`),
the single-query and batch filter-and-refine (:mod:`.single`, :mod:`.batch`), the IVF lists and graph walk of the
filter indexes, subset scoring, and their building blocks (dot products with one summation order, SAD tiles,
prefetch, the thread pool). They import nothing above them."""
