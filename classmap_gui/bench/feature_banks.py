"""``bench features``' bank penalties, scored on the validation part for one encoded network: ridge from
moments (one Gram matrix, one solve per penalty) and liblinear (one fit per C), on the network's features
with or without the mirrored training images.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ConfigError
from ..core.progress import check_stop


def feature_variance(F: np.ndarray, rows: np.ndarray) -> float:
    """Mean per-feature variance of rows ``rows`` of ``F`` (estimated on the first 5000): the penalty scale."""
    return float(np.mean(F[rows[:5000]].var(axis=0, dtype=np.float64)))


class PenaltyScores:
    """Bank penalties scored on validation for one encoded network: ridge from moments (one Gram matrix,
    one solve per penalty), liblinear one fit per C. ``F (n, 4K)`` rows ``fit`` / ``val`` with labels ``y``;
    ``mirrored``: rows of ``F`` holding the mirror images of the fit rows and of the validation rows (the
    ``flip`` augmentation: training rows only, so added to the fit rows, and to the refit's)."""

    def __init__(self, opt, F, y, fit, val, should_stop, mirrored=None):
        self.opt, self.F, self.y, self.stop = opt, F, y, should_stop
        self.fit, self.val = np.asarray(fit), np.asarray(val)
        fm, vm = mirrored if mirrored is not None else (self.fit[:0], self.val[:0])
        self.fit_rows, self.refit_rows = np.concatenate([self.fit, fm]), np.concatenate([self.val, vm])
        self.var = feature_variance(F, self.fit)
        self.moments = [None, None]  # fit, refit rows: the refit's only when refitting

    def _ridge_moments(self, both: bool):
        from ..core.classify.banks.ridge_moments import ridge_moments

        C, m = int(self.y.max()) + 1, self.moments
        if m[0] is None:
            m[0] = ridge_moments(self.F, self.y[self.fit_rows], C, rows=self.fit_rows, should_stop=self.stop)
        if both and m[1] is None:
            m[1] = ridge_moments(self.F, self.y[self.refit_rows], C, rows=self.refit_rows, shift=m[0].shift,
                                 should_stop=self.stop)
        return m[0] + m[1] if both else m[0]

    def alpha(self, pen: float) -> float:
        return pen * self.var

    def scores(self, trainer: str, pens) -> list:
        """Validation accuracy per penalty; ``None`` where the ridge system is not positive definite (a
        penalty below the float32 rounding of the Gram matrix when there are about as many features as rows)."""
        from numpy.linalg import LinAlgError

        out = []
        for pen in pens:
            try:
                out.append(self.score(trainer, pen))
            except LinAlgError:
                out.append(None)
        if all(a is None for a in out):
            raise ConfigError(f"bench features: no penalty of {list(pens)} gives a solvable ridge system")
        return out

    def score(self, trainer: str, pen: float) -> float:
        """Validation accuracy of the bank trained on the fit rows with penalty ``pen``."""
        return float(np.mean(self.fitted(trainer, pen).predict(self.F[self.val]) == self.y[self.val]))

    def fitted(self, trainer: str, pen: float, both: bool = False):
        from ..core.classify import OneVsAllRidge, OneVsAllSVM
        from ..core.classify.banks.ridge_moments import ova_ridge_bank

        check_stop(self.stop)
        rows = np.concatenate([self.fit_rows, self.refit_rows]) if both else self.fit_rows
        if trainer == "ridge" and not both and 2 * len(rows) < self.F.shape[1]:
            # far fewer rows than features: the product's bank solves the dual, n x n
            return OneVsAllRidge(alpha=self.alpha(pen), n_jobs=self.opt["n_jobs"]).fit(
                self.F[rows], self.y[rows], should_stop=self.stop)
        if trainer == "ridge":
            a = self.alpha(pen)
            return ova_ridge_bank(*self._ridge_moments(both).solve(a), a)
        return OneVsAllSVM(C=pen, n_jobs=self.opt["n_jobs"],
                            random_state=self.opt["seed"]).fit(self.F[rows], self.y[rows], should_stop=self.stop)
