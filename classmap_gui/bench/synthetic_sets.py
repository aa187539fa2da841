"""The compressive-classification paper's Fig. 2 kind of 2-D three-class sets, with their known densities:
a Gaussian mixture (three blobs per class, interleaved) and concentric rings (``bench compressive``'s
``synthetic`` section sets the exact MAP classifier beside the sketches).
"""
from __future__ import annotations

import numpy as np


def _mixture_params(seed):
    rng = np.random.default_rng(1000 + seed)
    centres = rng.uniform(-1, 1, (3, 3, 2))  # class, component, xy
    return centres, 0.1


def synthetic_set(kind: str, n: int, rng):
    """``(X (n,2), y (n,), log_density(X) -> (n, 3))`` for ``"mixture"`` or ``"rings"``, equiprobable classes."""
    y = rng.integers(0, 3, n)
    if kind == "mixture":
        centres, s = _mixture_params(0)
        comp = rng.integers(0, 3, n)
        X = centres[y, comp] + s * rng.standard_normal((n, 2))

        def logp(Z):
            d2 = ((Z[:, None, None, :] - centres[None]) ** 2).sum(-1)  # (n, class, comp)
            a = -d2 / (2 * s * s)
            mx = a.max(2, keepdims=True)
            return (mx + np.log(np.exp(a - mx).sum(2, keepdims=True)))[..., 0]
    else:
        radii, s = np.array([0.3, 0.6, 0.9]), 0.08
        rho = np.abs(radii[y] + s * rng.standard_normal(n))
        theta = rng.uniform(0, 2 * np.pi, n)
        X = np.stack([rho * np.cos(theta), rho * np.sin(theta)], 1)

        def logp(Z):
            r = np.linalg.norm(Z, axis=1)[:, None]
            # folded normal radius; the common 1/(2 pi r) Jacobian does not change the argmax
            return np.log(np.exp(-(r - radii) ** 2 / (2 * s * s)) + np.exp(-(r + radii) ** 2 / (2 * s * s)) + 1e-300)
    return X, y, logp
