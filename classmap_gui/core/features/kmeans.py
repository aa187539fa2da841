"""Single-layer k-means features (Coates, Lee & Ng 2011): learned patch dictionary, triangle encoding,
2x2 quadrant sum pooling.

fit: random ``patch_size`` x ``patch_size`` patches -> per-patch brightness/contrast normalisation
``(x - mean(x)) / sqrt(var(x) + norm_eps)`` -> ZCA whitening ``W = V (L + whiten_eps I)^-1/2 V^T`` ->
k-means (K centroids).

transform: every patch of every image on a grid with step ``stride``, normalised and whitened the same
way; distances to all centroids from ONE GEMM per block (``|x|^2 - 2 x.c + |c|^2``), then in one fused
pass over the block while it is in cache (numba kernel in ``kmeans_kernels``): square root, mean distance
``mu``, triangle activation ``max(0, mu - z_k)`` (or the hard 1-of-K code), added into the patch's
quadrant. The (patches x K) matrix never exists beyond one cache-sized block. Chunks of images run
in parallel on joblib threads (BLAS and the numba kernel release the GIL; BLAS is held at one thread
per worker meanwhile).

The fused numba pass is about 3.5x faster than the numpy fallback (same GEMM, ~8 passes over the
matrix and a sort/reduceat for pooling) on 28x28 images with K=1600, and
brings encoding to within about 1.7x of its distance GEMM alone (``gemm_timing.distance_gemm_timing``).
Hence numba for the element-wise part; numpy remains the fallback.

Sizes adapt to the images: ``patch_size``, ``n_centroids`` and ``n_patches`` default to ``"auto"``,
which is the paper's 6 / 1600 / 200 000 on images whose shorter side is at least ``SMALL_IMAGE``
pixels, and on smaller ones (the 8x8 ``digits``) ``max(2, side // 2 - 1)`` / 400 / 50 000: a 6x6
patch would leave each 2x2 pooling quadrant no distinct positions, and a small image set holds few
distinct patches. The sizes a fit used are ``patch_size_`` and ``centroids_.shape[0]``.
"""
from __future__ import annotations

import threading
import warnings
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state

from ..guards.constraints import Interval, StrOptions, validate_params
from ..errors import ConfigError, DataError, NotFittedError
from ..guards.limits import MemoryPlan, planned_size
from ..progress import ProgressFn, StopFn, check_stop, report, sub_progress
from ..timing import blas_limit
from ..guards.arrays import check_array
from .clustering import inertia, lloyd, minibatch
from . import kmeans_kernels
from .kmeans_encode import LIVE_BLOCK_BYTES, PatchGrid, chunking, encode_chunk
from .kmeans_ops import check_kmeans_spec, kmeans_features, normalise_patches, whitened_patches

_GREY_WEIGHTS = np.array([0.299, 0.587, 0.114], dtype=np.float32)  # ITU-R BT.601 luma, as OpenCV
AUTO = "auto"
#: shorter image side below which the "auto" sizes shrink (see the module docstring)
SMALL_IMAGE = 16


def auto_sizes(h: int, w: int) -> tuple[int, int, int]:
    """``(patch_size, n_centroids, n_patches)`` that ``"auto"`` means for ``h x w`` images."""
    side = min(h, w)
    if side < SMALL_IMAGE:
        return max(2, side // 2 - 1), 400, 50_000
    return 6, 1600, 200_000


class KMeansFeatures(TransformerMixin, BaseEstimator):
    """Single-layer network of Coates et al.: uint8 images -> (n, 4K) float32 pooled patch codes.

    Random patches are normalised (brightness and contrast), ZCA-whitened and clustered by k-means into K
    centroids; an image is encoded at every patch position (the triangle activation) and pooled over its
    four quadrants.

    Parameters
    ----------
    patch_size : int or "auto", default="auto"
        Side p of the square receptive field (6 in the paper). ``"auto"``: 6 on images whose shorter side is
        at least 16, else ``max(2, side // 2 - 1)`` (``kmeans.auto_sizes``); an explicit value wins.
    stride : int, default=1
        Step between patch positions when encoding.
    n_centroids : int or "auto", default="auto"
        K, the dictionary size; the output has 4K features (2 x 2 quadrants x K). ``"auto"``: 1600, or 400
        on small images.
    n_patches : int or "auto", default="auto"
        Random patches drawn from the training images to learn the dictionary. ``"auto"``: 200 000, or
        50 000 on small images.
    norm_eps : float, default=10.0
        Added to each patch's variance (pixel values 0..255; 10 in the paper).
    whiten_eps : float or None, default=0.1
        ZCA regulariser (0.1 in the paper); None turns whitening off.
    encoder : {"triangle", "hard"}, default="triangle"
        ``max(0, mean(z) - z_k)`` or 1 for the nearest centroid.
    hellinger : bool, default=False
        Take the square root of the pooled features (a Hellinger kernel for linear classifiers).
    grey : bool, default=False
        Convert colour images to grey first; otherwise patches keep the images' channels.
    kmeans_algorithm : {"lloyd", "minibatch"}, default="lloyd"
        Full-batch k-means with distances by blocked GEMM (as Coates et al.'s own code; ``clustering.lloyd``
        says why it is the default), or scikit-learn's ``MiniBatchKMeans``.
    kmeans_batch_size : int, default=4096
        Patches per mini-batch step (``"minibatch"``).
    kmeans_max_iter : int, default=10
        Passes over the patches (Lloyd iterations or mini-batch epochs).
    n_jobs : int or None, default=-1
        Worker threads for encoding (-1: all cores).
    random_state : int, RandomState or None, default=None
        Seed for patch sampling and k-means.

    Attributes
    ----------
    centroids_ : ndarray of shape (K, D), float32
        The dictionary in the whitened space; D = p * p * channels, patch vectors ordered (row, column,
        channel).
    mean_ : ndarray of shape (D,), float32
        Patch mean after normalisation.
    whitening_ : ndarray of shape (D, D), float32
        The ZCA matrix (identity when whitening is off).
    patch_size_ : int
        The p used (read this, not the ``patch_size`` parameter, which may be ``"auto"``).
    n_channels_ : int
        1 or 3.
    n_features_out_ : int
        4K; the output is ordered quadrant-major (top left, top right, bottom left, bottom right) x K.
    inertia_ : float
        The k-means objective per patch.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from classmap_gui.core.features import KMeansFeatures
    >>> images = (load_digits().images * 15).astype(np.uint8)           # (1797, 8, 8) uint8
    >>> fm = KMeansFeatures(patch_size=3, n_centroids=16, n_patches=2000, random_state=0).fit(images[:500])
    >>> fm.centroids_.shape
    (16, 9)
    >>> fm.transform(images[:5]).shape                                  # 4 quadrants x 16 centroids
    (5, 64)
    """

    #: ``{spec type: {"keys": the settings export_spec writes (predict.py requires each), "features": the
    #: numpy code predict.py runs, "check": its check}}`` (read by :mod:`classmap_gui.core.export.predictor`)
    exports = {"kmeans": {"keys": ("patch_size", "stride", "norm_eps", "encoder", "hellinger", "n_channels"),
                       "features": kmeans_features, "check": check_kmeans_spec}}

    _parameter_constraints: dict = {
        "patch_size": [Interval(Integral, 1, 64, closed="both"), StrOptions({AUTO})],
        "stride": [Interval(Integral, 1, 64, closed="both")],
        "n_centroids": [Interval(Integral, 1, 16_384, closed="both"), StrOptions({AUTO})],
        "n_patches": [Interval(Integral, 1, 2_000_000, closed="both"), StrOptions({AUTO})],
        "norm_eps": [Interval(Real, 0, 1e6, closed="both")],
        "whiten_eps": [Interval(Real, 1e-12, 1e6, closed="both"), None],
        "encoder": [StrOptions({"triangle", "hard"})],
        "hellinger": ["boolean"],
        "grey": ["boolean"],
        "kmeans_algorithm": [StrOptions({"lloyd", "minibatch"})],
        "kmeans_batch_size": [Interval(Integral, 1, 1_000_000, closed="both")],
        "kmeans_max_iter": [Interval(Integral, 0, 1000, closed="both")],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }

    def __init__(self, patch_size: int | str = AUTO, stride: int = 1, n_centroids: int | str = AUTO,
                 n_patches: int | str = AUTO,
                 norm_eps: float = 10.0, whiten_eps: float | None = 0.1, encoder: str = "triangle",
                 hellinger: bool = False, grey: bool = False, kmeans_algorithm: str = "lloyd",
                 kmeans_batch_size: int = 4096, kmeans_max_iter: int = 10, n_jobs: int | None = -1, random_state=None):
        self.patch_size = patch_size
        self.stride = stride
        self.n_centroids = n_centroids
        self.n_patches = n_patches
        self.norm_eps = norm_eps
        self.whiten_eps = whiten_eps
        self.encoder = encoder
        self.hellinger = hellinger
        self.grey = grey
        self.kmeans_algorithm = kmeans_algorithm
        self.kmeans_batch_size = kmeans_batch_size
        self.kmeans_max_iter = kmeans_max_iter
        self.n_jobs = n_jobs
        self.random_state = random_state

    # ----------------------------------------------------------------- helpers
    def _check_settings(self) -> None:
        """The parameters one by one (``_parameter_constraints``), then the one rule between two of them."""
        validate_params(self)
        if self.kmeans_algorithm == "minibatch" and self.kmeans_max_iter < 1:
            raise ConfigError(f"KMeansFeatures: kmeans_max_iter must be at least 1 for minibatch (lloyd takes 0: "
                              f"the initial centroids), not {self.kmeans_max_iter!r}")

    def _sizes(self, h: int, w: int) -> tuple[int, int, int]:
        """``(patch_size, n_centroids, n_patches)`` for ``h x w`` images, ``"auto"`` resolved."""
        auto = auto_sizes(h, w)
        return tuple(int(a if v == AUTO else v)
                     for v, a in zip((self.patch_size, self.n_centroids, self.n_patches), auto))

    @property
    def patch_side(self) -> int:
        """The patch side in use: the fitted one (models saved before ``patch_size_`` hold an integer param)."""
        p = self.__dict__.get("patch_size_")
        return int(p if p is not None else self.patch_size)

    def _channels(self, images, fitted_channels: int | None = None, p: int | None = None) -> np.ndarray:
        """uint8 images (n,h,w) or (n,h,w,3) -> (n,h,w,c) with c = 1 (grey) or 3, checked."""
        images = np.asarray(images)
        if images.ndim == 4 and images.shape[3] == 1:
            images = images[..., 0]
        if images.ndim not in (3, 4) or (images.ndim == 4 and images.shape[3] != 3):
            raise DataError(f"KMeansFeatures expects images (n,h,w) or (n,h,w,3), got an array of shape {images.shape}")
        if images.dtype != np.uint8:
            raise DataError(f"KMeansFeatures expects uint8 images, got {images.dtype}; convert with ImageSet or np.uint8")
        p = self.patch_side if p is None else p
        if images.shape[1] < p or images.shape[2] < p:
            raise DataError(f"images of {images.shape[1]}x{images.shape[2]} pixels are smaller than the "
                            f"{p}x{p} patch size; use larger images or a smaller patch_size")
        want = fitted_channels if fitted_channels is not None else (1 if self.grey else (3 if images.ndim == 4 else 1))
        if images.ndim == 4 and want == 1:
            grey = np.dot(images.astype(np.float32), _GREY_WEIGHTS)  # np.dot releases the GIL, @ does not
            images = np.clip(np.rint(grey), 0, 255).astype(np.uint8)
        if images.ndim == 3:
            images = images[..., None]
            if want == 3:  # a grey image for a colour model: the same intensity in every channel
                images = np.repeat(images, 3, axis=3)
        return images

    def _grid(self, h: int, w: int) -> PatchGrid:
        p, s = self.patch_side, self.stride
        return PatchGrid((h - p) // s + 1, (w - p) // s + 1)

    def positions(self, h: int, w: int) -> int:
        """Patch positions (rows of the distance GEMM) per ``h x w`` image."""
        return self._grid(h, w).n_pos

    def _normalise(self, X: np.ndarray) -> np.ndarray:
        """Per-patch brightness/contrast normalisation of float32 rows, in place."""
        return normalise_patches(X, self.norm_eps)

    def _patches(self, imgs: np.ndarray) -> np.ndarray:
        """(B,h,w,c) uint8 -> (B * n_pos, D) float32 normalised, centred and whitened patches."""
        return whitened_patches(imgs, self.patch_side, self.stride, self.mean_, self.whitening_, self.norm_eps)

    def _check_fitted(self) -> None:
        if not hasattr(self, "centroids_"):
            raise NotFittedError("KMeansFeatures is not trained yet: call fit(images) first")

    @property
    def patch_dim_(self) -> int:
        """D, the length of a patch vector: p * p * channels."""
        return self.patch_side * self.patch_side * self.n_channels_

    def validate_state(self) -> None:
        """Shape/dtype checks of loaded state (called by the store after loading a saved model)."""
        self._check_settings()
        if self.n_channels_ not in (1, 3):
            raise ValueError(f"n_channels_ must be 1 or 3, got {self.n_channels_}")
        p = self.__dict__.get("patch_size_")
        if p is not None and not (isinstance(p, int) and p >= 1):
            raise ValueError(f"patch_size_ must be a positive integer, got {p!r}")
        if p is None and self.patch_size == AUTO:
            raise ValueError("patch_size_ is missing")
        d = self.patch_dim_
        k = int(self.n_centroids) if self.n_centroids != AUTO else len(self.centroids_)
        check_array("mean_", self.mean_, dtype=np.float32, shape=(d,))
        check_array("whitening_", self.whitening_, dtype=np.float32, shape=(d, d))
        check_array("centroids_", self.centroids_, dtype=np.float32, shape=(k, d))
        if self.n_features_out_ != 4 * k:
            raise ValueError(f"n_features_out_ must be 4 x n_centroids = {4 * k}, got {self.n_features_out_}")

    # --------------------------------------------------------------------- fit
    def fit(self, X, y=None, *, progress: ProgressFn = None, should_stop: StopFn = None) -> "KMeansFeatures":
        """Learn the whitening and the K centroids from ``n_patches`` random patches of uint8 images ``X``."""
        self._check_settings()
        shape = np.shape(X)
        if len(shape) < 3:
            raise DataError(f"KMeansFeatures expects images (n,h,w) or (n,h,w,3), got an array of shape {shape}")
        p, k, m = self._sizes(shape[1], shape[2])
        imgs = self._channels(X, p=p)
        n, h, w, c = imgs.shape
        rng = check_random_state(self.random_state)
        report(progress, 0.0, "sampling patches")
        idx = rng.randint(n, size=m)
        ii = rng.randint(h - p + 1, size=m)
        jj = rng.randint(w - p + 1, size=m)
        off = np.arange(p)
        P = imgs[idx[:, None, None], ii[:, None, None] + off[None, :, None], jj[:, None, None] + off[None, None, :]]
        P = P.reshape(m, p * p * c).astype(np.float32)
        check_stop(should_stop)
        self._normalise(P)
        report(progress, 0.05, "whitening")
        mean = P.mean(axis=0, dtype=np.float64)
        P -= mean.astype(np.float32)
        if self.whiten_eps is None:
            W = np.eye(P.shape[1])
        else:
            cov = (P.T.astype(np.float64) @ P.astype(np.float64)) / m
            evals, evecs = np.linalg.eigh(cov)
            W = (evecs / np.sqrt(np.maximum(evals, 0) + self.whiten_eps)) @ evecs.T
        W = W.astype(np.float32)
        P = P @ W
        check_stop(should_stop)
        if k > m:
            raise ConfigError(f"KMeansFeatures: n_centroids ({k}) must not exceed n_patches ({m})")
        kp = sub_progress(progress, 0.1, 1.0, "k-means")
        if self.kmeans_algorithm == "lloyd":
            C = lloyd(P, k, self.kmeans_max_iter, rng, kp, should_stop)
        else:
            C = minibatch(P, k, self.kmeans_max_iter, self.kmeans_batch_size, rng, kp, should_stop)
        self.mean_ = mean.astype(np.float32)
        self.whitening_ = W
        self.centroids_ = C
        self.n_channels_ = int(c)
        self.patch_size_ = int(p)
        self.n_features_out_ = 4 * k
        self.inertia_ = float(inertia(P, self.centroids_))
        report(progress, 1.0, "k-means")
        return self

    # --------------------------------------------------------------- transform
    def transform(self, X, *, progress: ProgressFn = None, should_stop: StopFn = None) -> np.ndarray:
        """Encode uint8 images (n,h,w) or (n,h,w,3) as (n, 4K) float32 pooled features."""
        self._check_fitted()
        imgs = self._channels(X, self.n_channels_)
        n, h, w, _ = imgs.shape
        grid = self._grid(h, w)
        C = self.centroids_
        k = C.shape[0]
        ct = np.ascontiguousarray(-2.0 * C.T, dtype=np.float32)
        cc = np.einsum("ij,ij->i", C, C).astype(np.float32)
        out = np.zeros((n, 4, k), dtype=np.float32)
        if n == 0:
            return out.reshape(0, 4 * k)
        per_chunk, block = chunking(grid, k)
        starts = list(range(0, n, per_chunk))
        n_jobs = min(effective_n_jobs(self.n_jobs), len(starts))
        if len(starts) == 1:
            # the live path (one frame, a few images): all its patches in ONE distance GEMM, on one BLAS thread.
            # Blocks of ~80 rows each fanned out to every BLAS thread took 9.5 s per 64x64 frame at K = 1600
            # on two loaded cores (the threads spin-wait on each other 43 times a frame); one GEMM on one
            # thread took 0.2-0.3 s there, the same features
            block = max(block, min(n * grid.n_pos, LIVE_BLOCK_BYTES // (4 * k)))
        stop = threading.Event()
        use_numba = kmeans_kernels.HAVE_NUMBA and getattr(self, "_use_numba", True)

        def task(a: int) -> int:
            if stop.is_set():
                return 0
            b = min(n, a + per_chunk)
            encode_chunk(self._patches(imgs[a:b]), grid, ct, cc, out[a:b], block, self.encoder, use_numba)
            return b - a

        report(progress, 0.0, "encoding")
        done = 0
        with blas_limit(1 if n_jobs > 1 or len(starts) == 1 else None):
            results = Parallel(n_jobs=n_jobs, backend="threading", return_as="generator_unordered")(
                delayed(task)(a) for a in starts)
            try:
                for done_now in results:
                    done += done_now
                    check_stop(should_stop)
                    report(progress, done / n, "encoding")
            except BaseException:
                stop.set()  # queued chunks return at once; joblib's note about dropped tasks is expected
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    results.close()
                raise
        F = out.reshape(n, 4 * k)
        if self.hellinger:
            np.sqrt(F, out=F)
        return F

    def distance_gemm(self, X) -> tuple[list[np.ndarray], np.ndarray, int]:
        """What :meth:`transform` of images ``X`` multiplies, prepared but not multiplied: the whitened
        patches of each parallel chunk, ``-2 C^T`` and the patch rows per distance block (the benchmark's
        ``gemm_ratio``, :func:`.gemm_timing.distance_gemm_seconds`)."""
        self._check_fitted()
        imgs = self._channels(X, self.n_channels_)
        n, h, w, _ = imgs.shape
        k = self.centroids_.shape[0]
        per_chunk, block = chunking(self._grid(h, w), k)
        ct = np.ascontiguousarray(-2.0 * self.centroids_.T, dtype=np.float32)
        return [self._patches(imgs[a:a + per_chunk]) for a in range(0, n, per_chunk)], ct, block

    def export_spec(self, arrays: dict, prefix: str = "features") -> dict:
        """Settings for the exported ``predict.py`` (:mod:`classmap_gui.core.export.folder`); its arrays go into
        ``arrays`` under ``prefix``."""
        arrays[f"{prefix}.mean"] = np.asarray(self.mean_, np.float32)
        arrays[f"{prefix}.whitening"] = np.asarray(self.whitening_, np.float32)
        arrays[f"{prefix}.centroids"] = np.asarray(self.centroids_, np.float32)
        return {"type": "kmeans", "patch_size": int(self.patch_side), "stride": int(self.stride),
                "norm_eps": float(self.norm_eps), "encoder": str(self.encoder), "hellinger": bool(self.hellinger),
                "n_channels": int(self.n_channels_)}

    @staticmethod
    def memory_plan(params: dict, n_images: int, image_shape: tuple[int, ...]) -> MemoryPlan:
        """What training will hold (:class:`~classmap_gui.core.guards.limits.MemoryPlan`), from the parameters as given
        (``"auto"`` planned at its largest) and one image's shape."""
        ps = planned_size(params, "patch_size", 6)
        n_patches = planned_size(params, "n_patches", 200_000)
        dim = ps * ps * (1 if params.get("grey") or len(image_shape) == 2 else image_shape[2])
        k = planned_size(params, "n_centroids", 1600)
        return MemoryPlan(width=4 * k, own_floats=k * ps * ps * 3 * 2, budgets=(
            ("--set n_patches", 3 * n_patches * dim * 4, f"{n_patches} patches of {dim} values"),
            ("--set n_centroids", n_images * 4 * k * 4, f"{n_images} feature vectors of {4 * k} values")))
