"""The build's choice of the reader (core.detect.choice): the cheaper reading wins within the shared margin."""
from __future__ import annotations

import numpy as np

from classmap_gui.core.detect.choice import cheapest_reading
from classmap_gui.core.selection.policy import TOLERANCE


def _grid(acc_by_crops: dict, n: int = 1000):
    """One setting per crops value, with ``acc`` of ``n`` reads right (the first ones)."""
    grid = [(0.05, 1, c) for c in acc_by_crops]
    mean = {g: acc_by_crops[g[2]] for g in grid}
    right = {g: np.arange(n) < round(mean[g] * n) for g in grid}
    return grid, mean, right


def test_the_frame_pass_reading_is_chosen_within_the_margin_of_the_best():
    grid, mean, right = _grid({0: 0.80 - TOLERANCE / 2, 1: 0.79, 5: 0.80, 9: 0.795})
    chosen, per = cheapest_reading(grid, mean, right)
    assert chosen[2] == 0 and per["0"]["within"] and per["5"]["gap"] == 0.0
    assert per["0"]["gap_se"] > 0                                  # recorded beside the gap


def test_a_cheaper_reading_beyond_the_margin_is_not_chosen():
    grid, mean, right = _grid({0: 0.80 - 3 * TOLERANCE, 1: 0.80 - 2 * TOLERANCE, 5: 0.80, 9: 0.80})
    chosen, per = cheapest_reading(grid, mean, right)
    assert chosen[2] == 5 and not per["0"]["within"] and not per["1"]["within"]


def test_within_one_crops_value_the_most_accurate_setting_wins():
    grid = [(0.02, 1, 0), (0.1, 3, 0), (0.05, 1, 9)]
    mean = {grid[0]: 0.70, grid[1]: 0.80, grid[2]: 0.801}
    right = {g: np.arange(100) < int(mean[g] * 100) for g in grid}
    chosen, _ = cheapest_reading(grid, mean, right)
    assert chosen == (0.1, 3, 0)
