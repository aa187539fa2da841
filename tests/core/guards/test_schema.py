"""Parameter schemas: each bound a value can break, with the message a user reads."""
from __future__ import annotations

import os

import numpy as np
import pytest

from classmap_gui.core import registry
from classmap_gui.core.guards.schema import MAX_IMAGE_SIDE, MAX_JOBS_PER_CORE, SEED, Invalid, Param

#: a worker count as the registry derives it from a class's ``n_jobs`` constraint
N_JOBS = registry.component("features", "kmeans").param("n_jobs")


def test_worker_counts_follow_this_machines_cores(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert [N_JOBS.check(v) for v in (-1, -2, -3, 1, 8, None, "4")] == [-1, -2, -3, 1, 8, None, 4]
    for bad in (0, -4, 2 * MAX_JOBS_PER_CORE + 1, 100_000, 1.5, True):
        with pytest.raises(Invalid, match="n_jobs must"):
            N_JOBS.check(bad)
    with pytest.raises(Invalid, match=r"between -3 and 8, not 0 \(-1: all 2 cores"):
        N_JOBS.check(0)
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    assert N_JOBS.check(64) == 64  # the same setting is fine on a bigger machine


def test_seeds_sizes_words_and_unset_values():
    assert SEED.check(None) is None and SEED.check(2**32 - 1) == 2**32 - 1 and SEED.check(np.int64(3)) == 3
    for bad in (-1, 2**32, 0.5, "x"):
        with pytest.raises(Invalid, match="random_state"):
            SEED.check(bad)
    size = registry.component("features", "pixels").param("size")
    assert [size.check(v) for v in ("12x10", "8", 6, [4, 5], (3, 3), None)] == [(12, 10), (8, 8), (6, 6), (4, 5),
                                                                                (3, 3), None]
    for bad in (0, "big", [1, 2, 3], MAX_IMAGE_SIDE + 1, f"2x{MAX_IMAGE_SIDE + 1}", True):
        with pytest.raises(Invalid, match=f"size must be HxW with sides from 1 to {MAX_IMAGE_SIDE}"):
            size.check(bad)
    gamma = registry.component("bank", "ova-rbf").param("gamma")
    assert [gamma.check(v) for v in ("scale", "auto", 0.5, "2")] == ["scale", "auto", 0.5, 2.0]
    sigma = registry.component("features", "rff").param("sigma")
    assert sigma.check("auto") == "auto"
    for bad, message in ((float("inf"), "finite"), (-1.0, "between"), ("wide", "a number or one of auto")):
        with pytest.raises(Invalid, match=f"sigma must be .*{message}|sigma must lie {message}"):
            sigma.check(bad)
    whiten = registry.component("features", "kmeans").param("whiten_eps")
    assert whiten.check(None) is None  # nullable: no whitening
    with pytest.raises(Invalid, match="norm_eps needs a value"):
        registry.component("features", "kmeans").param("norm_eps").check(None)
    threshold = registry.component("classmap", "classmap").param("threshold")
    assert threshold.check(None) is None and threshold.check("0.25") == 0.25
    with pytest.raises(Invalid, match="threshold must be a number"):
        threshold.check("abc")
    with pytest.raises(Invalid, match="only must be at most 3"):
        Param("only", int, 1, "x", high=3).check(4)
    # an open end of an interval (scikit-learn's ``closed=``) is refused at the bound itself
    half_open = Param("share", float, 0.5, "x", low=0.0, high=1.0, closed="neither")
    assert half_open.check(0.5) == 0.5
    for bad in (0.0, 1.0):
        with pytest.raises(Invalid, match="share must be above 0 and below 1"):
            half_open.check(bad)
