"""What ClassMap's parameters accept (scikit-learn's ``_parameter_constraints``, the one declaration the
registry derives the Train panel's fields and the CLI's checks from) and the names they choose among.
Light: names and bounds only, so the search and the forms read them without the estimator.
"""
from __future__ import annotations

from numbers import Integral, Real

from ...guards.constraints import HasMethods, Interval, StrOptions
from ..filters import INDEXES
from .refine_kinds import ALIASES, REFINES

EMBEDDINGS = ("boosted", "random")
#: which examples embed the classes: the held-out part alone (the paper), or with the bank's training part
EMBEDDING_EXAMPLES = ("embedding", "embedding+training")
#: the ``filter`` parameter's values: "auto" or a filter index kind
FILTERS = ("auto", *INDEXES)
MAX_TRIPLES = 5_000_000
MAX_MEMORY_MB = 65_536
#: every accepted ``refine`` value: the descriptive names and the paper's aliases
REFINE_VALUES = (*REFINES, *ALIASES)

# the bounds on n_triples and max_memory_mb keep a typo from exhausting memory (triples are sampled and
# scored up front); the registry derives the Train panel's fields and the CLI's checks from these
PARAMETER_CONSTRAINTS: dict = {
    "estimator": [HasMethods(["fit", "decision_function"]), None],
    "d": [Interval(Integral, 1, 100_000, closed="both")],
    "p": [Interval(Integral, 1, 1_000_000, closed="both")],  # candidates kept: at most the classes, bounded for forms
    "embedding": [StrOptions(set(EMBEDDINGS))],
    "refine": [StrOptions(set(REFINE_VALUES))],
    "n_triples": [Interval(Integral, 1, MAX_TRIPLES, closed="both")],
    "hard_fraction": [Interval(Real, 0, 1, closed="both")],
    "threshold": [Real, None],
    "max_memory_mb": [Interval(Real, 1, MAX_MEMORY_MB, closed="both")],
    "reference_penalty": [Interval(Real, 1e-6, 1e6, closed="both")],
    "embedding_fraction": [Interval(Real, 0, 1, closed="neither")],
    "random_state": ["random_state"],
    "embedding_examples": [StrOptions(set(EMBEDDING_EXAMPLES))],
    "filter": [StrOptions(set(FILTERS))],
    "filter_params": [dict, None],
}
