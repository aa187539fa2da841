"""core.timing: interleaved rounds and their ratio."""

from classmap_gui.core.timing import interleaved, ratio


def test_interleaved_rounds_alternate_which_method_goes_first():
    calls = []
    t = interleaved({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, rounds=4)
    assert calls == ["a", "b"] + ["a", "b", "b", "a", "a", "b", "b", "a"]   # warm-up, then alternating
    r = ratio(t, "a", "b")
    assert r["rounds"] == 4 and r["min"] <= r["median"] <= r["max"]
