"""core.timing: interleaved rounds and their ratio."""

from classmap_gui.core.timing import interleaved, ratio


def test_interleaved_rounds_alternate_which_method_goes_first():
    calls = []
    t = interleaved({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, rounds=4)
    assert calls == ["a", "b"] + ["a", "b", "b", "a", "a", "b", "b", "a"]   # warm-up, then alternating
    r = ratio(t, "a", "b")
    assert r["rounds"] == 4 and r["min"] <= r["median"] <= r["max"]


def test_a_pinned_call_runs_under_the_setting_it_chose_and_leaves_the_defaults():
    import numba
    import numpy as np
    from threadpoolctl import threadpool_info

    from classmap_gui.core.timing import pinned

    def blas_threads():
        return [d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"]

    default = (numba.get_num_threads(), blas_threads())
    seen = []
    A = np.ones((64, 64), np.float32)
    run = pinned(lambda: seen.append((numba.get_num_threads(), blas_threads(), float((A @ A)[0, 0]))))
    seen.clear()
    run()
    limit = 1 if run.threads == 1 else default[0]
    assert seen[0][0] == limit                                 # numba's threads, as chosen
    assert all(n == (1 if run.threads == 1 else d) for n, d in zip(seen[0][1], default[1]))   # BLAS alike
    assert (numba.get_num_threads(), blas_threads()) == default    # restored after the call
