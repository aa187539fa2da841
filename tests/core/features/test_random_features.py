"""Random Fourier features: the kernel they approximate, its convention for sigma, and the variance choice."""
import numpy as np
import pytest
from sklearn.kernel_approximation import RBFSampler

from classmap_gui.core.errors import ConfigError
from classmap_gui.core.features.random_features import RandomFourierFeatures, gaussian_kernel


def _points(n=120, d=4, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, (n, d)).astype(np.float32)


def test_output_shape_dtype_and_determinism():
    X = _points()
    a = RandomFourierFeatures(m=64, sigma=2.0, random_state=3).fit(X)
    F = a.transform(X)
    assert F.shape == (120, 128) and F.dtype == np.float32
    # every row has unit norm: |exp(i w.x)|^2 = 1 per frequency, scaled by 1/m
    np.testing.assert_allclose((F * F).sum(1), 1.0, rtol=1e-5)
    b = RandomFourierFeatures(m=64, sigma=2.0, random_state=3).fit(X[:5])
    np.testing.assert_array_equal(F, b.transform(X))


def test_kernel_is_frequency_std_sigma_convention():
    """Frequencies with std sigma give exp(-sigma^2 |u-v|^2 / 2) (documented), not exp(-|u-v|^2/(2 sigma^2))."""
    X = _points(80)
    rff = RandomFourierFeatures(m=20000, sigma=2.0, random_state=0).fit(X)
    F = rff.transform(X)
    K = gaussian_kernel(X, X, 2.0)
    assert np.abs(F @ F.T - K).max() < 0.05
    wrong = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / (2 * 2.0 ** 2))
    assert np.abs(F @ F.T - wrong).max() > 0.3
    np.testing.assert_allclose(rff.frequencies_.std(), 2.0, rtol=0.02)


def test_complex_form_matches_real_pair():
    X = _points(30)
    rff = RandomFourierFeatures(m=50, sigma=1.5, random_state=1).fit(X)
    Z = rff.transform_complex(X)
    F = rff.transform(X)
    np.testing.assert_allclose(np.real(Z @ Z.conj().T), F @ F.T, atol=1e-5)


def test_cos_sin_pair_has_less_variance_than_rbfsampler_on_near_pairs():
    """Why RBFSampler is not used: same kernel, but more error where the kernel is large."""
    X = _points(150, seed=2)
    K = gaussian_kernel(X, X, 2.0)
    near = K > 0.3
    err_pair, err_phase = [], []
    for r in range(8):
        F = RandomFourierFeatures(m=300, sigma=2.0, random_state=r).fit_transform(X)
        G = RBFSampler(gamma=2.0, n_components=600, random_state=r).fit_transform(X)
        err_pair.append(((F @ F.T - K)[near] ** 2).mean())
        err_phase.append(((G @ G.T - K)[near] ** 2).mean())
    assert np.mean(err_phase) > 1.3 * np.mean(err_pair)


def test_phase_kind_wraps_rbfsampler_with_the_same_kernel():
    X = _points(60)
    F = RandomFourierFeatures(m=10000, sigma=2.0, kind="phase", random_state=0).fit_transform(X)
    assert F.shape == (60, 20000)
    assert np.abs(F @ F.T - gaussian_kernel(X, X, 2.0)).max() < 0.08


def test_auto_sigma_and_uint8_images():
    imgs = np.random.default_rng(0).integers(0, 256, (20, 8, 8), dtype=np.uint8)
    rff = RandomFourierFeatures(m=16, sigma="auto", random_state=0).fit(imgs)
    assert rff.n_features_in_ == 64 and 0 < rff.sigma_ < 10
    F = rff.transform(imgs)
    assert F.shape == (20, 32) and np.all(np.isfinite(F))


@pytest.mark.parametrize("bad", [dict(m=0), dict(sigma=-1.0), dict(sigma="wide"), dict(kind="sin")])
def test_bad_parameters_are_config_errors(bad):
    with pytest.raises(ConfigError):
        RandomFourierFeatures(**bad).fit(_points(10))


def test_wrong_width_at_transform_is_refused():
    rff = RandomFourierFeatures(m=8, sigma=1.0, random_state=0).fit(_points(10, d=4))
    with pytest.raises(ValueError):
        rff.transform(_points(10, d=5))
