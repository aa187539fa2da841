"""Find the hand's worker (gui.panels.scan_stream): the frames/s each method's label shows."""
from __future__ import annotations

import pytest


def test_a_method_switched_back_to_shows_its_own_rate_not_one_spread_over_the_other_methods_turn(qtbot):
    """A person compares the two methods by switching between them: ClassMap at 50 frames/s, brute force at 20
    for half a second, then ClassMap again. Its label must say 50 again at once, not its old frames' times spread
    over brute force's turn (which showed ClassMap slower than brute force on the panel while the bench said 1.5x
    faster). The times are given, so no clock is read."""
    from classmap_gui.gui.panels.scan_stream import ScanStream

    s = ScanStream("video.avi", None, "classmap")
    for i in range(26):
        s._rate("classmap", 0.02 * i)
    for i in range(1, 11):
        s._rate("brute_force", 0.5 + 0.05 * i)
    for i in range(1, 11):
        s._rate("classmap", 1.0 + 0.02 * i)
    assert s.rates["classmap"] == pytest.approx(50.0) and s.rates["brute_force"] == pytest.approx(20.0)
