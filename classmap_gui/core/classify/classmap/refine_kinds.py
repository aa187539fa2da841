"""The table of ClassMap's refine strategies (names only, no imports): one line per strategy, read by the
estimator (the values ``refine`` accepts), the one search (the strategies it tries for a one-vs-all bank) and
the Train panel (its list and tooltips), so a strategy is declared once.
"""
from __future__ import annotations

from typing import NamedTuple


class RefineKind(NamedTuple):
    name: str          #: the descriptive name the code uses
    alias: str         #: the paper's name (Athitsos et al. 2007, §5), what a person types
    bank: str          #: the bank it refines over: "ova" (one-vs-all) or "pairs" (all-pairs)
    description: str


ALL_PAIRS_VOTE = "all-pairs-vote"
BEST_RESPONSE = "best-response"
FIRST_ABOVE_THRESHOLD = "first-above-threshold"
KINDS = (RefineKind(ALL_PAIRS_VOTE, "v1", "pairs", "Vote of all-pairs classifiers among the top p (needs the all-pairs bank)"),
         RefineKind(BEST_RESPONSE, "v2", "ova", "Best one-vs-all score among the top p candidates"),
         RefineKind(FIRST_ABOVE_THRESHOLD, "v3", "ova",
                    "One-vs-all with a learned threshold: stop early when one candidate is sure"))
#: the strategies' descriptive names
REFINES = tuple(k.name for k in KINDS)
#: the paper's names -> the names used here
ALIASES = {k.alias: k.name for k in KINDS}


def for_bank(bank: str) -> tuple[str, ...]:
    """The paper's names of the strategies that refine over a ``bank`` kind ("ova" or "pairs")."""
    return tuple(k.alias for k in KINDS if k.bank == bank)
