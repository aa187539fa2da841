"""What the one search (:class:`~.search.ClassMapSearch`) may try: the "auto" candidates of a bank's penalty
and of ClassMap's searched parameters, and how a given value reads (one value, a list of candidates, "auto").
"""
from __future__ import annotations

# how a given value reads (one value, a list of candidates, "auto") is the selection policy's, beside its widening
from ..selection.policy import AUTO, candidates, penalty_key, searched  # noqa: F401
from ..selection.policy import REFERENCE_PENALTIES as _POLICY_PENALTIES

#: "auto" candidates of a bank penalty: ridge alphas relative to n * mean feature variance; C as they are
PENALTY_GRID = {"alpha": (1e-4, 1e-3, 1e-2, 3e-2, 1e-1, 3e-1, 1.0, 3.0, 10.0),
                "C": (1e-3, 1e-2, 1e-1, 1.0, 10.0)}
#: "auto" candidates of ClassMap's searched parameters (p: those below the number of classes); the reference
#: penalties are the selection policy's (one declaration, which the hand model's build reads too)
REFERENCE_PENALTIES = tuple(float(v) for v in _POLICY_PENALTIES.split(","))
P_SWEEP = (5, 10, 15, 20, 30, 40, 60, 80)
#: the ClassMap parameters the search chooses (the others are fixed values)
SEARCHED = ("reference_penalty", "embedding_examples", "refine", "p")
#: what a ClassMap operating point is
KEYS = ("reference_penalty", "embedding_examples", "refine", "p")
