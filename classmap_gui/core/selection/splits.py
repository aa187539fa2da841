"""The one split module: every train / validation / test split of the app and the benches.

API
---
``stratified_split(labels, fractions, seed) -> [rest, part_1, ...]``
    Stratified parts (scikit-learn's ``train_test_split(stratify=...)``, one cut per fraction); what
    :meth:`ImageSet.split` and a set without capture groups use.
``grouped_split(labels, groups, fractions, seed) -> ([rest, part_1, ...], info)``
    The same with every capture group (burst, video) whole on one side.
``holdout(labels, fraction, seed, groups=None) -> (fit, validation)``
    The validation part carved from a training part, on which every choice is made
    (:mod:`.selection`): stratified, groups kept whole. The Train panel's automatic choices and every
    bench call this.
``position_in_class(labels) -> (n,) int64``
    Each item's rank among its class's items in order: generated sets (i.i.d. images) are split by
    position (``positions < k``), the same split for every run.
``check_fresh(test, **others)``
    Refuses (ConfigError) a validation or training part that shares an item, or a seed, with the test
    part: a test part stays unseen by every choice.
``row_ids(X) -> (n,) uint64``
    Each row's identity by its content (a digest of its bytes): what ``check_fresh`` compares for parts
    that are not indices into one set (a bench's generated parts, the rows a search was handed).

Frames taken in one burst are near-duplicates. A split that puts some in training and others in the
test part measures how well the model remembers a burst, not how it does on a new capture, so the
reported accuracy flatters. :func:`grouped_split` assigns whole groups to parts, stratified by class
(each class's groups are shuffled with the seed and dealt to the held-out parts until each holds about
its share of the class's images). A class with fewer groups than parts cannot be tested honestly: its
images are split one by one (as before) and the class is named in ``too_few`` so the app can warn.
scikit-learn's ``StratifiedGroupKFold`` / ``GroupShuffleSplit`` do not fit here: they cut 1/k folds
(or ignore classes), cannot deal several parts of arbitrary fractions at once, and neither names nor
falls back for a class with too few groups (its images would silently land on one side).

A set without groups (every image its own group) gets exactly the stratified split of
``sklearn.model_selection.train_test_split`` it always had, so earlier runs and benchmarks reproduce.
"""
from __future__ import annotations

import numpy as np

from ..errors import ConfigError


def stratified_split(labels: np.ndarray, fractions: list[float], seed: int) -> list[np.ndarray]:
    """Stratified parts of ``len(labels)`` items: ``[rest, part_1, ...]`` (sorted indices), the same split as
    :meth:`ImageSet.split` with these fractions and seed."""
    from sklearn.model_selection import train_test_split

    parts, rest, remaining = [], np.arange(len(labels)), 1.0
    for frac in fractions:
        n_classes = len(np.unique(labels[rest]))
        want = int(np.ceil(frac / remaining * len(rest)))   # as scikit-learn rounds a fraction
        if want < n_classes:  # scikit-learn's own ValueError would reach a person as an internal error
            raise ConfigError(f"a held-out part of {frac:.0%} would hold {want} images for {n_classes} classes (at "
                              "least one each is needed): hold out a larger share, or give more images per class")
        rest, part = train_test_split(rest, test_size=frac / remaining, stratify=labels[rest], random_state=seed)
        parts.append(np.sort(part))
        remaining -= frac
    return [np.sort(rest), *parts]


def group_labels(labels: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(ids (g,), label of each group (g,), group index of each image (n,))``; a group's label is the
    label most of its images have (a burst whose frames were moved to another class keeps one side)."""
    ids, inv = np.unique(groups, return_inverse=True)
    inv = inv.ravel()
    n_classes = int(labels.max()) + 1 if len(labels) else 1
    pairs, counts = np.unique(inv * n_classes + labels, return_counts=True)   # (group, label) pairs, O(n log n)
    g, lab = pairs // n_classes, pairs % n_classes
    order = np.lexsort((-counts, g))                                          # per group, most frequent label first
    first = order[np.concatenate([[True], np.diff(g[order]) != 0])]
    return ids, lab[first], inv


def grouped_split(labels: np.ndarray, groups: np.ndarray | None, fractions: list[float],
                  seed: int) -> tuple[list[np.ndarray], dict]:
    """Parts ``[rest, part_1, ...]`` (sorted int64 indices into ``labels (n,)``) with every group of
    ``groups (n,)`` whole on one side, each part holding about ``fraction`` of every class; and a
    description ``{"by": "capture group" | "image", "groups": count, "too_few": [class, ...],
    "needed": groups a class needs}``. ``groups`` None (or all distinct): the plain stratified split.
    Work is O(n log n) in images (no per-class pass over all images), so large sets split in moments."""
    labels = np.asarray(labels, np.int64)
    need = 1 + len(fractions)
    if groups is None or len(np.unique(groups)) == len(labels) or not fractions:
        parts = stratified_split(labels, fractions, seed) if fractions else [np.arange(len(labels))]
        return parts, {"by": "image", "groups": int(len(labels)), "too_few": [], "needed": need}
    groups = np.asarray(groups, np.int64)
    ids, glabel, inv = group_labels(labels, groups)
    sizes = np.bincount(inv, minlength=len(ids))
    rng = np.random.default_rng(seed)
    part_of_group = np.zeros(len(ids), np.int64)    # 0 rest, 1.. held-out parts
    by_class = np.argsort(glabel, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(glabel))])
    too_few = []
    for c in np.flatnonzero(np.diff(bounds)):
        mine = rng.permutation(by_class[bounds[c]:bounds[c + 1]])
        if len(mine) < need:                          # cannot keep bursts apart: split its images one by one
            too_few.append(int(c))
            part_of_group[mine] = -1
            continue
        total, pos = sizes[mine].sum(), 0
        for p, f in enumerate(fractions, start=1):
            target, got = f * total, 0
            left_for_others = (len(fractions) - p) + 1      # one group each for later parts and for training
            while pos < len(mine) - left_for_others and (got == 0 or got + sizes[mine[pos]] / 2 <= target):
                part_of_group[mine[pos]] = p
                got += sizes[mine[pos]]
                pos += 1
    owner = part_of_group[inv]
    if too_few:                                       # images of those classes, dealt out one by one
        loose = np.flatnonzero(owner < 0)
        loose_label = glabel[inv[loose]]
        for c in too_few:
            idx = rng.permutation(loose[loose_label == c])
            ends = np.cumsum([max(1, round(f * len(idx))) for f in fractions])
            owner[idx] = 0
            for p, (lo, hi) in enumerate(zip(np.concatenate([[0], ends[:-1]]), ends), start=1):
                owner[idx[lo:hi]] = p
    parts = [np.flatnonzero(owner == p).astype(np.int64) for p in range(need)]
    return parts, {"by": "capture group", "groups": int(len(ids)), "too_few": too_few, "needed": need}


def groups_per_part(groups: np.ndarray | None, parts: dict[str, np.ndarray]) -> dict[str, int]:
    """How many distinct groups each part holds (images when ``groups`` is None)."""
    return {k: int(len(np.unique(groups[v])) if groups is not None else len(v)) for k, v in parts.items()}


def holdout(labels: np.ndarray, fraction: float, seed: int,
            groups: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(fit, validation)`` sorted int64 indices into ``labels (n,)``: about ``fraction`` of every class
    held out for validation, capture ``groups (n,)`` (or None) kept whole."""
    if not 0 < fraction < 1:
        raise ConfigError(f"validation fraction must lie between 0 and 1, got {fraction}")
    parts, _ = grouped_split(np.asarray(labels), groups, [float(fraction)], int(seed))
    return parts[0].astype(np.int64), parts[1].astype(np.int64)


def position_in_class(labels: np.ndarray) -> np.ndarray:
    """``(n,) int64``: item i's rank among the items of its class, in order (0 for each class's first)."""
    labels = np.asarray(labels)
    order = np.argsort(labels, kind="stable")
    _, inv, counts = np.unique(labels, return_inverse=True, return_counts=True)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.empty(len(labels), np.int64)
    rank[order] = np.arange(len(labels)) - np.repeat(starts, counts)
    return rank


def row_ids(X: np.ndarray) -> np.ndarray:
    """``(n,) uint64``: a digest of each row of ``X (n, ...)`` (its bytes, blake2b): equal rows, equal ids; two
    different rows share one with probability ~n^2 / 2^64. A data row, not its position, is what a test part
    must not share with the parts choices are made on."""
    import hashlib

    X = np.ascontiguousarray(X)
    rows = X.reshape(len(X), -1).view(np.uint8).reshape(len(X), -1) if len(X) else X.reshape(0, 0)
    return np.fromiter((int.from_bytes(hashlib.blake2b(r.tobytes(), digest_size=8).digest(), "little") for r in rows),
                       np.uint64, len(X))


def check_fresh(test: dict, **others: dict) -> None:
    """Refuse parts that overlap the test part. ``test`` and each of ``others`` (named, e.g.
    ``validation=``) are dicts with optional ``seed`` (the seed the part was generated or drawn with)
    and ``rows`` (indices into one common set); a shared seed or a shared row is a ConfigError naming
    the part."""
    t_seed, t_rows = test.get("seed"), test.get("rows")
    for name, part in others.items():
        if t_seed is not None and part.get("seed") is not None and int(part["seed"]) == int(t_seed):
            raise ConfigError(f"the {name} part uses seed {part['seed']}, the test part's seed: choose another "
                              "(a test part must stay unseen by every choice)")
        if t_rows is not None and part.get("rows") is not None:
            shared = np.intersect1d(np.asarray(t_rows), np.asarray(part["rows"]))
            if len(shared):
                raise ConfigError(f"the {name} part shares {len(shared)} item(s) with the test part "
                                  "(a test part must stay unseen by every choice)")


__all__ = ["check_fresh", "group_labels", "grouped_split", "groups_per_part", "holdout", "position_in_class", "row_ids",
           "stratified_split"]
